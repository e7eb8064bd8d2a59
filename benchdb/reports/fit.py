"""Markdown that fits a terminal: tables and prose within its width (:func:`terminal_width`:
``COLUMNS``, else the terminal's, else WIDTH; ``--wide`` skips this).

A table too wide for the terminal with one row is shown as a list, one line per column, wrapped,
nothing cut. Otherwise it first loses the columns whose value is the same in every row (named once
above it: "All rows: hardware AMD EPYC; precision fp32."), then the explanatory columns a reader
needs least (LOW_VALUE: p, n, interval bounds, commit; named below it). The columns that tell two
rows apart (model, batch, input, best, figure, verdict, runner-up) are never dropped. Only prose (a
"why") is ever cut, and not below PROSE_MIN characters; prose that still does not fit moves below the
table, grouped: each distinct text once, with how many rows (and which) it holds for. Identifiers and
numbers are never cut: a table whose kept columns cannot fit becomes a list, one wrapped entry per
row, every kept cell whole. Prose is wrapped. The result is still valid Markdown; ``--wide`` keeps
every column whole.
"""

from __future__ import annotations

import re
import shutil
import textwrap

#: The width when neither COLUMNS nor a terminal says (output to a pipe or a file).
WIDTH = 120
#: The narrowest width honoured: below it, tables would be lists of one word a line.
NARROWEST = 40
#: The narrowest a cut column gets: enough to recognise a value.
MIN_CELL = 8
_SPLIT = re.compile(r"(?<!\\)\|")
#: Columns of prose: the only cells ever cut (never below PROSE_MIN); where even that does not fit,
#: the column moves below the table, one wrapped line per row. Every other cell (an identifier a
#: reader copies into the next command, a number) is shown whole.
PROSE = frozenset({"why", "most common error", "note", "error", "validity", "detail"})
PROSE_MIN = 24
#: Columns dropped, in this order, before any cell is cut.
LOW_VALUE = (
    "most common error",
    "p",
    "n",
    "latency CI low",
    "latency CI high",
    "CI low",
    "CI high",
    "commit",
    "95% CI",
)


def terminal_width() -> int:
    """The width to fit: ``COLUMNS`` where set, else the terminal's, else :data:`WIDTH`."""
    return max(NARROWEST, shutil.get_terminal_size(fallback=(WIDTH, 24)).columns)


def _cells(line: str) -> list[str]:
    parts = _SPLIT.split(line.strip())
    return [p.strip() for p in parts[1:-1]]


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def _cut(text: str, n: int) -> str:
    if len(text) <= n:
        return text
    cut = text[: n - 1].rstrip()
    if cut.endswith("\\"):  # never leave a dangling escape of a pipe
        cut = cut[:-1]
    return cut + "…"


def _one_row(header: list[str], row: list[str], width: int) -> list[str]:
    """One row as a list: one wrapped line per column, nothing cut."""
    out: list[str] = []
    for h, c in zip(header, row, strict=True):
        if c:
            out += textwrap.wrap(
                f"- {h}: {c}", width, subsequent_indent="  ", break_long_words=False, break_on_hyphens=False
            ) or [f"- {h}: {c}"]
    return out


def _columns_kept(header: list[str], body: list[list[str]], width: int) -> tuple[list[int], list[str], list[str]]:
    """The columns a table keeps, the constant ones named once ('hardware AMD EPYC') and the
    low-value ones dropped so that nothing needs cutting."""
    keep = list(range(len(header)))
    constant = [i for i in keep if len({r[i] for r in body}) == 1] if len(body) >= 2 else []
    shown: list[str] = []
    if constant and len(constant) < len(header):
        shown = [f"{header[i]} {body[0][i]}" for i in constant if body[0][i]]
        keep = [i for i in keep if i not in constant]

    def total_of(cols: list[int]) -> int:
        return sum(max([len(header[i])] + [len(r[i]) for r in body]) for i in cols) + 3 * len(cols) + 1

    dropped = []
    for name in LOW_VALUE:  # the columns a reader needs least go before any cell is cut
        if total_of(keep) <= width:
            break
        gone = [i for i in keep if header[i] == name]
        if gone and len(keep) > len(gone):
            keep = [i for i in keep if i not in gone]
            dropped.append(name)
    return keep, shown, dropped


def _widths(header: list[str], body: list[list[str]], width: int) -> list[int]:
    """Each column's width: only prose columns are cut, the widest first, to PROSE_MIN at least."""
    widths = [max([len(header[i])] + [len(r[i]) for r in body]) for i in range(len(header))]
    cuttable = [k for k, h in enumerate(header) if h in PROSE]
    while sum(widths) + 3 * len(widths) + 1 > width and cuttable:  # "| " + " | " ... + " |"
        i = max(cuttable, key=lambda k: widths[k])
        if widths[i] <= PROSE_MIN:
            break
        widths[i] -= 1
    return widths


def _below(header: list[str], body: list[list[str]], prose: list[int], width: int) -> list[str]:
    """Prose columns that do not fit beside the others, one wrapped line per row, named by as many
    of the row's first cells as tell the rows apart."""
    keys = [k for k in range(len(header)) if k not in prose]
    n = next(
        (n for n in range(1, len(keys) + 1) if len({tuple(r[k] for k in keys[:n]) for r in body}) == len(body)),
        len(keys),
    )
    out: list[str] = []
    for i in prose:
        groups: dict[str, list[str]] = {}
        for r in body:
            if r[i]:
                groups.setdefault(r[i], []).append(" ".join(r[k] for k in keys[:n] if r[k]))
        if not groups:
            continue
        out += ["", f"{header[i].capitalize()}, grouped ({len(groups)} distinct of {len(body)} rows):"]
        for text, names in groups.items():
            rows = "all rows" if len(names) == len(body) else f"{len(names)} row{'s' if len(names) > 1 else ''}"
            line = f"- {text} ({rows}" + ("" if len(names) == len(body) else ": " + "; ".join(names)) + ")"
            out += textwrap.wrap(line, width, subsequent_indent="  ", break_long_words=False, break_on_hyphens=False)
    return out


def _as_list(header: list[str], body: list[list[str]], width: int) -> list[str]:
    """Rows whose kept columns cannot fit side by side: one wrapped entry per row, every cell whole."""
    out: list[str] = []
    for r in body:
        line = "- " + "; ".join(f"{h} {c}" for h, c in zip(header, r, strict=True) if c)
        out += textwrap.wrap(line, width, subsequent_indent="  ", break_long_words=False, break_on_hyphens=False)
    return out


def _fit_table(lines: list[str], width: int) -> list[str]:
    if max(len(ln) for ln in lines) <= width or len(lines) < 3:
        return lines
    header, body = _cells(lines[0]), [_cells(ln) for ln in lines[2:]]
    if any(len(r) != len(header) for r in body):
        return lines
    if len(body) == 1:
        return _one_row(header, body[0], width)
    keep, shown, dropped = _columns_kept(header, body, width)
    whole = (header, body)
    header = [header[i] for i in keep]
    body = [[r[i] for i in keep] for r in body]
    widths = _widths(header, body, width)
    moved: list[str] = []
    if sum(widths) + 3 * len(widths) + 1 > width:  # prose that cannot fit goes below the table
        prose = [i for i, h in enumerate(header) if h in PROSE]
        if prose and len(prose) < len(header):
            moved = _below(header, body, prose, width)
            header = [h for i, h in enumerate(header) if i not in prose]
            body = [[c for i, c in enumerate(r) if i not in prose] for r in body]
            widths = _widths(header, body, width)
    cut = any(len(c) > widths[i] for r in [header] + body for i, c in enumerate(r))
    out = []
    if shown:
        out += textwrap.wrap("All rows: " + "; ".join(shown) + ".", width) + [""]
    listed = sum(widths) + 3 * len(widths) + 1 > width  # the key columns alone are too wide: a list
    if listed:  # an entry has room for every column the table dropped (prose stays below, grouped)
        full, rows = whole
        cols = [i for i, h in enumerate(full) if h in header or (h in dropped and h not in PROSE)]
        out += _as_list([full[i] for i in cols], [[r[i] for i in cols] for r in rows], width)
        cut, dropped = False, []
    else:
        out.append(_row([_cut(c, widths[i]) for i, c in enumerate(header)]))
        out.append("|" + "|".join(" --- " for _ in header) + "|")
        out += [_row([_cut(c, widths[i]) for i, c in enumerate(r)]) for r in body]
    what = (
        (["one entry per row"] if listed else [])
        + (["not shown: " + ", ".join(dropped)] if dropped else [])
        + (["cells cut (…)"] if cut else [])
    )
    if what:
        why = f"_To fit the terminal, {'; '.join(what)}: `--wide` shows every column whole._"
        out += [""] + textwrap.wrap(why, width)
    return out + moved


def _wrap(line: str, width: int) -> list[str]:
    if len(line) <= width or line.startswith(("#", "    ", "```")):
        return [line]
    m = re.match(r"^(> |- |\d+\. )?", line)
    lead = m.group(1) or "" if m else ""
    rest = "> " if lead == "> " else " " * len(lead)
    return textwrap.wrap(
        line[len(lead) :],
        width,
        initial_indent=lead,
        subsequent_indent=rest,
        break_long_words=False,
        break_on_hyphens=False,
    ) or [line]


#: A number and its unit kept on one line when wrapping ("85 %", "95 % CI"): a private-use placeholder that
#: textwrap does not break at (it breaks at ASCII whitespace only), put back afterwards.
_GLUE = re.compile(r"(?<=\d) (?=%)")


def fit(text: str, width: int = WIDTH) -> str:
    """``text`` (Markdown) with every table and paragraph within ``width`` columns where it can be."""
    lines = _GLUE.sub("\ue000", text).splitlines()
    out: list[str] = []
    i = 0
    while i < len(lines):
        if lines[i].startswith("|"):
            j = i
            while j < len(lines) and lines[j].startswith("|"):
                j += 1
            out += _fit_table(lines[i:j], width)
            i = j
            continue
        out += _wrap(lines[i], width)
        i += 1
    return "\n".join(out).replace("\ue000", " ") + ("\n" if text.endswith("\n") else "")

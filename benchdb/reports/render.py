"""Render a Report as Markdown, self-contained HTML (sortable tables, inline SVG plots), JSON or CSV."""

from __future__ import annotations

import json
import math
import re
from datetime import date, datetime
from typing import TYPE_CHECKING, Any

from benchdb import formatting
from benchdb.errors import BenchdbError, printable
from benchdb.reports.document import Report, Section
from benchdb.reports.tabular import render as render_rows
from benchdb.text import prose

if TYPE_CHECKING:  # Jinja is imported when a template renders: JSON, CSV and errors never load it
    import jinja2

#: The forms a report document is written in (`benchdb report --format`).
REPORT_FORMATS = ("md", "html", "json", "csv")


def fmt_value(v: Any, kind: str, scale: formatting.Scale | None = None) -> str:
    """One cell: in its column's ``scale`` (:func:`column_scales`) where given, else on its own."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    number = isinstance(v, (int, float)) and not isinstance(v, bool)
    if number and scale is None:
        scale = formatting.scale(kind, [v])
    if number and scale is not None:
        return scale(v)
    if kind == "int":
        return f"{int(v)}"
    if kind == "sci":
        return f"{v:.3g}"
    if kind == "result":
        return str(v)[:12]
    if isinstance(v, datetime):
        return formatting.timestamp(v)
    if isinstance(v, (list, tuple)):
        return prose(", ".join(map(str, v)))
    if isinstance(v, str) and len(v) == 40 and all(c in "0123456789abcdef" for c in v):
        return v[:10]  # a git commit
    return prose(str(v))


def column_scales(rows: list[dict], columns: list[Any]) -> dict[str, formatting.Scale | None]:
    """Per column key, the one unit and number of decimals its whole column is shown in."""
    return {c.key: formatting.scale(c.fmt, (r.get(c.key) for r in rows)) for c in columns}


#: Recorded method names as a reader says them.
WORDS = {
    "order_statistics": "distribution-free (order statistics)",
    "host_clock": "host clock",
    "cuda_events": "CUDA events",
    "hierarchical_bootstrap": "bootstrap across processes",
    "bootstrap": "bootstrap",
}


def in_words(v: Any) -> str:
    """A recorded method name (``order_statistics``, ``host_clock``) in words."""
    return "" if v is None else WORDS.get(str(v), str(v).replace("_", " "))


def sort_key(v: Any) -> str:
    """A machine-sortable value for HTML tables (numbers sort as numbers)."""
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return repr(float(v)) if not math.isnan(v) else ""
    return "" if v is None else str(v)


#: What a Markdown renderer would read as HTML: a tag's start (<b, </b, <!--, <?) or an entity (&lt;,
#: &#60;). Only these are escaped, so a .md file or a GitHub summary never runs a hostile name as
#: markup, while plain text (``9 < min_iters 10``, ``a & b``) stays as written in a terminal.
_MARKUP = re.compile(r"<(?=[A-Za-z/!?])|&(?=#?\w+;)")


def _md_cell(text: str) -> str:
    """A table cell as Markdown: one line, a pipe escaped, and only what would start HTML markup as an
    entity (nothing else: the terminal shows it as plain text)."""
    text = _MARKUP.sub(lambda m: "&lt;" if m.group(0) == "<" else "&amp;", str(text))
    return text.replace("|", "\\|").replace("\n", " ")


def _bytecode_cache() -> jinja2.BytecodeCache | None:
    """Compiled templates kept between commands (the per-user temp folder Jinja checks is safe;
    keyed by template source and Python version): compiling a template took a third of a
    command's run time."""
    import jinja2

    try:
        return jinja2.FileSystemBytecodeCache()
    except (OSError, RuntimeError):
        return None


def environment(autoescape: bool) -> jinja2.Environment:
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("benchdb.reports", "templates"),
        autoescape=autoescape,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
        bytecode_cache=_bytecode_cache(),
    )
    env.filters["fmt"] = fmt_value
    env.filters["md"] = _md_cell
    env.filters["sortkey"] = sort_key
    env.filters["code"] = code_spans
    env.filters["wbr"] = breakable
    env.globals["column_scales"] = column_scales
    env.globals["scale_of"] = formatting.scale
    env.filters["words"] = in_words
    env.filters["prose"] = prose
    return env


def breakable(text: Any) -> Any:
    """HTML of an identifier that may wrap after its separators (``scenario=Offline,mode=...``,
    ``GB300/Offline/fp4``) where a table must fit the page: escaped, a <wbr> after each , / ="""
    from markupsafe import Markup, escape

    out = escape(str(text))
    for sep in (",", "/", "="):
        out = out.replace(sep, Markup(sep + "<wbr>"))
    return out


def code_spans(text: str) -> Any:
    """HTML of prose written with Markdown `code` spans: escaped, the spans as <code>, no backticks."""
    from markupsafe import Markup, escape

    parts = str(text).split("`")
    if len(parts) % 2 == 0:  # an unpaired backtick: plain text
        return escape(text)
    return Markup("").join(Markup("<code>{}</code>").format(p) if i % 2 else escape(p) for i, p in enumerate(parts))


def markdown(report: Report, wide: bool = False, width: int | None = None) -> str:
    """The report as Markdown; unless ``wide``, its tables keep their compact columns and every line
    fits the terminal (``width``, else the terminal's: :mod:`benchdb.reports.fit`)."""
    text = environment(autoescape=False).get_template("report.md.j2").render(report=report, wide=wide)
    text = printable("\n".join(line.rstrip() for line in text.rstrip().splitlines()) + "\n")
    if wide:
        return text
    from benchdb.reports.fit import fit, terminal_width

    return fit(text, width or terminal_width())


def html(report: Report, plots: bool = True) -> str:
    from markupsafe import Markup

    if plots:
        from benchdb.reports import plots as plotting

        notes = plotting.attach(report)
    else:
        notes = []
    return (
        environment(autoescape=True)
        .get_template("report.html.j2")
        .render(
            report=report,
            plot_notes=notes,
            svg=lambda s: Markup(s),
            drill_ids={r["result_id"] for r in report.drilldown},
        )
    )


def _json_default(v: Any) -> Any:
    if isinstance(v, (datetime, date)):
        return v.isoformat()
    return str(v)


def as_json(report: Report) -> str:
    if len(report.sections) == 1:
        s = report.sections[0]
        return json.dumps([{k: r[k] for k in s.keys} for r in s.rows], default=_json_default, indent=1)
    return json.dumps(
        {s.name: [{k: r[k] for k in s.keys} for r in s.rows] for s in report.sections}, default=_json_default, indent=1
    )


def as_csv(report: Report) -> str:
    if len(report.sections) != 1:
        raise BenchdbError("CSV holds one table: choose one report (e.g. --matrix), or use --format json")
    s: Section = report.sections[0]
    return render_rows(s.keys, [[r[k] for k in s.keys] for r in s.rows], "csv") + "\n"


def fmt_quantity(v: float | None, unit: str | None, *others: float | None, ref: float | None = None) -> str:
    """A measured value with its unit (s, bytes, items/s, ...) in the scale it shares with ``others``
    (and ``ref``: another value of its row)."""
    return formatting.quantity(v, unit, *others, *(() if ref is None else (ref,)))


def check_context(result) -> dict:
    from benchdb.analysis.gate import EXIT_MEANING, FAILING, VERDICTS

    # the baseline and candidate columns share one unit per measured unit, with the decimals that
    # tell every two different medians apart (both sides of a +1.2 % change differ in print)
    by_unit: dict[str | None, list[float | None]] = {}
    for c in result.comparisons:
        by_unit.setdefault(c.unit, []).extend((c.base_median, c.cand_median))
    fmt = {u: formatting.quantities(values, u) for u, values in by_unit.items()}

    def median(c, side: str) -> str:
        v, status = (c.base_median, c.base_status) if side == "base" else (c.cand_median, c.cand_status)
        if status not in (None, "ok"):
            return status
        return fmt[c.unit](v)

    return {
        "r": result,
        "verdicts": VERDICTS,
        "failing": FAILING,
        "exit_meaning": EXIT_MEANING,
        "median": median,
        "run_line": _run_line,
    }


def _run_line(side) -> str:
    """What one selector picked: series per hardware/backend and the runs behind them."""
    groups = ", ".join(f"{g['label']}/{g['backend']}: {g['results']}" for g in side.by_hardware_backend())
    runs = side.runs()
    shown = []
    for run in runs[:5]:
        bits = [fmt_value(run["started_at"], "")]
        if run["git_commit"]:
            bits.append(f"commit {run['git_commit'][:10]}")
        if run["host"]:
            bits.append(str(run["host"]))
        shown.append(f"{run['run_id']} ({', '.join(bits)})")
    more = f" and {len(runs) - 5} more" if len(runs) > 5 else ""
    return f"{len(side.results)} series ({groups}) from {len(runs)} run(s): {'; '.join(shown)}{more}"


def check_markdown(result, wide: bool = False, width: int | None = None) -> str:
    """The verdicts as Markdown; unless ``wide``, every line fits the terminal (``width``, else the
    terminal's)."""
    text = environment(autoescape=False).get_template("check.md.j2").render(**check_context(result), wide=wide)
    lines = [line.rstrip() for line in text.strip().splitlines()]
    # one blank line at most
    text = printable("\n".join(ln for i, ln in enumerate(lines) if ln or lines[i - 1]) + "\n")
    if wide:
        return text
    from benchdb.reports.fit import fit, terminal_width

    return fit(text, width or terminal_width())


def _side_json(side) -> dict:
    return {
        "selector": side.selector,
        "series": len(side.results),
        "runs": side.runs(),
        "by_hardware_backend": side.by_hardware_backend(),
    }


def check_json(result) -> str:
    from dataclasses import asdict

    from benchdb.analysis.gate import EXIT_MEANING, FAILING, VERDICTS

    body = {
        "baseline": result.baseline,
        "candidate": result.candidate,
        "metric": result.metric,
        "threshold": result.threshold,
        "outcome": result.outcome,
        "undecided": result.undecided,
        "allow_inconclusive": result.allow_inconclusive,
        "exit_code": result.exit_code,
        "exit_meaning": result.exit_meaning,
        "exit_codes": {str(k): v for k, v in EXIT_MEANING.items()},
        "failed": result.failed,
        "regressed": result.regressed,
        "verdicts": list(VERDICTS),
        "failing_verdicts": list(FAILING),
        "counts": result.counts(),
        "sides": {
            "baseline": _side_json(result.base_side) if result.base_side else None,
            "candidate": _side_json(result.cand_side) if result.cand_side else None,
        },
        "comparisons": [{**asdict(c), "failing": c.failing} for c in result.comparisons],
        "only_baseline": result.only_baseline,
        "only_candidate": result.only_candidate,
    }
    return json.dumps(body, default=_json_default, indent=1) + "\n"


def check_error_json(baseline: str, candidate: str, metric: str, error: str, exit_code: int) -> str:
    """What `check --format json` prints when there is nothing to compare (or another user error)."""
    from benchdb.analysis.gate import EXIT_MEANING

    body = {
        "baseline": baseline,
        "candidate": candidate,
        "metric": metric,
        "outcome": "error",
        "exit_code": exit_code,
        "exit_meaning": EXIT_MEANING.get(exit_code, "error"),
        "error": error,
    }
    return json.dumps(body, indent=1) + "\n"


def check_error_markdown(baseline: str, candidate: str, error: str, exit_code: int) -> str:
    return (
        f"# benchdb check: ERROR (exit {exit_code})\n\n`{_md_cell(candidate)}` against "
        f"`{_md_cell(baseline)}`: {_md_cell(error)}\n"
    )


def render(report: Report, fmt: str, wide: bool = False) -> str:
    if fmt == "md":
        return markdown(report, wide)
    if fmt == "html":
        return html(report)
    if fmt == "json":
        return as_json(report) + "\n"
    if fmt == "csv":
        return as_csv(report)
    raise BenchdbError(f"--format {fmt!r} is not one of {', '.join(REPORT_FORMATS)}")

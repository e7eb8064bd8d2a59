"""A bisect's answer, in the forms `benchdb bisect --format` writes: for a terminal, as Markdown and as
JSON, and each step as one line."""

from __future__ import annotations

import json
import shlex


def _pct(x) -> str:
    return "n/a" if x is None else f"{x:+.1%}"


def step_line(s) -> str:
    """One step of a bisect: the commits compared, the verdict and the change with its interval."""
    ci = f" [{_pct(s.ci_low)}, {_pct(s.ci_high)}]" if s.ci_low is not None else ""
    note = f"; {s.note}" if s.note else ""
    return f"step {s.number}: {s.tested.short} against {s.base.short}: {s.verdict} {_pct(s.change)}{ci}{note}"


def text(r) -> str:
    """The answer for a terminal: every step, what was skipped, the culprit and how to reproduce it."""
    lines = [f"bisect {r.bisect_id} of {r.repo}: {r.good.short}..{r.bad.short}"]
    lines += [step_line(s) for s in r.steps]
    for c, why in r.skipped:
        lines.append(f"skipped {c.short} {c.subject}: {why}")
    lines.append(r.message)
    if r.culprit:
        lines.append(f"culprit: {r.culprit.sha} {r.culprit.subject} ({r.culprit.date})")
    if r.reproduce:
        lines.append(f"reproduce: {r.reproduce}")
    lines.append(f"measurements: benchdb ingest {shlex.quote(r.out)} (tag bisect-{r.bisect_id})")
    return "\n".join(lines)


def markdown(r) -> str:
    """The answer as Markdown (a pull request comment, a GitHub job summary)."""
    head = {
        "culprit": f"First slow commit: `{r.culprit.short}` {r.culprit.subject}" if r.culprit else "",
        "no_regression": "No regression between the good and the bad commit",
        "stopped": "Bisect stopped",
    }[r.status]
    out = [
        f"### benchdb bisect {r.bisect_id}: {head}",
        "",
        r.message,
        "",
        "| step | tested | against | verdict | change | 95 % CI | note |",
        "|---|---|---|---|---|---|---|",
    ]
    for s in r.steps:
        ci = f"[{_pct(s.ci_low)}, {_pct(s.ci_high)}]" if s.ci_low is not None else ""
        out.append(
            f"| {s.number} | `{s.tested.short}` {s.tested.subject} | `{s.base.short}` | {s.verdict} | "
            f"{_pct(s.change)} | {ci} | {s.note.replace('|', '/')} |"
        )
    if r.skipped:
        out += ["", "Skipped: " + "; ".join(f"`{c.short}` ({why})" for c, why in r.skipped)]
    if r.reproduce:
        out += ["", "Reproduce the final comparison:", "", f"```\n{r.reproduce}\n```"]
    return "\n".join(out)


def as_json(r) -> str:
    """The answer as JSON (:meth:`benchdb.bisect.search.Bisection.as_dict`)."""
    return json.dumps(r.as_dict(), indent=2)

"""Render a Report as Markdown, self-contained HTML (sortable tables, inline SVG plots), JSON or CSV."""

from __future__ import annotations

import json
import math
from datetime import date, datetime
from typing import Any

import jinja2
from markupsafe import Markup

from benchdb.errors import BenchdbError
from benchdb.reports.build import Report, Section
from benchdb.reports.tabular import render as render_rows

FORMATS = ("md", "html", "json", "csv")


def fmt_value(v: Any, kind: str) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    if kind == "ms":
        return f"{v * 1e3:.3f} ms" if v < 10 else f"{v:.3f} s"
    if kind == "num":
        return f"{v:,.1f}" if abs(v) >= 100 else f"{v:.3g}"
    if kind == "pct":
        return f"{v * 100:+.1f}%"
    if kind == "ratio":
        return f"{v:.2f}"
    if kind == "mib":
        return f"{v / 2**20:,.1f} MiB"
    if kind == "int":
        return f"{int(v)}"
    if kind == "sci":
        return f"{v:.3g}"
    if isinstance(v, datetime):
        return v.strftime("%Y-%m-%d %H:%M")
    if isinstance(v, (list, tuple)):
        return ", ".join(map(str, v))
    if isinstance(v, str) and len(v) == 40 and all(c in "0123456789abcdef" for c in v):
        return v[:10]         # a git commit
    return str(v)


def sort_key(v: Any) -> str:
    """A machine-sortable value for HTML tables (numbers sort as numbers)."""
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return repr(float(v)) if not math.isnan(v) else ""
    return "" if v is None else str(v)


def _md_cell(text: str) -> str:
    """Escape a table cell for Markdown that GitHub also renders as HTML."""
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace("|", "\\|").replace("\n", " "))


def _env(autoescape: bool) -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.PackageLoader("benchdb.reports", "templates"),
                             autoescape=autoescape, trim_blocks=True, lstrip_blocks=True,
                             undefined=jinja2.StrictUndefined)
    env.filters["fmt"] = fmt_value
    env.filters["md"] = _md_cell
    env.filters["sortkey"] = sort_key
    return env


def markdown(report: Report) -> str:
    text = _env(autoescape=False).get_template("report.md.j2").render(report=report)
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines()) + "\n"


def html(report: Report, plots: bool = True) -> str:
    if plots:
        from benchdb.reports import plots as plotting

        notes = plotting.attach(report)
    else:
        notes = []
    return _env(autoescape=True).get_template("report.html.j2").render(
        report=report, plot_notes=notes, svg=lambda s: Markup(s))


def _json_default(v: Any) -> Any:
    if isinstance(v, (datetime, date)):
        return v.isoformat()
    return str(v)


def as_json(report: Report) -> str:
    if len(report.sections) == 1:
        s = report.sections[0]
        return json.dumps([{k: r[k] for k in s.keys} for r in s.rows], default=_json_default, indent=1)
    return json.dumps({s.name: [{k: r[k] for k in s.keys} for r in s.rows] for s in report.sections},
                      default=_json_default, indent=1)


def as_csv(report: Report) -> str:
    if len(report.sections) != 1:
        raise BenchdbError("CSV holds one table: choose one report (e.g. --matrix), or use --format json")
    s: Section = report.sections[0]
    return render_rows(s.keys, [[r[k] for k in s.keys] for r in s.rows], "csv") + "\n"


def check_markdown(result) -> str:
    text = _env(autoescape=False).get_template("check.md.j2").render(r=result)
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines()) + "\n"


def check_json(result) -> str:
    from dataclasses import asdict

    body = {"baseline": result.baseline, "candidate": result.candidate, "metric": result.metric,
            "threshold": result.threshold, "regressed": result.regressed,
            "counts": {v: result.count(v) for v in ("regressed", "improved", "unchanged", "inconclusive")},
            "comparisons": [asdict(c) for c in result.comparisons],
            "only_baseline": result.only_baseline, "only_candidate": result.only_candidate}
    return json.dumps(body, default=_json_default, indent=1) + "\n"


def render(report: Report, fmt: str) -> str:
    if fmt == "md":
        return markdown(report)
    if fmt == "html":
        return html(report)
    if fmt == "json":
        return as_json(report) + "\n"
    if fmt == "csv":
        return as_csv(report)
    raise BenchdbError(f"--format {fmt!r} is not one of {', '.join(FORMATS)}")

"""Reports: the queries behind each section, under the user's filters and constraints.

A report is a list of sections (:mod:`benchdb.reports.document`); each section holds the rows of one
query over the documented views (the same columns for JSON/CSV) plus the columns a person reads in
Markdown/HTML. The optimal-hardware section is :mod:`benchdb.reports.optimal`, the serving ones
:mod:`benchdb.reports.serving_sections`, the others :mod:`benchdb.reports.sections`, the drill-down
:mod:`benchdb.reports.drilldown`; which sections a report holds and what it leaves out are here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from benchdb import sql
from benchdb.reports.document import Filters, NothingToReport, Report, Section, generated_now, one_row, section_rows
from benchdb.reports.drilldown import drilldown, environment_row, traced_ids
from benchdb.reports.optimal import optimal_section
from benchdb.reports.sections import (
    batch_scaling,
    matrix,
    memory,
    regressions,
    sources,
    speed_accuracy,
    speedup,
    trends,
)
from benchdb.reports.serving_sections import sections as serving_sections
from benchdb.text import plural

if TYPE_CHECKING:
    import duckdb


BUILDERS: dict[str, Callable[[Any, Filters], Section | list[Section]]] = {
    "speed-accuracy": speed_accuracy,
    "optimal-hardware": optimal_section,
    "matrix": matrix,
    "speedup": speedup,
    "batch-scaling": batch_scaling,
    "trends": trends,
    "memory": memory,
    "regressions": regressions,
    "serving": serving_sections,
    "sources": sources,
}
ALL = ("optimal-hardware", "matrix", "speedup", "speed-accuracy", "batch-scaling", "memory", "trends", "regressions")


def build(
    con: duckdb.DuckDBPyConnection,
    db: str,
    kinds: list[str],
    filters: Filters,
    *,
    allow_empty: bool = False,
    detail: bool = False,
) -> Report:
    """The report of ``kinds`` under ``filters``. Every section empty is an error (NothingToReport,
    saying why) unless ``allow_empty`` (the quickstart: its report's banner and sections say why)."""
    summary = sql.rows(con.execute(sql.load("reports/summary.sql")))[0]
    if summary["results"] == 0:
        raise NothingToReport(
            f"nothing to report: {db} holds no results yet; load some with `benchdb ingest RESULTS_DIR`"
        )
    sections: list[Section] = []
    for k in kinds:  # a kind gives one section, or several (--serving: points, frontier, SLO)
        got = optimal_section(con, filters, detail) if k == "optimal-hardware" else BUILDERS[k](con, filters)
        sections += got if isinstance(got, list) else [got]
    from benchdb.reports.banner import busy_banner

    banner = busy_banner(con, filters)
    if not allow_empty and not any(s.rows or s.answered for s in sections):
        why = _why_empty(con, db, filters, sections)
        raise NothingToReport(f"nothing to report: {why}" + (f". {banner.text}" if banner else ""))
    summary["headline"] = headline(summary)
    rep = Report(db, generated_now(), summary, filters.describe(), sections, banner)
    _left_out(con, filters, rep)
    if detail:  # HTML: the environment block and the drill-down (kept off the Markdown/JSON path's time)
        rep.environment = [environment_row(r) for r in section_rows(con, "environment", filters.params())[1]]
        rep.drilldown = drilldown(con, traced_ids(rep))
    return rep


def headline(s: dict[str, Any]) -> str:
    """What the warehouse holds, counted once: the latest timing results (one per series: what the
    sections, the busy-machine notice and the left-out note count) out of every result in every run."""
    extra = [
        plural(s[k], what)
        for k, what in (("verification_results", "verification check"), ("published_results", "published figure"))
        if s.get(k)
    ]
    return (
        f"{plural(s['latest_results'], 'latest timing result')} (one per series; {s['latest_valid']} valid) "
        f"of {plural(s['models'], 'model')} on {s['hardware']} hardware, from {plural(s['results'], 'result')} "
        f"in {plural(s['runs'], 'run')}" + (f" ({', '.join(extra)})" if extra else "")
    )


#: Sections whose rows come from the latest valid timing results: they say what they left out.
_RANKED = ("optimal_hardware", "speedup", "speed_accuracy", "batch_scaling", "memory", "trends")
#: Invalid results listed (flagged) under "Measured but left out".
MEASURED_ROWS = 50


def _left_out(con, f: Filters, rep: Report) -> None:
    """Each ranked section says how many latest timing attempts it left out and why; results that ran
    but are invalid are kept, flagged, in ``rep.measured_invalid`` (an all-invalid warehouse still
    shows what it measured)."""
    total = one_row(con, "excluded_total", f.params())
    if not total["left_out"]:
        return
    rep.excluded = section_rows(con, "excluded", f.params())[1]
    rep.measured_invalid = section_rows(con, "measured_invalid", {**f.params(), "limit": MEASURED_ROWS})[1]
    why = ", ".join(f"{r['results']} {r['reason']}" for r in rep.excluded)
    verb = "is" if total["left_out"] == 1 else "are"
    latest = rep.summary.get("latest_results")
    of = f" of {latest}" if latest is not None and f.describe() == "" else ""
    note = (
        f"Left out: {total['left_out']}{of} latest timing result{'' if total['left_out'] == 1 else 's'} "
        f"that {verb} not a valid timing ({why})"
    )
    if total["measured"]:
        m = total["measured"]
        ran = "the one that ran is" if m == 1 else f"the {m} that ran are"
        note += f'; {ran} listed, flagged, under "Measured but left out"'
    for s in rep.sections:
        if s.name not in _RANKED:
            continue
        s.notes.append(note + ".")
        if not s.rows and total["measured"] and not s.answered:
            s.empty = (
                f"No valid timing result for this section: {plural(total['measured'], 'result')} ran but "
                f'{"is" if total["measured"] == 1 else "are"} invalid ({why}); see "Measured but left out".'
            )


def _why_empty(con, db: str, f: Filters, sections: list[Section]) -> str:
    """One line on why every section is empty: nothing matches, nothing is a valid timing (and what
    there is instead), or each section's own reason."""
    see = '; see `benchdb query "SELECT model_id, metric, status, validity, validity_reasons FROM results"`'
    scope = one_row(con, "scope", f.params())
    matched = f.params()["models"] or f.params()["hardware"]
    if not scope["results"]:
        return f"no results match {f.describe()}{see}"
    if not scope["valid_timing"]:
        parts = []
        if scope["verification"]:
            parts.append(
                plural(scope["verification"], "verification check") + " (not timings: see the `verification` view)"
            )
        if scope["published"]:
            parts.append(
                plural(scope["published"], "published figure")
                + " (summary-only: see `--optimal-hardware --per system` and the `system_results` view)"
            )
        if scope["invalid_timing"]:
            parts.append(plural(scope["invalid_timing"], "invalid timing result"))
        if scope["not_ok"]:
            parts.append(plural(scope["not_ok"], "result") + " that did not run (status not ok)")
        where = f"matching {f.describe()}" if matched else f"in {db}"
        return f"no valid timing result {where}: {plural(scope['results'], 'result')}, " + ", ".join(parts) + see
    reasons = list(dict.fromkeys(s.empty.rstrip(".") for s in sections))
    return "; ".join(r[0].lower() + r[1:] for r in reasons)

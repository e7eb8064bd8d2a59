"""Reports: the queries behind each section, under the user's filters and constraints.

A report is a list of sections; each section holds the rows of one query over the documented
views (the same columns for JSON/CSV) plus the columns a person reads in Markdown/HTML.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
import json
import shlex
from typing import TYPE_CHECKING, Any, Callable

from benchdb import sql
from benchdb.errors import BenchdbError
from benchdb.text import plural


if TYPE_CHECKING:
    import duckdb

    from benchdb.reports.banner import Banner


class NothingToReport(BenchdbError):
    exit_code = 1


@dataclass(frozen=True)
class Filters:
    models: tuple[str, ...] = ()
    hardware: tuple[str, ...] = ()
    objective: str = "throughput"
    max_latency_ms: float | None = None
    max_memory_mb: float | None = None
    prices: dict[str, float] = field(default_factory=dict)

    def params(self) -> dict[str, Any]:
        return {"models": list(self.models) or None, "hardware": list(self.hardware) or None}

    def describe(self) -> str:
        parts = []
        if self.models:
            parts.append("models " + ", ".join(self.models))
        if self.hardware:
            parts.append("hardware " + ", ".join(self.hardware))
        if self.max_latency_ms is not None:
            parts.append(f"latency <= {self.max_latency_ms:g} ms")
        if self.max_memory_mb is not None:
            parts.append(f"memory <= {self.max_memory_mb:g} MB")
        return "; ".join(parts)


@dataclass
class Column:
    header: str
    key: str
    fmt: str = "text"          # text | ms | num | pct | ratio | mib | int | sci | result (a link to its drill-down)
    #: Shown in a terminal's Markdown; False: only with --wide and in HTML.
    compact: bool = True
    #: Shown with --wide and in HTML; False: a terminal's shorter form of other columns.
    full: bool = True


@dataclass
class Section:
    name: str
    title: str
    description: str
    columns: list[Column]          # what a person reads
    keys: list[str]                # every column of the query (JSON/CSV)
    rows: list[dict[str, Any]]
    notes: list[str] = field(default_factory=list)
    plots: list[tuple[str, str]] = field(default_factory=list)   # (caption, svg) for HTML
    #: What an empty section says instead of rows: why it is empty.
    empty: str = "No rows for this section."
    #: True when an empty section is itself the answer (no open change points in series that
    #: were searched): the report is not an error then.
    answered: bool = False
    #: Rows a plot needs beyond the table (the optimal section's latency-throughput points).
    extra: dict[str, list[dict[str, Any]]] = field(default_factory=dict)


@dataclass
class Report:
    db: str
    generated_at: str
    summary: dict[str, Any]
    filters: str
    sections: list[Section]
    #: Results measured on a busy machine (None when there are none).
    banner: "Banner | None" = None
    #: One row per hardware x software combination behind the report (environment.sql).
    environment: list[dict[str, Any]] = field(default_factory=list)
    #: Why latest timing attempts were left out of the sections: (reason, results, measured) rows.
    excluded: list[dict[str, Any]] = field(default_factory=list)
    #: Results that ran but are invalid (measured_invalid.sql): shown flagged, never ranked.
    measured_invalid: list[dict[str, Any]] = field(default_factory=list)
    #: Per result behind a figure (HTML only): its statistics, other metrics, samples, command.
    drilldown: list[dict[str, Any]] = field(default_factory=list)


def generated_now() -> str:
    """A report's generation time, as it prints it."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def section_rows(con: "duckdb.DuckDBPyConnection", name: str, params: dict[str, Any]) -> tuple[list[str], list[dict]]:
    text = sql.load(f"reports/{name}.sql")
    used = {k: v for k, v in params.items() if f"${k}" in text}
    cur = con.execute(text, used)
    keys = [d[0] for d in cur.description]
    return keys, [dict(zip(keys, r)) for r in cur.fetchall()]


def _one(con: "duckdb.DuckDBPyConnection", name: str, params: dict[str, Any]) -> dict[str, Any]:
    return section_rows(con, name, params)[1][0]


OBJECTIVES = ("throughput", "latency", "energy", "cost")


def _optimal(con, f: Filters, detail: bool = False) -> Section:
    if f.objective not in OBJECTIVES:
        raise BenchdbError(f"--objective {f.objective!r} is not one of {', '.join(OBJECTIVES)}")
    if f.objective == "cost" and not f.prices:
        raise BenchdbError("--objective cost needs --prices FILE (YAML: hardware name -> USD per hour)")
    params = {**f.params(), "objective": f.objective,
              "max_latency_s": None if f.max_latency_ms is None else f.max_latency_ms / 1e3,
              "max_memory_bytes": None if f.max_memory_mb is None else f.max_memory_mb * 2**20,
              "price_names": list(f.prices), "price_values": list(f.prices.values())}
    keys, rows = section_rows(con, "optimal_hardware", params)
    value_fmt = {"throughput": "num", "latency": "ms", "energy": "sci", "cost": "num"}[f.objective]
    value_head = {"throughput": "items/s", "latency": "latency", "energy": "J/item", "cost": "USD/1M items"}
    notes = []
    empty = "No latest valid timing result to rank."
    if f.objective in ("energy", "cost") or not rows:
        scope = _one(con, "optimal_scope", params)
        if scope["candidates"] and not rows:
            _objective_unanswerable(f, scope)          # energy/cost data missing: raises
        if not scope["candidates"] and f.describe():
            empty = f"No latest valid timing result matches {f.describe()}."
        if f.objective == "cost":
            missing = sorted(set(scope["hardware_names"] or []) - set(f.prices))
            if missing:
                notes.append("no price for: " + ", ".join(missing) + " (left out of the cost ranking)")
        if f.objective == "energy" and scope["candidates"] > sum(r["candidates"] for r in rows):
            notes.append("energy needs power samples (power_w, from NVIDIA telemetry); results without "
                         "them are left out")
    notes += _optimal_notes(rows)
    energy = [Column("J/item", "best_energy_per_item_j", "sci", compact=False)] if any(
        r.get("best_energy_per_item_j") is not None for r in rows) and f.objective != "energy" else []
    return Section(
        "optimal_hardware", f"Optimal hardware by {f.objective}",
        "Per model, batch size and input shape: the best hardware/backend/mode/precision among the "
        "latest valid timing results" + (f" under {f.describe()}" if f.describe() else "") + ", how much better "
        "it is than the runner-up, and how sure that is. The same rule as `benchdb check`: the margin gets a 95 % "
        "interval only where run-to-run noise is known -- both results ran in 2+ interleaved processes of one run "
        "(`--repeats 3`), or both series have 8+ earlier runs. A win needs the whole interval above +5 %; a tie's "
        "interval includes 0 or stays below 5 %; anything else is unconfirmed (one process cannot see the shifts "
        "between runs, which reach 10-40 % on shared machines). proc and runs (HTML, `--wide`) count the processes "
        "and runs behind the best (+ the runner-up).",
        [Column("model", "model_id"), Column("batch", "batch_size", "int"), Column("input", "input_shape"),
         Column("best hardware", "best_hardware", compact=False), Column("backend", "best_backend", compact=False),
         Column("mode", "best_mode", compact=False), Column("precision", "best_precision", compact=False),
         Column("best", "best_short", full=False),
         Column(f"best {value_head[f.objective]}", "best_value", value_fmt, compact=False),
         Column(value_head[f.objective], "best_value", value_fmt, full=False),
         Column("margin", "margin", "pct", compact=False), Column("margin 95% CI", "margin_ci_label", compact=False),
         Column("margin [95% CI]", "margin_short", full=False),
         Column("verdict", "verdict_label"), Column("proc", "proc_label", compact=False),
         Column("runs", "runs_label", compact=False),
         Column("runner-up", "runner_up_label", compact=False), Column("runner-up", "runner_up_short", full=False),
         Column(f"runner-up {value_head[f.objective]}", "runner_up_value", value_fmt, compact=False),
         Column("candidates", "candidates", "int", compact=False),
         Column("p50", "best_median_s", "ms", compact=False), Column("p90", "best_p90_s", "ms", compact=False),
         Column("p99", "best_p99_s", "ms", compact=False), Column("n", "best_n", "int", compact=False),
         Column("processes", "best_repeats", "int", compact=False),
         Column("peak memory", "best_peak_memory_bytes", "mib", compact=False), *energy,
         Column("result", "best_result_id", "result", compact=False),
         Column("runner-up result", "runner_up_result_id", "result", compact=False)],
        keys, _short_labels([_optimal_row(r) for r in rows]), notes, empty=empty,
        extra={"pareto": section_rows(con, "pareto", f.params())[1]} if detail else {})


def _pct(v: float) -> str:
    return f"{v * 100:+.1f}%"


#: What each margin verdict reads as (None: no runner-up).
VERDICT_LABELS = {"win": "win", "tie": "tie", "unconfirmed": "unconfirmed", "unknown": "unconfirmed",
                  None: "only one"}


def _optimal_row(r: dict) -> dict:
    """The columns a person reads: the runner-up's full label, the margin's interval, the verdict
    (win / tie / unconfirmed) with a warning when a tail is unstable, and what stands behind it."""
    ci = (f"{_pct(r['margin_ci_low'])} .. {_pct(r['margin_ci_high'])}"
          if r.get("margin_ci_low") is not None else None)
    if ci is None and r.get("runner_up_result_id") is not None:
        ci = "noise unknown"
    verdict = VERDICT_LABELS.get(r.get("margin_verdict"), str(r.get("margin_verdict")))
    tails = [who for who, key in (("best", "best"), ("runner-up", "runner_up")) if r.get(f"{key}_tail_unstable")]
    if tails:
        verdict += "; unstable tail: " + ", ".join(tails)
    short = None
    if r.get("margin") is not None:
        short = f"{r['margin'] * 100:+.0f}%"
        if r.get("margin_ci_low") is not None:
            short += f" [{r['margin_ci_low'] * 100:+.0f}, {r['margin_ci_high'] * 100:+.0f}]"
    return dict(r, runner_up_label=_label(r, "runner_up"), margin_ci_label=ci, verdict_label=verdict,
                margin_short=short, proc_label=_pair(r, "best_repeats", "runner_up_repeats"),
                runs_label=_pair(r, "best_runs", "runner_up_runs"))


def _pair(r: dict, best: str, runner_up: str) -> str:
    """'3+3': the best's and the runner-up's count ('3' alone without a runner-up)."""
    def n(key: str) -> str:
        return "?" if r.get(key) is None else str(r[key])
    return n(best) if r.get("runner_up_result_id") is None else f"{n(best)}+{n(runner_up)}"


_PARTS = ("hardware", "backend", "mode", "precision")


def _short_labels(rows: list[dict]) -> list[dict]:
    """Terminal labels of the best and the runner-up: only the parts (hardware, backend, mode,
    precision) that differ somewhere in the table; the full labels stay in their own columns."""
    varying = [p for p in _PARTS if len({r.get(f"{who}_{p}") for r in rows for who in ("best", "runner_up")
                                         if r.get(f"{who}_hardware") is not None}) > 1] or ["backend"]
    for r in rows:
        for who in ("best", "runner_up"):
            r[f"{who}_short"] = ("/".join(str(r.get(f"{who}_{p}")) for p in varying)
                                 if r.get(f"{who}_hardware") is not None else None)
    return rows


def _optimal_notes(rows: list[dict]) -> list[str]:
    notes = []
    ranked = [r for r in rows if r.get("margin_verdict") is not None]
    wins = sum(1 for r in ranked if r.get("margin_verdict") == "win")
    ties = sum(1 for r in ranked if r.get("margin_verdict") == "tie")
    unconfirmed = [r for r in ranked if r.get("margin_verdict") in ("unconfirmed", "unknown")]
    if ranked:
        notes.append(f"Of {plural(len(ranked), 'winner')} with a runner-up: {wins} win, {ties} tie, "
                     f"{len(unconfirmed)} unconfirmed.")
    no_basis = [r for r in unconfirmed if r.get("margin_ci_low") is None]
    if no_basis:
        single = sum(1 for r in no_basis if (r.get("margin_processes") or 1) < 2)
        notes.append(f"{plural(len(no_basis), 'winner')} unconfirmed because run-to-run noise is unknown"
                     + (f" ({single} measured in one process)" if single else " (the two results come from "
                        "separate runs without 8 runs of history)")
                     + ": the winner within run-to-run noise is unknown. Measure both in one run with "
                       "`--repeats 3` (interleaved processes), or let each series collect 8 runs.")
    between = len(unconfirmed) - len(no_basis)
    if between:
        notes.append(f"{plural(between, 'winner')} unconfirmed: the margin's interval excludes 0 but not +5 %; "
                     "measure with more --repeats to tell.")
    if ties:
        notes.append(f"{plural(ties, 'tie')}: the margin's interval includes 0 or stays within 5 %, so the data "
                     "do not tell the two apart.")
    tail = [r for r in rows if r.get("best_tail_unstable") or r.get("runner_up_tail_unstable")]
    if tail:
        notes.append(f"Unstable tail in {plural(len(tail), 'row')}: p90 above 2x or p99 above 5x the median; "
                     "the median ranks them, but a latency budget on p90/p99 may not hold.")
    return notes


def _objective_unanswerable(f: Filters, scope: dict[str, Any]) -> None:
    """There are timing results to rank, but none has what the objective needs: say exactly what."""
    n = scope["candidates"]
    matching = f" matching {f.describe()}" if f.describe() else ""
    results = plural(n, "latest valid timing result") + matching
    if f.objective == "energy":
        if scope["with_power"]:
            raise NothingToReport(
                f"nothing to report: --objective energy: none of the {results} has power samples (power_w); "
                f"the {plural(scope['with_power'], 'result')} with power samples are outside the constraints")
        raise NothingToReport(
            f"nothing to report: --objective energy: no result has power samples (power_w) among the {results}; "
            "energy needs NVIDIA telemetry (pynvml, recorded by the pytorch backend on CUDA devices); "
            "use --objective throughput, latency or cost")
    if f.objective == "cost":
        names = ", ".join(scope["hardware_names"] or [])
        raise NothingToReport(
            f"nothing to report: --objective cost: no price matches the hardware of the {results} "
            f"({names}); --prices gives prices for: {', '.join(sorted(f.prices))} "
            "(names must match hardware names exactly)")


def _label(r: dict, prefix: str) -> str | None:
    if r.get(f"{prefix}_hardware") is None:
        return None
    return (f"{r[f'{prefix}_hardware']} / {r[f'{prefix}_backend']} / {r[f'{prefix}_mode']} / "
            f"{r[f'{prefix}_precision']}")


def _matrix(con, f: Filters) -> Section:
    keys, rows = section_rows(con, "matrix", f.params())
    return Section(
        "compat_matrix", "Compatibility matrix",
        "Which model families run on which hardware and backend. Counts are over the latest timing attempt "
        "of every scenario; invalid results (ok but noisy, too few samples, busy machine) are counted "
        "apart and never rated. Rating from the throughput of valid results relative to the fastest for "
        "the same model, batch size and shape: best = the fastest (1.00), good >= 0.40, slow < 0.40; "
        "broken = nothing ran, unrated = ran but no valid timing. Pairs never tried are left out, not guessed.",
        [Column("family", "family"), Column("model type", "model_type"), Column("hardware", "hardware_name"),
         Column("backend", "backend"), Column("ok", "ok", "int"), Column("invalid", "invalid", "int"),
         Column("failed", "failed", "int"), Column("oom", "oom", "int"), Column("timeout", "timeout", "int"),
         Column("unsupported", "unsupported", "int"), Column("mismatch", "mismatch", "int"),
         Column("rel. throughput", "relative_throughput", "ratio"), Column("rating", "rating_label"),
         Column("most common error", "top_error")],
        keys, rows)


def _speedup(con, f: Filters) -> Section:
    keys, rows = section_rows(con, "speedup", f.params())
    rows = [dict(r, speedup_ci_label=(f"{r['speedup_ci_low']:.2f} .. {r['speedup_ci_high']:.2f}"
                                      if r.get("speedup_ci_low") is not None else None))
            for r in rows]
    judged = [r for r in rows if r.get("speedup_verdict") != "baseline"]
    unconfirmed = sum(1 for r in judged if r.get("speedup_verdict") == "unconfirmed")
    notes = []
    if judged:
        counts = {v: sum(1 for r in judged if r.get("speedup_verdict") == v) for v in ("faster", "slower", "same")}
        notes.append(f"Of {plural(len(judged), 'result')} against the baseline: {counts['faster']} faster, "
                     f"{counts['slower']} slower, {counts['same']} same, {unconfirmed} unconfirmed.")
    if unconfirmed:
        notes.append("Unconfirmed: run-to-run noise is unknown for the pair (separate runs without 8 runs of "
                     "history, or one process each) or the interval spans the 5 % line. Measure both in one run "
                     "with `--repeats 3`, or let each series collect 8 runs.")
    return Section(
        "speedup", "Speedup against CPU PyTorch eager",
        "Median latency of each latest valid result against PyTorch eager fp32 on a CPU for the same "
        "model, batch size and input shape (>1 is faster). The same rule as the optimal-hardware margin: "
        "an interval only where run-to-run noise is known (2+ interleaved processes of one run, or 8+ runs "
        "of history); faster or slower when the whole interval is beyond 5 %, same when it includes 1.",
        [Column("model", "model_id"), Column("batch", "batch_size", "int"), Column("input", "input_shape"),
         Column("hardware", "hardware_name"), Column("backend", "backend"), Column("mode", "mode"),
         Column("precision", "precision"), Column("median", "median_s", "ms"),
         Column("baseline", "baseline_hardware", compact=False),
         Column("baseline median", "baseline_median_s", "ms"),
         Column("speedup", "speedup", "ratio"), Column("95% CI", "speedup_ci_label"),
         Column("verdict", "speedup_verdict"), Column("result", "result_id", "result", compact=False),
         Column("baseline result", "baseline_result_id", "result", compact=False)],
        keys, rows, notes, empty="No CPU PyTorch eager fp32 baseline for the same model, batch size and shape.")


def _scaling(con, f: Filters) -> Section:
    keys, rows = section_rows(con, "scaling", f.params())
    return Section(
        "batch_scaling", "Batch scaling",
        "Latency and throughput against batch size; scaling efficiency is throughput relative to "
        "perfect linear scaling from the smallest batch measured.",
        [Column("model", "model_id"), Column("hardware", "hardware_name"), Column("backend", "backend"),
         Column("mode", "mode"), Column("precision", "precision"), Column("input", "input_shape"),
         Column("batch", "batch_size", "int"), Column("latency", "latency_s", "ms"),
         Column("items/s", "throughput", "num"), Column("efficiency", "scaling_efficiency", "ratio"),
         Column("peak memory", "peak_memory_bytes", "mib"), Column("latency CI low", "latency_ci_low_s", "ms"),
         Column("latency CI high", "latency_ci_high_s", "ms"), Column("p90", "latency_p90_s", "ms"),
         Column("n", "n", "int"), Column("result", "result_id", "result")],
        keys, rows)


def _trends(con, f: Filters) -> Section:
    keys, rows = section_rows(con, "trends", f.params())
    empty = "No rows for this section."
    if not rows:
        n = _one(con, "trends_scope", f.params())["series"]
        if n:
            empty = (f"No series has two valid timing results yet ({plural(n, 'series', 'series')} "
                     "with one).")
    return Section(
        "trends", "Trends",
        "Median latency of each scenario over runs (series with at least two valid timing results).",
        [Column("model", "model_id"), Column("hardware", "hardware_name"), Column("backend", "backend"),
         Column("mode", "mode"), Column("batch", "batch_size", "int"), Column("input", "input_shape"),
         Column("run started", "run_started_at"), Column("commit", "git_commit"),
         Column("median", "median", "ms"), Column("change", "change_vs_previous", "pct"),
         Column("CI low", "median_ci_low", "ms"), Column("CI high", "median_ci_high", "ms"), Column("n", "n", "int"),
         Column("change point", "change_status"), Column("result", "result_id", "result")],
        keys, rows, empty=empty)


def _memory(con, f: Filters) -> Section:
    keys, rows = section_rows(con, "memory", f.params())
    return Section(
        "memory", "Peak memory", "Peak device memory when measured, else peak host RSS of the process.",
        [Column("model", "model_id"), Column("batch", "batch_size", "int"), Column("input", "input_shape"),
         Column("hardware", "hardware_name"), Column("backend", "backend"), Column("mode", "mode"),
         Column("precision", "precision"), Column("peak memory", "peak_memory_bytes", "mib"),
         Column("result", "result_id", "result")],
        keys, rows, empty="No latest valid timing result has peak memory samples (peak_rss_bytes or "
                          "peak_device_allocated_bytes).")


def _regressions(con, f: Filters) -> Section:
    from benchdb.analysis.changepoints import MIN_SEGMENT

    keys, rows = section_rows(con, "regressions", f.params())
    empty, answered = "No rows for this section.", False
    if not rows:
        need = 2 * MIN_SEGMENT
        scope = _one(con, "regressions_scope", {**f.params(), "min_points": need})
        if scope["series"]:
            answered = True
            empty = (f"No open change points in {plural(scope['series'], 'series', 'series')} "
                     f"({plural(scope['runs'], 'run')})")
            if scope["acked"]:
                empty += f"; {plural(scope['acked'], 'acknowledged change point')}"
            if scope["searchable"] < scope["series"]:
                empty += (f"; {scope['searchable']} of them {'has' if scope['searchable'] == 1 else 'have'} "
                          f"the {need} valid runs a change point needs ({MIN_SEGMENT} on each side of it)")
            empty += "."
    return Section(
        "regressions", "Open change points",
        "Shifts in a series' median over runs (E-divisive means, permutation test p < 0.05, at least 3 runs "
        "on each side, at least 3 % change); acknowledge intended ones with `benchdb ack CHANGE_ID --note ...`.",
        [Column("change id", "change_id"), Column("model", "model_id"), Column("batch", "batch_size", "int"),
         Column("input", "input_shape"), Column("hardware", "hardware_name"), Column("backend", "backend"),
         Column("mode", "mode"), Column("first run after", "run_started_at"), Column("commit", "git_commit"),
         Column("before", "before_median", "ms"), Column("after", "after_median", "ms"),
         Column("change", "change", "pct"), Column("p", "p_value", "sci")],
        keys, rows, empty=empty, answered=answered)


BUILDERS: dict[str, Callable[[Any, Filters], Section]] = {
    "optimal-hardware": _optimal, "matrix": _matrix, "speedup": _speedup, "scaling": _scaling,
    "trends": _trends, "memory": _memory, "regressions": _regressions,
}
ALL = ("optimal-hardware", "matrix", "speedup", "scaling", "memory", "trends", "regressions")


def build(con: "duckdb.DuckDBPyConnection", db: str, kinds: list[str], filters: Filters, *,
          allow_empty: bool = False, detail: bool = False) -> Report:
    """The report of ``kinds`` under ``filters``. Every section empty is an error (NothingToReport,
    saying why) unless ``allow_empty`` (the quickstart: its report's banner and sections say why)."""
    cur = con.execute(sql.load("reports/summary.sql"))
    summary = dict(zip([d[0] for d in cur.description], cur.fetchall()[0]))
    if summary["results"] == 0:
        raise NothingToReport(f"nothing to report: {db} holds no results yet; "
                              "load some with `benchdb ingest RESULTS_DIR`")
    sections = [_optimal(con, filters, detail) if k == "optimal-hardware" else BUILDERS[k](con, filters)
                for k in kinds]
    from benchdb.reports.banner import busy_banner

    banner = busy_banner(con, filters)
    if not allow_empty and not any(s.rows or s.answered for s in sections):
        why = _why_empty(con, db, filters, sections)
        raise NothingToReport(f"nothing to report: {why}" + (f". {banner.text}" if banner else ""))
    rep = Report(db, generated_now(), summary,
                 filters.describe(), sections, banner)
    _left_out(con, filters, rep)
    if detail:        # HTML: the environment block and the drill-down (kept off the Markdown/JSON path's time)
        rep.environment = [_environment_row(r) for r in section_rows(con, "environment", filters.params())[1]]
        rep.drilldown = drilldown(con, _traced_ids(rep))
    return rep


#: Sections whose rows come from the latest valid timing results: they say what they left out.
_RANKED = ("optimal_hardware", "speedup", "batch_scaling", "memory", "trends")
#: Invalid results listed (flagged) under "Measured but left out", and results drilled into (HTML).
MEASURED_ROWS = 50
DRILL_MAX = 60


def _left_out(con, f: Filters, rep: Report) -> None:
    """Each ranked section says how many latest timing attempts it left out and why; results that ran
    but are invalid are kept, flagged, in ``rep.measured_invalid`` (an all-invalid warehouse still
    shows what it measured)."""
    total = _one(con, "excluded_total", f.params())
    if not total["left_out"]:
        return
    rep.excluded = section_rows(con, "excluded", f.params())[1]
    rep.measured_invalid = section_rows(con, "measured_invalid", {**f.params(), "limit": MEASURED_ROWS})[1]
    why = ", ".join(f"{r['results']} {r['reason']}" for r in rep.excluded)
    note = (f"Left out: {plural(total['left_out'], 'latest timing attempt')} that {'is' if total['left_out'] == 1 else 'are'}"
            f" not a valid timing ({why})")
    if total["measured"]:
        m = total["measured"]
        ran = "the one that ran is" if m == 1 else f"the {m} that ran are"
        note += f'; {ran} listed, flagged, under "Measured but left out"'
    for s in rep.sections:
        if s.name not in _RANKED:
            continue
        s.notes.append(note + ".")
        if not s.rows and total["measured"] and not s.answered:
            s.empty = (f"No valid timing result for this section: {plural(total['measured'], 'result')} ran but "
                       f"{'is' if total['measured'] == 1 else 'are'} invalid ({why}); see \"Measured but left out\".")


def _environment_row(r: dict) -> dict:
    try:
        software = json.loads(r.pop("software_json") or "{}")
    except ValueError:
        software = {}
    flat = software if isinstance(software, dict) else {}
    r["software"] = ", ".join(f"{k} {v}" for k, v in sorted(flat.items()) if not isinstance(v, (dict, list)))
    cores = "/".join(str(x) for x in (r.get("cores_physical"), r.get("cores_logical")) if x is not None)
    r["cpu"] = " ".join(x for x in (r.get("cpu_model") or "", f"({cores} cores)" if cores else "") if x) or None
    r["platform"] = " / ".join(x for x in (r.get("os"), r.get("arch")) if x) or None
    return r


def _traced_ids(rep: Report) -> list[str]:
    """The results behind the report's figures, in the order they appear (at most DRILL_MAX)."""
    ids: list[str] = []
    for s in rep.sections:
        for r in s.rows:
            for key in ("best_result_id", "runner_up_result_id", "result_id"):
                if r.get(key) is not None and s.name != "trends":
                    ids.append(r[key])
    ids += [r["result_id"] for r in rep.measured_invalid]
    return list(dict.fromkeys(ids))[:DRILL_MAX]


def drilldown(con, ids: list[str]) -> list[dict[str, Any]]:
    """Each result in ``ids``: its row (drilldown.sql), its samples per process (samples.sql) and the
    `benchdb run` command that measures its scenario again."""
    if not ids:
        return []
    rows = section_rows(con, "drilldown", {"ids": ids})[1]
    per: dict[str, list[list[float]]] = {}
    for s in section_rows(con, "samples", {"ids": ids, "metric": None})[1]:
        per.setdefault(s["result_id"], []).append(s["vals"])
    for r in rows:
        r["samples"] = per.get(r["result_id"], [])
        r["command"] = reproduce_command(r)
    return rows


def reproduce_command(r: dict) -> str:
    """The `benchdb run` line that measures this result's scenario again (same model, backend, device,
    mode, precision, batch size, sequence length, threads, processes)."""
    args = ["benchdb", "run", "--backend", r["backend"], "--device", r["device"], "--model", r["model_id"],
            "--batch-sizes", str(r["batch_size"])]
    shape = dict(p.split("=", 1) for p in str(r.get("input_shape") or "").split(",") if "=" in p)
    if "seq_len" in shape:
        args += ["--seq-lens", shape["seq_len"]]
    args += ["--mode", r["mode"], "--precision", r["precision"]]
    if r.get("threads"):
        args += ["--threads", str(r["threads"])]
    if (r.get("repeats") or 1) > 1:
        args += ["--repeats", str(r["repeats"])]
    return " ".join(shlex.quote(str(a)) for a in args)


def _why_empty(con, db: str, f: Filters, sections: list[Section]) -> str:
    """One line on why every section is empty: nothing matches, nothing is a valid timing (and what
    there is instead), or each section's own reason."""
    see = "; see `benchdb query \"SELECT model_id, metric, status, validity, validity_reasons FROM results\"`"
    scope = _one(con, "scope", f.params())
    matched = f.params()["models"] or f.params()["hardware"]
    if not scope["results"]:
        return f"no results match {f.describe()}{see}"
    if not scope["valid_timing"]:
        parts = []
        if scope["verification"]:
            parts.append(plural(scope["verification"], "verification check") +
                         " (not timings: see the `verification` view)")
        if scope["invalid_timing"]:
            parts.append(plural(scope["invalid_timing"], "invalid timing result"))
        if scope["not_ok"]:
            parts.append(plural(scope["not_ok"], "result") + " that did not run (status not ok)")
        where = f"matching {f.describe()}" if matched else f"in {db}"
        return (f"no valid timing result {where}: {plural(scope['results'], 'result')}, "
                + ", ".join(parts) + see)
    reasons = list(dict.fromkeys(s.empty.rstrip(".") for s in sections))
    return "; ".join(r[0].lower() + r[1:] for r in reasons)

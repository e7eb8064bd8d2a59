"""Reports: the queries behind each section, under the user's filters and constraints.

A report is a list of sections (:mod:`benchdb.reports.document`); each section holds the rows of one
query over the documented views (the same columns for JSON/CSV) plus the columns a person reads in
Markdown/HTML. The optimal-hardware section is :mod:`benchdb.reports.optimal`; the others, what a
report leaves out and the drill-down are here.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from benchdb import sql
from benchdb.reports.document import (
    Column,
    Filters,
    NothingToReport,
    Report,
    Section,
    generated_now,
    one_row,
    section_rows,
)
from benchdb.reports.optimal import optimal_section
from benchdb.reports.serving import sections as serving_sections
from benchdb.schema import identity
from benchdb.text import plural

if TYPE_CHECKING:
    import duckdb


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


def _batch_scaling(con, f: Filters) -> Section:
    keys, rows = section_rows(con, "batch_scaling", f.params())
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
        n = one_row(con, "trends_scope", f.params())["series"]
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
        scope = one_row(con, "regressions_scope", {**f.params(), "min_points": need})
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


def _speed_accuracy(con, f: Filters) -> Section:
    keys, rows = section_rows(con, "speed_accuracy", f.params())
    rows = [dict(r, speedup_ci_label=(f"{r['speedup_ci_low']:.2f} .. {r['speedup_ci_high']:.2f}"
                                      if r.get("speedup_ci_low") is not None else "noise unknown"),
                 method=r.get("quantization") or "",
                 agreement_label=(f"{r['agreement_metric'].replace('_', ' ')} {r['agreement'] * 100:.3f} %"
                                  if r.get("agreement") is not None else "not recorded"),
                 score_label=(f"{r['score_basis']}: {r['score_drop'] * 100:.3f} % below fp32"
                              if r.get("score_drop") is not None else ""),
                 sts_label=(f"{r['sts_spearman']:.4f} (fp32 {r['fp32_sts_spearman']:.4f})"
                            if r.get("sts_spearman") is not None and r.get("fp32_sts_spearman") is not None
                            else ""),
                 drop_label=(f"{r['accuracy_drop'] * 100:.3f} %" if r.get("accuracy_drop") is not None else ""))
            for r in rows]
    notes = []
    if any(r.get("agreement") is None for r in rows):
        notes.append("Agreement not recorded: results measured before benchdb compared every precision with fp32 "
                     "(measure them again to get it).")
    return Section(
        "speed_accuracy", "Speed and accuracy by precision",
        "Each latest valid result that is not fp32 (fp16, bf16, int8, int4) against the fp32 result of the same "
        "model, batch size, input shape, hardware, backend and mode: its speedup (> 1 is faster), with a 95 % "
        "interval where run-to-run noise is known (2+ interleaved processes of one run, or 8+ runs of history), "
        "and how closely its output follows fp32 on the same inputs (top-1 or token agreement, else cosine "
        "similarity), and imported task scores (`benchdb import lm-eval`) against fp32's on the same tasks. The "
        "drop is the largest relative score drop where scores exist, else the relative drop of the sentence-"
        "similarity score (`--sts`), else 100 % minus the agreement; "
        "`report --optimal-hardware --max-accuracy-drop 1%` ranks only results within such a drop.",
        [Column("model", "model_id"), Column("batch", "batch_size", "int"), Column("input", "input_shape"),
         Column("hardware", "hardware_name"), Column("backend", "backend"), Column("mode", "mode", compact=False),
         Column("precision", "precision"), Column("method", "method"), Column("median", "median_s", "ms"),
         Column("fp32 median", "fp32_median_s", "ms"), Column("speedup", "speedup", "ratio"),
         Column("95% CI", "speedup_ci_label"), Column("agreement with fp32", "agreement_label"),
         Column("lm-eval", "score_label"), Column("STS Spearman", "sts_label"),
         Column("drop", "drop_label"), Column("result", "result_id", "result", compact=False),
         Column("fp32 result", "fp32_result_id", "result", compact=False)],
        keys, rows, notes, empty="No result that is not fp32 has an fp32 result of the same scenario beside it.")


BUILDERS: dict[str, Callable[[Any, Filters], Section | list[Section]]] = {
    "speed-accuracy": _speed_accuracy,
    "optimal-hardware": optimal_section, "matrix": _matrix, "speedup": _speedup, "batch-scaling": _batch_scaling,
    "trends": _trends, "memory": _memory, "regressions": _regressions, "serving": serving_sections,
}
ALL = ("optimal-hardware", "matrix", "speedup", "speed-accuracy", "batch-scaling", "memory", "trends", "regressions")


def build(con: duckdb.DuckDBPyConnection, db: str, kinds: list[str], filters: Filters, *,
          allow_empty: bool = False, detail: bool = False) -> Report:
    """The report of ``kinds`` under ``filters``. Every section empty is an error (NothingToReport,
    saying why) unless ``allow_empty`` (the quickstart: its report's banner and sections say why)."""
    summary = sql.rows(con.execute(sql.load("reports/summary.sql")))[0]
    if summary["results"] == 0:
        raise NothingToReport(f"nothing to report: {db} holds no results yet; "
                              "load some with `benchdb ingest RESULTS_DIR`")
    sections: list[Section] = []
    for k in kinds:       # a kind gives one section, or several (--serving: points, frontier, SLO)
        got = optimal_section(con, filters, detail) if k == "optimal-hardware" else BUILDERS[k](con, filters)
        sections += got if isinstance(got, list) else [got]
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
_RANKED = ("optimal_hardware", "speedup", "speed_accuracy", "batch_scaling", "memory", "trends")
#: Invalid results listed (flagged) under "Measured but left out", and results drilled into (HTML).
MEASURED_ROWS = 50
DRILL_MAX = 60


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
    note = (f"Left out: {plural(total['left_out'], 'latest timing attempt')} that {verb}"
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
    """The `benchdb run` line that measures this result's scenario again: the options its run recorded
    (stopping rule, timeouts, the backend's own options, ...) narrowed to this scenario's model, device,
    mode, precision, batch size and input shape, with its threads and processes."""
    from benchdb.backends import core_options as options

    entry = _run_entry(r)
    if entry is None:          # no recorded run options (an imported result, an old file): the key alone
        flag = {o.name: o.cli_flag for o in options.CORE}
        args = ["benchdb", "run", "--backend", r["backend"], "--device", r["device"], "--model", r["model_id"],
                flag["batch_sizes"], str(r["batch_size"])]
        shape = identity.shape_fields(r.get("input_shape"))
        if "seq_len" in shape:
            args += [flag["seq_lens"], shape["seq_len"]]
        args += [flag["modes"], r["mode"], flag["precisions"], r["precision"]]
        if r.get("threads"):
            args += ["--threads", str(r["threads"])]
        if (r.get("repeats") or 1) > 1:
            args += ["--repeats", str(r["repeats"])]
        return " ".join(shlex.quote(str(a)) for a in args)
    from benchdb.harness.scenario import RunOptions

    opts = RunOptions.from_config(entry, "results")
    overrides: dict[str, Any] = {}
    # one value of an axis as the user wrote it stays (compile:max-autotune, a local model folder)
    if len(opts.models) != 1 or r["model_id"] in opts.models:
        overrides["models"] = (r["model_id"],)
    if len(opts.modes) != 1:
        overrides["modes"] = (r["mode"],)
    if len(opts.precisions) != 1:
        overrides["precisions"] = (r["precision"],)
    shape = identity.shape_fields(r.get("input_shape"))
    if "seq_len" in shape and shape["seq_len"].isdigit():
        overrides["seq_lens"] = (int(shape["seq_len"]),)
    if "concurrency" in shape and shape["concurrency"].isdigit():      # a serving load point
        overrides["concurrency"] = (int(shape["concurrency"]),)
    elif "rate" in shape:
        overrides["request_rate"] = (shape["rate"],)
    else:
        overrides["batch_sizes"] = (int(r["batch_size"]),)
    scenario = r.get("options_json") or r.get("options") or {}
    scenario = json.loads(scenario) if isinstance(scenario, str) else scenario
    if opts.quantization and scenario.get("quantization"):
        overrides["quantization"] = scenario["quantization"]
    if r.get("threads"):
        overrides["threads"] = int(r["threads"])
    args = ["benchdb", *options.reproduce_args(opts, overrides)]
    return " ".join(shlex.quote(str(a)) for a in args)


def _run_entry(r: dict) -> dict[str, Any] | None:
    """The run options (one entry of its run's recorded ``runs``) that planned this result: the entry of
    its backend that names its model, else its backend's only entry."""
    config = r.get("run_config")
    try:
        config = json.loads(config) if isinstance(config, str) else config
    except ValueError:
        return None
    entries = [e for e in (config or {}).get("runs") or [] if isinstance(e, dict) and e.get("backend") == r["backend"]]
    named = [e for e in entries if r["model_id"] in (e.get("models") or [])]
    found = named or (entries if len(entries) == 1 else [])
    return found[0] if found else None


def _why_empty(con, db: str, f: Filters, sections: list[Section]) -> str:
    """One line on why every section is empty: nothing matches, nothing is a valid timing (and what
    there is instead), or each section's own reason."""
    see = "; see `benchdb query \"SELECT model_id, metric, status, validity, validity_reasons FROM results\"`"
    scope = one_row(con, "scope", f.params())
    matched = f.params()["models"] or f.params()["hardware"]
    if not scope["results"]:
        return f"no results match {f.describe()}{see}"
    if not scope["valid_timing"]:
        parts = []
        if scope["verification"]:
            parts.append(plural(scope["verification"], "verification check") +
                         " (not timings: see the `verification` view)")
        if scope["published"]:
            parts.append(plural(scope["published"], "published figure") +
                         " (summary-only: see `--optimal-hardware --per system` and the `system_results` view)")
        if scope["invalid_timing"]:
            parts.append(plural(scope["invalid_timing"], "invalid timing result"))
        if scope["not_ok"]:
            parts.append(plural(scope["not_ok"], "result") + " that did not run (status not ok)")
        where = f"matching {f.describe()}" if matched else f"in {db}"
        return (f"no valid timing result {where}: {plural(scope['results'], 'result')}, "
                + ", ".join(parts) + see)
    reasons = list(dict.fromkeys(s.empty.rstrip(".") for s in sections))
    return "; ".join(r[0].lower() + r[1:] for r in reasons)

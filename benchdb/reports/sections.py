"""The report's sections over the timing results, one builder each: the compatibility matrix, speedup,
batch scaling, trends, memory, regressions and speed-accuracy (the optimal-hardware section is
:mod:`benchdb.reports.optimal`, the serving ones :mod:`benchdb.reports.serving_sections`)."""

from __future__ import annotations

from benchdb.reports.document import Column, Filters, Section, one_row, section_rows
from benchdb.text import plural


def matrix(con, f: Filters) -> Section:
    keys, rows = section_rows(con, "matrix", f.params())
    return Section(
        "compat_matrix",
        "Compatibility matrix",
        "Which model families run on which hardware and backend. Counts are over the latest timing attempt "
        "of every scenario; invalid results (ok but noisy, too few samples, busy machine) are counted "
        "apart and never rated. Rating from the throughput of valid results relative to the fastest for "
        "the same model, batch size and shape: best = the fastest (1.00), good >= 0.40, slow < 0.40; "
        "broken = nothing ran, unrated = ran but no valid timing. Pairs never tried are left out, not guessed.",
        [
            Column("family", "family"),
            Column("model type", "model_type"),
            Column("hardware", "hardware_name"),
            Column("backend", "backend"),
            Column("ok", "ok", "int"),
            Column("invalid", "invalid", "int"),
            Column("failed", "failed", "int"),
            Column("oom", "oom", "int"),
            Column("timeout", "timeout", "int"),
            Column("unsupported", "unsupported", "int"),
            Column("mismatch", "mismatch", "int"),
            Column("rel. throughput", "relative_throughput", "ratio"),
            Column("rating", "rating_label"),
            Column("most common error", "top_error"),
        ],
        keys,
        rows,
    )


def speedup(con, f: Filters) -> Section:
    keys, rows = section_rows(con, "speedup", f.params())
    rows = [
        dict(
            r,
            speedup_ci_label=(
                f"{r['speedup_ci_low']:.2f} .. {r['speedup_ci_high']:.2f}"
                if r.get("speedup_ci_low") is not None
                else None
            ),
        )
        for r in rows
    ]
    judged = [r for r in rows if r.get("speedup_verdict") != "baseline"]
    unconfirmed = sum(1 for r in judged if r.get("speedup_verdict") == "unconfirmed")
    notes = []
    if judged:
        counts = {v: sum(1 for r in judged if r.get("speedup_verdict") == v) for v in ("faster", "slower", "same")}
        notes.append(
            f"Of {plural(len(judged), 'result')} against the baseline: {counts['faster']} faster, "
            f"{counts['slower']} slower, {counts['same']} same, {unconfirmed} unconfirmed."
        )
    if unconfirmed:
        notes.append(
            "Unconfirmed: run-to-run noise is unknown for the pair (separate runs without 8 runs of "
            "history, or one process each) or the interval spans the 5 % line. Measure both in one run "
            "with `--repeats 3`, or let each series collect 8 runs."
        )
    return Section(
        "speedup",
        "Speedup against CPU PyTorch eager",
        "Median latency of each latest valid result against PyTorch eager fp32 on a CPU for the same "
        "model, batch size and input shape (>1 is faster). The same rule as the optimal-hardware margin: "
        "an interval only where run-to-run noise is known (2+ interleaved processes of one run, or 8+ runs "
        "of history); faster or slower when the whole interval is beyond 5 %, same when it includes 1.",
        [
            Column("model", "model_id"),
            Column("batch", "batch_size", "int"),
            Column("input", "input_shape"),
            Column("hardware", "hardware_name"),
            Column("backend", "backend"),
            Column("mode", "mode"),
            Column("precision", "precision"),
            Column("median", "median_s", "ms"),
            Column("baseline", "baseline_hardware", compact=False),
            Column("baseline median", "baseline_median_s", "ms"),
            Column("speedup", "speedup", "ratio"),
            Column("95% CI", "speedup_ci_label"),
            Column("verdict", "speedup_verdict"),
            Column("result", "result_id", "result", compact=False),
            Column("baseline result", "baseline_result_id", "result", compact=False),
        ],
        keys,
        rows,
        notes,
        empty="No CPU PyTorch eager fp32 baseline for the same model, batch size and shape.",
    )


def batch_scaling(con, f: Filters) -> Section:
    keys, rows = section_rows(con, "batch_scaling", f.params())
    return Section(
        "batch_scaling",
        "Batch scaling",
        "Latency and throughput against batch size; scaling efficiency is throughput relative to "
        "perfect linear scaling from the smallest batch measured.",
        [
            Column("model", "model_id"),
            Column("hardware", "hardware_name"),
            Column("backend", "backend"),
            Column("mode", "mode"),
            Column("precision", "precision"),
            Column("input", "input_shape"),
            Column("batch", "batch_size", "int"),
            Column("latency", "latency_s", "ms"),
            Column("items/s", "throughput", "num"),
            Column("efficiency", "scaling_efficiency", "ratio"),
            Column("peak memory", "peak_memory_bytes", "mib"),
            Column("latency CI low", "latency_ci_low_s", "ms"),
            Column("latency CI high", "latency_ci_high_s", "ms"),
            Column("p90", "latency_p90_s", "ms"),
            Column("n", "n", "int"),
            Column("result", "result_id", "result"),
        ],
        keys,
        rows,
    )


def trends(con, f: Filters) -> Section:
    keys, rows = section_rows(con, "trends", f.params())
    empty = "No rows for this section."
    if not rows:
        n = one_row(con, "trends_scope", f.params())["series"]
        if n:
            empty = f"No series has two valid timing results yet ({plural(n, 'series', 'series')} with one)."
    return Section(
        "trends",
        "Trends",
        "Median latency of each scenario over runs (series with at least two valid timing results).",
        [
            Column("model", "model_id"),
            Column("hardware", "hardware_name"),
            Column("backend", "backend"),
            Column("mode", "mode"),
            Column("batch", "batch_size", "int"),
            Column("input", "input_shape"),
            Column("run started", "run_started_at"),
            Column("commit", "git_commit"),
            Column("median", "median", "ms"),
            Column("change", "change_vs_previous", "pct"),
            Column("CI low", "median_ci_low", "ms"),
            Column("CI high", "median_ci_high", "ms"),
            Column("n", "n", "int"),
            Column("change point", "change_status"),
            Column("result", "result_id", "result"),
        ],
        keys,
        rows,
        empty=empty,
    )


def memory(con, f: Filters) -> Section:
    keys, rows = section_rows(con, "memory", f.params())
    return Section(
        "memory",
        "Peak memory",
        "Peak device memory when measured, else peak host RSS of the process.",
        [
            Column("model", "model_id"),
            Column("batch", "batch_size", "int"),
            Column("input", "input_shape"),
            Column("hardware", "hardware_name"),
            Column("backend", "backend"),
            Column("mode", "mode"),
            Column("precision", "precision"),
            Column("peak memory", "peak_memory_bytes", "mib"),
            Column("result", "result_id", "result"),
        ],
        keys,
        rows,
        empty="No latest valid timing result has peak memory samples (peak_rss_bytes or peak_device_allocated_bytes).",
    )


def regressions(con, f: Filters) -> Section:
    from benchdb.analysis.changepoints import MIN_SEGMENT

    keys, rows = section_rows(con, "regressions", f.params())
    empty, answered = "No rows for this section.", False
    if not rows:
        need = 2 * MIN_SEGMENT
        scope = one_row(con, "regressions_scope", {**f.params(), "min_points": need})
        if scope["series"]:
            answered = True
            empty = (
                f"No open change points in {plural(scope['series'], 'series', 'series')} "
                f"({plural(scope['runs'], 'run')})"
            )
            if scope["acked"]:
                empty += f"; {plural(scope['acked'], 'acknowledged change point')}"
            if scope["searchable"] < scope["series"]:
                empty += (
                    f"; {scope['searchable']} of them {'has' if scope['searchable'] == 1 else 'have'} "
                    f"the {need} valid runs a change point needs ({MIN_SEGMENT} on each side of it)"
                )
            empty += "."
    return Section(
        "regressions",
        "Open change points",
        "Shifts in a series' median over runs (E-divisive means, permutation test p < 0.05, at least 3 runs "
        "on each side, at least 3 % change); acknowledge intended ones with `benchdb ack CHANGE_ID --note ...`.",
        [
            Column("change id", "change_id"),
            Column("model", "model_id"),
            Column("batch", "batch_size", "int"),
            Column("input", "input_shape"),
            Column("hardware", "hardware_name"),
            Column("backend", "backend"),
            Column("mode", "mode"),
            Column("first run after", "run_started_at"),
            Column("commit", "git_commit"),
            Column("before", "before_median", "ms"),
            Column("after", "after_median", "ms"),
            Column("change", "change", "pct"),
            Column("p", "p_value", "sci"),
        ],
        keys,
        rows,
        empty=empty,
        answered=answered,
    )


def speed_accuracy(con, f: Filters) -> Section:
    keys, rows = section_rows(con, "speed_accuracy", f.params())
    rows = [
        dict(
            r,
            speedup_ci_label=(
                f"{r['speedup_ci_low']:.2f} .. {r['speedup_ci_high']:.2f}"
                if r.get("speedup_ci_low") is not None
                else "noise unknown"
            ),
            method=r.get("quantization") or "",
            agreement_label=(
                f"{r['agreement_metric'].replace('_', ' ')} {r['agreement'] * 100:.3f} %"
                if r.get("agreement") is not None
                else "not recorded"
            ),
            score_label=(
                f"{r['score_basis']}: {r['score_drop'] * 100:.3f} % below fp32"
                if r.get("score_drop") is not None
                else ""
            ),
            sts_label=(
                f"{r['sts_spearman']:.4f} (fp32 {r['fp32_sts_spearman']:.4f})"
                if r.get("sts_spearman") is not None and r.get("fp32_sts_spearman") is not None
                else ""
            ),
            drop_label=(f"{r['accuracy_drop'] * 100:.3f} %" if r.get("accuracy_drop") is not None else ""),
        )
        for r in rows
    ]
    notes = []
    if any(r.get("agreement") is None for r in rows):
        notes.append(
            "Agreement not recorded: results measured before benchdb compared every precision with fp32 "
            "(measure them again to get it)."
        )
    return Section(
        "speed_accuracy",
        "Speed and accuracy by precision",
        "Each latest valid result that is not fp32 (fp16, bf16, int8, int4) against the fp32 result of the same "
        "model, batch size, input shape, hardware, backend and mode: its speedup (> 1 is faster), with a 95 % "
        "interval where run-to-run noise is known (2+ interleaved processes of one run, or 8+ runs of history), "
        "and how closely its output follows fp32 on the same inputs (top-1 or token agreement, else cosine "
        "similarity), and imported task scores (`benchdb import lm-eval`) against fp32's on the same tasks. The "
        "drop is the largest relative score drop where scores exist, else the relative drop of the sentence-"
        "similarity score (`--sts`), else 100 % minus the agreement; "
        "`report --optimal-hardware --max-accuracy-drop 1%` ranks only results within such a drop.",
        [
            Column("model", "model_id"),
            Column("batch", "batch_size", "int"),
            Column("input", "input_shape"),
            Column("hardware", "hardware_name"),
            Column("backend", "backend"),
            Column("mode", "mode", compact=False),
            Column("precision", "precision"),
            Column("method", "method"),
            Column("median", "median_s", "ms"),
            Column("fp32 median", "fp32_median_s", "ms"),
            Column("speedup", "speedup", "ratio"),
            Column("95% CI", "speedup_ci_label"),
            Column("agreement with fp32", "agreement_label"),
            Column("lm-eval", "score_label"),
            Column("STS Spearman", "sts_label"),
            Column("drop", "drop_label"),
            Column("result", "result_id", "result", compact=False),
            Column("fp32 result", "fp32_result_id", "result", compact=False),
        ],
        keys,
        rows,
        notes,
        empty="No result that is not fp32 has an fp32 result of the same scenario beside it.",
    )


def sources(con, f: Filters) -> Section:
    keys, rows = section_rows(con, "sources", f.params())
    rows = [dict(r, round_label=r["round"] or "") for r in rows]
    published = [r for r in rows if r["source"] != "benchdb"]
    notes = []
    checked = sum(r["checked"] for r in published)
    if published:
        notes.append(
            f"{plural(checked, 'published result')} checked against the publisher's own table, "
            f"{sum(r['reproduced'] for r in published)} reproduce it; "
            f"{plural(sum(r['with_disagreements'] for r in published), 'result')} with a disagreement "
            "(SELECT * FROM source_disagreements lists each)."
        )
    return Section(
        "sources",
        "Sources",
        "Where the results come from: benchdb's own measurements, or the format each was imported from, "
        "per MLPerf round. Checked: the result's row in the publisher's own table (MLPerf's summary "
        "table) was found and compared; reproduced: the figure, units, system and counts the logs give "
        "agree with it; disagreements: with the logs, or within the table's row itself.",
        [
            Column("source", "source"),
            Column("round", "round_label"),
            Column("results", "results", "int"),
            Column("runs", "runs", "int"),
            Column("systems", "systems", "int"),
            Column("accelerator types", "accelerator_types", "int"),
            Column("checked", "checked", "int"),
            Column("reproduced", "reproduced", "int"),
            Column("with disagreements", "with_disagreements", "int"),
        ],
        keys,
        rows,
        notes=notes,
        empty="No results match the filters.",
    )

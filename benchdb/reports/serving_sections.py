"""The serving sections of `benchdb report --serving`: every load point of an
OpenAI-compatible endpoint (the ``serving_points`` view), each configuration's Pareto front of
output-token throughput per device against interactivity (``serving_frontier``), and, with
``--slo``, the best hardware/engine at the SLO with its cost (the ``bdb_serving_at_slo`` macro).
The SQL is in ``benchdb/sql/views/9x_serving*.sql``, ``benchdb/sql/reports/serving_*.sql`` and
``benchdb/sql/queries/serving_at_slo.sql``;
the plots (throughput per device against interactivity, TTFT against load) are drawn here."""

from __future__ import annotations

import re

from benchdb import sql
from benchdb.errors import BenchdbError
from benchdb.reports.document import Column, Filters, Section, one_row, section_rows
from benchdb.reports.serving_rows import (
    ci,
    config,
    curve_notes,
    figure,
    point_row,
    published_row,
    slo_load,
    window_notes,
    workload,
)
from benchdb.text import plural

#: What ``--slo`` may bound here: TTFT (its p90), TPOT (its p50) and interactivity (tokens/s per user).
SLO_KEYS = ("max_ttft_p90_s", "max_tpot_p50_s", "min_interactivity")
_INTERACTIVITY = re.compile(r"\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*(tok/s|tokens/s)?\s*")


def parse_slo(text: str | None) -> dict[str, float]:
    """``--slo ttft:500ms,tpot:50ms`` (or ``interactivity:20`` tokens/s per user instead of tpot) ->
    {max_ttft_p90_s, max_tpot_p50_s, min_interactivity}: TTFT is bounded at its p90, TPOT at its p50.
    The time bounds are parsed by :func:`benchdb.schema.serving_metrics.parse_slo` (one vocabulary)."""
    from benchdb.schema.serving import TPOT, TTFT
    from benchdb.schema.serving_metrics import parse_slo as parse_bounds

    parts = [p for p in (text or "").split(",") if p.strip()]
    inter = [p for p in parts if p.strip().lower().startswith("interactivity:")]
    bounds = parse_bounds(",".join(p for p in parts if p not in inter))
    other = sorted(set(bounds) - {TTFT, TPOT})
    if other:
        raise BenchdbError(
            f"--slo: the serving report bounds ttft (p90), tpot (p50) and interactivity "
            f"(tokens/s per user), not {', '.join(other)}"
        )
    out = {
        k: v for k, v in (("max_ttft_p90_s", bounds.get(TTFT)), ("max_tpot_p50_s", bounds.get(TPOT))) if v is not None
    }
    if len(inter) > 1:
        raise BenchdbError("--slo: interactivity is bounded twice")
    if inter:
        m = _INTERACTIVITY.fullmatch(inter[0].split(":", 1)[1])
        if m is None or not float(m.group(1)) > 0:
            raise BenchdbError(
                f"--slo part {inter[0].strip()!r}: interactivity is a positive number of "
                "tokens/s per user (e.g. interactivity:20)"
            )
        out["min_interactivity"] = float(m.group(1))
    return out


def describe_slo(slo: dict[str, float]) -> str:
    parts = []
    if slo.get("max_ttft_p90_s") is not None:
        parts.append(f"TTFT p90 <= {slo['max_ttft_p90_s'] * 1e3:g} ms")
    if slo.get("max_tpot_p50_s") is not None:
        parts.append(f"TPOT p50 <= {slo['max_tpot_p50_s'] * 1e3:g} ms")
    if slo.get("min_interactivity") is not None:
        parts.append(f"interactivity >= {slo['min_interactivity']:g} tokens/s per user")
    return " and ".join(parts)


_LOAD_COLUMNS = [
    Column("workload", "workload"),
    Column("hardware / engine / precision", "config"),
    Column("measured by", "measured_by"),
    Column("options", "options_text", compact=False),
    Column("load", "load"),
]


def points_section(con, f: Filters) -> Section:
    keys, rows = section_rows(con, "serving_points", f.params())
    rows = [point_row(r) for r in rows]
    notes = [
        "Percentiles need their requests: p90 10, p99 100 (blank below, never the maximum). p50 95% CIs: "
        "distribution-free order statistics over the requests of every process pooled; TTFT with "
        "`--repeats` takes the hierarchical bootstrap over processes then requests (ttft_ci_method)."
    ]
    errs = [r for r in rows if r.get("errors")]
    if errs:
        notes.append(
            f"{plural(len(errs), 'load point')} had failed requests (errors column): their latencies "
            "describe the requests that completed."
        )
    busy = [r for r in rows if (r.get("client_cpu_pct") or 0) >= 90]
    if busy:
        notes.append(
            f"{plural(len(busy), 'load point')} ran the load generator at 90 % or more of a core: "
            "the client, not the server, may have set their pace."
        )
    notes += window_notes(rows) + curve_notes(rows)
    if not f.slo:
        notes.append(
            "Give `--slo ttft:500ms,tpot:50ms` (or interactivity:20) for the best hardware/engine at "
            "an SLO, and `--prices FILE` for its cost per million tokens."
        )
    return Section(
        "serving_points",
        "Serving load points",
        "One row per load point of an OpenAI-compatible endpoint (the latest valid result of each serving "
        "series): time to first token (TTFT), time per output token after the first (TPOT), inter-token "
        "latency per token (ITL) and end-to-end latency (E2E) over its requests, the throughput of the "
        "load point, and interactivity = 1 / TPOT p50 (tokens/s each user sees).",
        [
            *_LOAD_COLUMNS,
            Column("curve", "curve", compact=False),
            Column("requests", "n_requests", "int"),
            Column("errors", "errors", "int"),
            Column("figures over", "window"),
            Column("TTFT p50", "ttft_p50_s", "ms"),
            Column("TTFT p50 95% CI", "ttft_ci", compact=False),
            Column("TTFT p90", "ttft_p90_s", "ms"),
            Column("TTFT p99", "ttft_p99_s", "ms", compact=False),
            Column("TPOT p50", "tpot_p50_s", "ms"),
            Column("TPOT p50 95% CI", "tpot_ci", compact=False),
            Column("TPOT p90", "tpot_p90_s", "ms", compact=False),
            Column("TPOT p99", "tpot_p99_s", "ms", compact=False),
            Column("ITL p50", "itl_p50_s", "ms", compact=False),
            Column("ITL p90", "itl_p90_s", "ms", compact=False),
            Column("ITL p99", "itl_p99_s", "ms", compact=False),
            Column("E2E p50", "e2e_p50_s", "ms", compact=False),
            Column("E2E p90", "e2e_p90_s", "ms", compact=False),
            Column("E2E p99", "e2e_p99_s", "ms", compact=False),
            Column("req/s", "request_throughput", "num", compact=False),
            Column("out tok/s", "output_throughput", "num", compact=False),
            Column("out tok/s/device", "output_throughput_per_device", "num"),
            Column("goodput req/s", "goodput", "num", compact=False),
            Column("tok/s/user", "interactivity", "num"),
            Column("TTFT p50 turn 1", "ttft_first_turn_p50_s", "ms", compact=False),
            Column("TTFT p50 later turns", "ttft_later_turns_p50_s", "ms", compact=False),
            Column("cache hit %", "cache_hit_pct", "pct", compact=False),
            Column("session p50", "session_p50_s", "ms", compact=False),
            Column("result", "result_id", "result", compact=False),
        ],
        keys,
        rows,
        notes,
        empty="No serving results to report: measure an OpenAI-compatible endpoint with the "
        "openai backend (or import vllm-serve, sglang-serve, aiperf or guidellm "
        "results), then ingest them.",
    )


def frontier_section(con, f: Filters) -> Section:
    keys, rows = section_rows(con, "serving_frontier", f.params())
    rows = [point_row(r) for r in rows]
    return Section(
        "serving_frontier",
        "Serving frontier",
        "Per configuration (hardware x engine x precision x options, for one model, endpoint and token "
        "counts), the load points on its Pareto front of output-token throughput per device against "
        "interactivity: no other load point of it is at least as good on both and better on one. overall: "
        "not beaten by any other configuration either.",
        [
            *_LOAD_COLUMNS,
            Column("out tok/s/device", "output_throughput_per_device", "num"),
            Column("tok/s/user", "interactivity", "num"),
            Column("TTFT p50", "ttft_p50_s", "ms"),
            Column("TPOT p50", "tpot_p50_s", "ms", compact=False),
            Column("overall", "on_overall_front"),
            Column("result", "result_id", "result", compact=False),
        ],
        keys,
        rows,
        empty="No serving load point has both an output throughput and a TPOT.",
    )


def slo_section(con, f: Filters) -> Section:
    params = {
        **f.params(),
        **{k: f.slo.get(k) for k in SLO_KEYS},
        "price_names": list(f.prices),
        "price_values": list(f.prices.values()),
    }
    text = sql.load("queries/serving_at_slo.sql")  # DuckDB only: not among the reports/ queries Spark runs
    cur = con.execute(text, {k: v for k, v in params.items() if f"${k}" in text})
    keys = [d[0] for d in cur.description]
    rows = sql.rows(cur)
    rows = [
        dict(
            r,
            config=config(r),
            workload=workload(r),
            load=slo_load(r),
            throughput_range=ci(
                r.get("output_throughput_per_device_low"), r.get("output_throughput_per_device_high"), 1.0, "tok/s"
            ),
            ttft_ci=ci(r.get("ttft_p50_ci_low_s"), r.get("ttft_p50_ci_high_s")),
            options_text=str(r.get("options") or ""),
        )
        for r in rows
    ]
    notes = []
    if f.prices:
        missing = sorted({r["hardware_name"] for r in rows if r.get("usd_per_hour") is None})
        if missing:
            notes.append("no price for: " + ", ".join(missing) + " (prices match hardware names or ids exactly)")
    misses = sum(1 for r in rows if r.get("slo_status") == "misses_at_min_load")
    if misses:
        notes.append(f"{plural(misses, 'configuration')} miss the SLO at their lowest load: no answer for them.")
    return Section(
        "serving_at_slo",
        f"Best serving configuration at {describe_slo(f.slo)}",
        "Per model, endpoint and token counts, each configuration's most output-token throughput per device "
        "while the SLO holds, best first. Monotone and never extrapolated: a curve counts from its lowest load "
        "to its first load point that misses the SLO, and between that point and the last that meets it every "
        "figure is interpolated linearly in load (status interpolated); holds_at_max_load: the SLO holds at "
        "every load measured (measure higher loads to find its limit). Range: the same answer with TPOT p50 at "
        "the ends of its 95 % CI. Cost: the device-hour price (--prices) over the tokens of each kind.",
        [
            Column("rank", "rank", "int"),
            Column("workload", "workload"),
            Column("hardware / engine / precision", "config"),
            Column("options", "options_text", compact=False),
            Column("status", "slo_status"),
            Column("load", "load"),
            Column("out tok/s/device", "output_throughput_per_device", "num"),
            Column("range (TPOT CI)", "throughput_range", compact=False),
            Column("tok/s/user", "interactivity", "num"),
            Column("TTFT p50", "ttft_p50_s", "ms", compact=False),
            Column("TTFT p50 95% CI", "ttft_ci", compact=False),
            Column("TTFT p90", "ttft_p90_s", "ms"),
            Column("TPOT p50", "tpot_p50_s", "ms", compact=False),
            Column("USD/1M in", "usd_per_m_input_tokens", "num"),
            Column("USD/1M out", "usd_per_m_output_tokens", "num"),
            Column("lower result", "lower_result_id", "result", compact=False),
            Column("upper result", "upper_result_id", "result", compact=False),
        ],
        keys,
        rows,
        notes,
        empty="No serving curve to judge against the SLO.",
    )


def sources_section(con, f: Filters) -> Section:
    keys, rows = section_rows(con, "serving_sources", f.params())
    rows = [
        dict(
            r,
            workload=f"{r.get('model_id')} · {r.get('endpoint')} · {r.get('input_shape')}",
            config=config(r),
            benchdb_text=figure(r["metric"], r.get("benchdb_p50")),
            source_text=figure(r["metric"], r.get("source_p50")),
            same=None if r.get("same_definition") is None else ("yes" if r["same_definition"] else "no"),
            note=r.get("why") if not r.get("recomputed") else r.get("source_definition"),
        )
        for r in rows
    ]
    differ = sum(1 for r in rows if r.get("same_definition") is False)
    notes = (
        [
            f"Defined otherwise than benchdb's (same definition: no): {plural(differ, 'tool figure')}. Compare "
            "the benchdb p50 column across tools, not the tools' own figures."
        ]
        if differ
        else []
    )
    return Section(
        "serving_sources",
        "Imported serving results: the tools' own figures beside benchdb's",
        "Each tool defines TTFT, TPOT and ITL its own way. benchdb recomputes every imported load point from "
        "the tool's per-request data in its own definitions (the rows of the load points above); here, per "
        "figure, benchdb's p50 beside the tool's own p50 of its closest figure, whether the two are defined "
        "the same, and the tool's definition (or why benchdb cannot recompute the figure from its data).",
        [
            Column("workload", "workload"),
            Column("hardware / engine / precision", "config"),
            Column("measured by", "measured_by"),
            Column("metric", "metric"),
            Column("benchdb p50", "benchdb_text"),
            Column("tool's figure", "source_metric"),
            Column("tool's p50", "source_text"),
            Column("same definition", "same"),
            Column("tool's definition / why not recomputed", "note", compact=False),
            Column("result", "result_id", "result", compact=False),
        ],
        keys,
        rows,
        notes,
        empty="No imported serving results (benchdb import vllm-serve|sglang-serve|aiperf|guidellm).",
    )


def published_section(con, f: Filters) -> Section:
    keys, rows = section_rows(con, "serving_published_frontier", f.params())
    rows = [published_row(r) for r in rows]
    count = one_row(con, "serving_published_count", f.params())
    notes = (
        [
            f"{len(rows)} of {plural(count['points'], 'published point')} on {plural(count['systems'], 'system')} "
            "are on their system's front. Each figure is the source's own summary (source_statistics): benchdb "
            "keeps none of its requests, so none has an interval and none is pooled with benchdb's "
            "measurements (the sections above)."
        ]
        if count["points"]
        else []
    )
    return Section(
        "serving_published_frontier",
        "Published serving frontier (summary-only)",
        "Per system (hardware x engine x precision, with its speculative decoding; for one model, endpoint "
        "and token counts), the published load points on its Pareto front of total token throughput per GPU "
        "against interactivity, over every parallelism and concurrency it was published at: no other point "
        "of the system is at least as good on both and better on one. Throughput per GPU is over every GPU "
        "the point used (GPUs); out tok/s/GPU is over the decode GPUs of a multinode point, as InferenceX "
        "publishes it; overall: not beaten by any system's published point either.",
        [
            Column("workload", "workload"),
            Column("system / engine / precision", "system"),
            Column("parallelism", "parallelism_text"),
            Column("GPUs", "accelerators", "int"),
            Column("load", "load"),
            Column("tok/s/GPU", "total_throughput_per_gpu", "num"),
            Column("out tok/s/GPU", "output_throughput_per_gpu", "num", compact=False),
            Column("tok/s/user", "interactivity", "num"),
            Column("TTFT p50", "ttft_p50_s", "ms"),
            Column("TPOT p50", "tpot_p50_s", "ms", compact=False),
            Column("overall", "on_overall_front"),
            Column("figures", "figures", compact=False),
            Column("result", "result_id", "result", compact=False),
        ],
        keys,
        rows,
        notes,
        empty="No published serving point has both a total throughput per GPU and an "
        "interactivity (benchdb import inferencex).",
    )


def sections(con, f: Filters) -> list[Section]:
    """The sections of `--serving`: the load points, the frontier, (with an SLO) the answer at it,
    (when the warehouse holds imported serving results) their tools' own figures, and (when it holds
    published summary-only points) their systems' frontier."""
    out = [points_section(con, f), frontier_section(con, f)]
    published = published_section(con, f)
    if not out[0].rows:  # one reason, not one per section
        if published.rows:
            out[0].empty = (
                "No serving load point with per-request data (benchdb's own, or imported with "
                "its requests); the published summary-only points are below."
            )
        out[1].empty = out[0].empty
    if f.slo:
        out.append(slo_section(con, f))
    if f.cost_at is not None:
        from benchdb.reports.serving_cost import cost_section

        out.append(cost_section(con, f))
    sources = sources_section(con, f)
    if sources.rows:
        out.append(sources)
    if published.rows:
        out.append(published)
    return out

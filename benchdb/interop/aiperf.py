"""NVIDIA AIPerf artifacts: ``profile_export.jsonl`` (one record per request) with the run's summary
``profile_export_aiperf.json`` beside it (``aiperf profile --artifact-dir DIR``).

Each record keeps its send time (``metadata.request_start_ns``, epoch ns), its time to first token
and every gap between streamed chunks (``inter_chunk_latency``, ms), so benchdb rebuilds the
chunk timeline and recomputes TTFT, TPOT, ITL and E2E in its own definitions. Output tokens are
the server's usage (``usage_completion_tokens``) where the server sent one, as in benchdb's own
runs: AIPerf's ``inter_token_latency`` divides by ``output_sequence_length``, which it counts by
re-tokenizing the text with the client's tokenizer unless ``--use-server-token-count`` was given,
and can then differ from the server's count several-fold. Failed requests (``error``) count as
errors; warm-up records are not measured. The summary JSON names the model, the endpoint, the load
(concurrency, or a poisson/gamma/constant rate) and the synthetic lengths, and its figures are
kept as AIPerf computed them. Only the summary (``--export-level summary``) gives a summary-only
result.

A multi-turn run (a record with ``metadata.turn_index`` past 0: ``--conversation-turn-mean``, a
trace with ``session_id``) keeps each request's session (``x_correlation_id``) and turn, so benchdb's
turn figures are computed from them; a fixed turn count (no spread) says how many each session has,
and a cancelled turn cuts its session short. A trace replayed on its timestamps
(``--fixed-schedule``) is the load ``trace:SPEED``, as a benchdb trace run's. Each record's
``usage_prompt_cache_read_tokens`` (the server's cached prompt tokens) is kept where it has one.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from benchdb.errors import clip
from benchdb.interop import load_json, load_json_lines
from benchdb.interop.load_points import LoadPoint, definitions, to_imported
from benchdb.interop.serving_fields import (
    distribution_stats,
    duration,
    number,
    records_in_order,
    summary_accounting,
    tokens,
    turn,
)
from benchdb.interop.writer import Imported, SourceError, utc_iso
from benchdb.schema.serving import E2E, ITL_CHUNK, ITL_TOKEN, OUTPUT_TOKENS, TPOT, TTFT
from benchdb.schema.serving_metrics import RequestRecord

FILES = ("profile_export.jsonl", "profile_export_aiperf.json", "profile_export_aiperf_aggregate.json")
SUMMARY = "profile_export_aiperf.json"
AGGREGATE = "profile_export_aiperf_aggregate.json"
_STATS = {
    "avg": "mean",
    "p50": "p50",
    "p90": "p90",
    "p95": "p95",
    "p99": "p99",
    "min": "min",
    "max": "max",
    "std": "stddev",
    "count": "count",
}
_SUMMARY_METRICS = (
    "time_to_first_token",
    "inter_token_latency",
    "inter_chunk_latency",
    "request_latency",
    "input_sequence_length",
    "output_sequence_length",
    "usage_completion_tokens",
    "request_throughput",
    "output_token_throughput",
    "total_token_throughput",
    "benchmark_duration",
    "request_count",
    "error_request_count",
)


def _definitions(server_counts: bool) -> dict[str, Any]:
    counted = "the server's usage" if server_counts else "the client's tokenizer re-counting the text"
    return definitions(
        {
            TTFT: ("time_to_first_token", "request start -> first response with content", True),
            TPOT: (
                "inter_token_latency",
                f"(request latency - TTFT) / (output_sequence_length - 1), lengths from {counted}",
                server_counts,
            ),
            ITL_CHUNK: ("inter_chunk_latency", "each gap between streamed responses with content", True),
            ITL_TOKEN: (
                None,
                "AIPerf has no per-token gap; benchdb splits each chunk gap over the chunk's tokens",
                False,
            ),
            E2E: ("request_latency", "request start -> last response", True),
            OUTPUT_TOKENS: ("output_sequence_length", counted, server_counts),
        }
    )


def select(found: list[Path]) -> list[Path]:
    """A run's summary JSON is read with its records; alone (``--export-level summary``) it is the run."""
    records = {p.parent for p in found if p.name == "profile_export.jsonl"}
    return [p for p in found if not (p.name == SUMMARY and p.parent in records)]


def _value(metrics: dict, name: str) -> Any:
    m = metrics.get(name)
    return m.get("value") if isinstance(m, dict) else None


def _start_ns(doc: dict, line: int) -> int:
    meta = doc.get("metadata")
    if not isinstance(meta, dict) or not isinstance(meta.get("request_start_ns"), int):
        raise SourceError(f"line {line} is not an AIPerf request record (no metadata.request_start_ns)")
    return meta["request_start_ns"]


def _record(doc: dict, line: int, base_ns: int, ids: dict[str, int] | None) -> RequestRecord:
    """A request on a clock starting at ``base_ns`` (epoch ns in float seconds would lose 0.2 us);
    with ``ids`` (a multi-turn run), its session (numbered by ``ids``) and turn."""
    meta = doc["metadata"]
    sent = (meta["request_start_ns"] - base_ns) / 1e9
    warm = meta.get("benchmark_phase", "profiling") != "profiling" or bool(meta.get("was_cancelled"))
    metrics = doc.get("metrics") or {}
    # one session of a conversation (x_correlation_id): a dataset's conversation may run more than once
    key = meta.get("x_correlation_id") or meta.get("conversation_id")
    session = ids.setdefault(str(key), len(ids)) if ids is not None and key is not None else None
    n = turn(meta.get("turn_index"), f"line {line}: metadata.turn_index") if session is not None else None
    err = doc.get("error")
    if err:
        text = f"HTTP {err.get('code')} {err.get('type')}: {err.get('message')}" if isinstance(err, dict) else str(err)
        return RequestRecord(index=line, sent=sent, error=clip(text), warmup=warm, session=session, turn=n)
    latency = _value(metrics, "request_latency")
    if latency is None:
        raise SourceError(f"line {line}: a completed request without request_latency")
    end = sent + duration(latency, f"line {line}: request_latency") / 1e3
    rec = RequestRecord(index=line, sent=sent, end=end, warmup=warm, session=session, turn=n)
    ttft = _value(metrics, "time_to_first_token")
    if ttft is not None:
        t = sent + duration(ttft, f"line {line}: time_to_first_token") / 1e3
        rec.chunks.append((t, 1))
        gaps = _value(metrics, "inter_chunk_latency") or []
        if not isinstance(gaps, list):
            raise SourceError(f"line {line}: inter_chunk_latency is not a list")
        for g in gaps:
            t += duration(g, f"line {line}: inter_chunk_latency") / 1e3
            rec.chunks.append((t, 1))
    usage_out, osl = _value(metrics, "usage_completion_tokens"), _value(metrics, "output_sequence_length")
    usage_in, isl = _value(metrics, "usage_prompt_tokens"), _value(metrics, "input_sequence_length")
    out, out_name = (usage_out, "usage_completion_tokens") if usage_out is not None else (osl, "output_sequence_length")
    inp, in_name = (usage_in, "usage_prompt_tokens") if usage_in is not None else (isl, "input_sequence_length")
    rec.output_tokens = tokens(out, f"line {line}: {out_name}") if out is not None else None
    rec.input_tokens = tokens(inp, f"line {line}: {in_name}") if inp is not None else None
    cached = _value(metrics, "usage_prompt_cache_read_tokens")
    rec.cached_tokens = tokens(cached, f"line {line}: usage_prompt_cache_read_tokens") if cached is not None else None
    return rec


def _records(path: Path) -> tuple[list[RequestRecord], set[int]]:
    """The requests in send order, and the sessions with a cancelled turn (cut short)."""
    docs = []
    for n, doc in load_json_lines(path, "AIPerf request records, JSON lines"):
        if not isinstance(doc, dict):
            raise SourceError(f"line {n} is not a JSON object")
        docs.append((n, doc, _start_ns(doc, n)))
    base = min(ns for _, _, ns in docs)
    # a multi-turn run (a request past turn 0) keeps its sessions; one-turn records leave them out
    later = any(isinstance(i := d["metadata"].get("turn_index"), int) and i > 0 for _, d, _ in docs)
    ids: dict[str, int] | None = {} if later else None
    records = [_record(doc, n, base, ids) for n, doc, _ in docs]
    cancelled = [r.session for r, (_, d, _) in zip(records, docs, strict=True) if d["metadata"].get("was_cancelled")]
    cut = {s for s in cancelled if s is not None}
    return records_in_order(records), cut


def _accounting(summary: dict) -> str | None:
    """Why the run's own usage totals cannot be its requests' (flagged; they stay as AIPerf wrote them)."""
    return summary_accounting(
        _avg(summary, "total_usage_prompt_tokens"),
        _avg(summary, "total_usage_prompt_cache_read_tokens"),
        _avg(summary, "request_count"),
    )


def _avg(summary: dict, name: str) -> Any:
    m = summary.get(name)
    return m.get("avg") if isinstance(m, dict) else None


def _load(config: dict) -> dict[str, Any]:
    phases = [p for p in config.get("phases") or [] if isinstance(p, dict)]
    prof = next((p for p in phases if p.get("kind", p.get("name")) == "profiling"), phases[-1] if phases else None)
    if prof is None:
        raise SourceError("input_config names no profiling phase (its load)")
    kind = prof.get("type")
    cap = prof.get("concurrency")
    if kind == "concurrency":
        return {"concurrency": int(number(cap, "the profiling phase's concurrency"))}
    if kind == "fixed_schedule":  # a trace replayed on its timestamps, sped up by replay_speedup
        data = (config.get("datasets") or [{}])[0] or {}
        speed = data.get("replay_speedup") if isinstance(data, dict) else None
        return {
            "rate": number(speed, "the dataset's replay_speedup") if speed is not None else 1.0,
            "arrival": "trace",
            "concurrency": int(cap) if cap else None,
        }
    if kind in ("poisson", "gamma", "constant"):
        return {
            "rate": number(prof.get("rate"), "the profiling phase's rate"),
            "arrival": kind,
            "burstiness": float(prof.get("smoothness") or 1.0),
            "concurrency": int(cap) if cap else None,
        }
    raise SourceError(
        f"AIPerf phase type {kind!r} is not a concurrency, a request rate or a trace benchdb can key "
        "(concurrency, poisson, gamma, constant, fixed_schedule)"
    )


def _statistics(summary: dict) -> list[tuple[str, str, str, float]]:
    out = []
    for name in _SUMMARY_METRICS:
        dist = summary.get(name)
        if isinstance(dist, dict):
            out += distribution_stats(name, str(dist.get("unit") or ""), dist, _STATS)
    return out


def _invalid(summary: dict) -> list[str]:
    """Why AIPerf itself says the run is no valid result (schema 1.5: its submission checks)."""
    reasons = [f"aiperf: {r}" for r in summary.get("runtime_submission_invalid_reasons") or [] if isinstance(r, str)]
    if summary.get("was_cancelled"):
        reasons.append("aiperf: the run was cancelled")
    if summary.get("is_complete") is False:
        reasons.append(f"aiperf: incomplete: {clip(str(summary.get('incomplete_reason') or 'no reason given'))}")
    return list(dict.fromkeys(reasons))


def _read_summary(summary_path: Path) -> dict:
    summary = load_json(summary_path)
    if not isinstance(summary, dict) or "aiperf_version" not in summary or "input_config" not in summary:
        raise SourceError(f"{summary_path.name} is not an AIPerf summary (no aiperf_version and input_config)")
    return summary


def parse(path: Path) -> list[Imported]:
    if path.name == AGGREGATE:
        return [_aggregate(path)]
    summary_path = path if path.name.endswith(".json") else path.with_name(SUMMARY)
    if not summary_path.is_file():
        raise SourceError(
            f"no {SUMMARY} beside it (AIPerf writes it with the records; it names the model and the load)"
        )
    summary = _read_summary(summary_path)
    records, cut = (None, set()) if path == summary_path else _records(path)
    point = _point(summary, path, records)
    point.cut = cut
    return [to_imported(point)]


def _turns(summary: dict, records: list[RequestRecord] | None) -> tuple[int | None, str | None]:
    """(turns per conversation where the synthetic dataset fixes them: a mean without spread; the
    workload: ``trace`` for a trace on its timestamps, ``multi-turn`` where the dataset has more
    than one turn or a record a later one, else None)."""
    datasets = (summary.get("input_config") or {}).get("datasets") or [{}]
    turns = (datasets[0] if isinstance(datasets[0], dict) else {}).get("turns") or {}
    mean = turns.get("mean") if isinstance(turns, dict) else None
    mean = mean if isinstance(mean, (int, float)) and not isinstance(mean, bool) else None
    fixed = int(mean) if mean is not None and mean == int(mean) and not turns.get("stddev") else None
    if any(r.turn is not None for r in records or []) or (mean or 0) > 1:
        return fixed, "multi-turn" + (f":turns={fixed}" if fixed else "")
    return fixed, None


def _point(summary: dict, path: Path, records: list[RequestRecord] | None) -> LoadPoint:
    """The load point an AIPerf summary describes (its model, endpoint, load and figures)."""
    config = summary["input_config"] or {}
    endpoint = config.get("endpoint") or {}
    models = [m.get("name") for m in (config.get("models") or {}).get("items") or [] if isinstance(m, dict)]
    if not models or not models[0]:
        raise SourceError("input_config names no model")
    kind = str(endpoint.get("type") or "")
    if kind not in ("chat", "completions"):
        raise SourceError(f"AIPerf endpoint type {kind!r}: only chat and completions are serving load points")
    prompts = ((config.get("datasets") or [{}])[0] or {}).get("prompts") or {}
    isl, osl = (prompts.get("isl") or {}).get("mean"), (prompts.get("osl") or {}).get("mean")
    server_counts = bool(endpoint.get("use_server_token_count"))
    got = summary.get("run_info")
    run_info: dict[str, Any] = got if isinstance(got, dict) else {}
    load = _load(config)
    fixed, workload = _turns(summary, records)
    return LoadPoint(
        tool="aiperf",
        tool_version=summary.get("aiperf_version"),
        model_id=str(models[0]),
        endpoint=kind,
        run_key=str(summary.get("benchmark_id") or path.parent),
        records=records,
        in_tokens=round(isl) if isinstance(isl, (int, float)) else None,
        out_tokens=round(osl) if isinstance(osl, (int, float)) else None,
        started_at=utc_iso(summary.get("start_time"), "start_time"),
        statistics=_statistics(summary),
        definitions=_definitions(server_counts),
        settings={
            "streaming": endpoint.get("streaming"),
            "use_server_token_count": endpoint.get("use_server_token_count"),
            "url": (endpoint.get("urls") or [None])[0],
            "error_summary": summary.get("error_summary"),
            "schema_version": summary.get("schema_version"),
            **({"token_accounting": why} if (why := _accounting(summary)) else {}),
            **{
                f"aiperf_{k}": run_info.get(k)
                for k in ("sweep_id", "trial", "run_label", "variation_values", "cli_command")
                if run_info.get(k) not in (None, {}, "")
            },
        },
        invalid_reasons=_invalid(summary),
        turns=fixed,
        workload="trace" if load.get("arrival") == "trace" else workload,
        **load,
    )


def _aggregate(path: Path) -> Imported:
    """AIPerf's aggregate of N runs of one load point (``--num-profile-runs N``): its figures the
    mean over the runs, each with AIPerf's interval (mean -+ t x se, Student t at its confidence
    level) as ``<stat>_ci_low`` / ``<stat>_ci_high``; model and load from the runs' own summaries."""
    doc = load_json(path)
    if (
        not isinstance(doc, dict)
        or not isinstance(doc.get("metrics"), dict)
        or not isinstance(doc.get("metadata"), dict)
    ):
        raise SourceError(f"{path.name} is not an AIPerf aggregate (no metadata and metrics)")
    meta = doc["metadata"]
    variation = None if path.parent.name == "aggregate" else path.parent.name
    root = path.parent.parent if variation is None else path.parent.parent.parent
    runs = sorted((root / "profile_runs").glob(f"*/{variation}/{SUMMARY}" if variation else f"*/{SUMMARY}"))
    # a run AIPerf left out of the aggregate (failed_runs) names nothing the aggregate stands for
    labels = set(meta.get("run_labels") or [])
    runs = [r for r in runs if not labels or (r.parent.parent if variation else r.parent).name in labels] or runs
    if not runs:
        raise SourceError(
            f"no run's {SUMMARY} under {root / 'profile_runs'}: the aggregate names no model or load "
            "(keep AIPerf's profile_runs folder beside aggregate)"
        )
    point = _point(_read_summary(runs[0]), runs[0], None)
    stats: list[tuple[str, str, str, float]] = []
    for name in _SUMMARY_METRICS:
        for key, stat in _STATS.items():
            entry = doc["metrics"].get(f"{name}_{key}")
            if not isinstance(entry, dict):
                continue
            unit = str(entry.get("unit") or "")
            # no t (one run had the figure): AIPerf writes ci_low = ci_high = mean, which is no interval
            t = entry.get("t_critical")
            fields: tuple[tuple[str, str], ...] = (("mean", ""), ("ci_low", "_ci_low"), ("ci_high", "_ci_high"))
            if not (isinstance(t, (int, float)) and math.isfinite(t)):
                fields = fields[:1]
            for field, suffix in fields:
                stats += distribution_stats(name, unit, {field: entry.get(field)}, {field: stat + suffix})
    if not stats:
        raise SourceError(f"{path.name}: no figure of the metrics benchdb reads (time_to_first_token_avg, ...)")
    n = meta.get("num_successful_runs")
    point.statistics = stats
    point.run_key = f"{point.run_key}|aggregate"
    # validity is the aggregate's own: a run AIPerf excluded does not make it invalid
    point.invalid_reasons = [f"aiperf: {r}" for r in meta.get("submission_invalid_reasons") or [] if isinstance(r, str)]
    point.engine_options = {**point.engine_options, "aggregate_of_runs": n}
    point.settings = {
        **{k: v for k, v in point.settings.items() if not k.startswith("aiperf_")},
        "aggregate": {
            "runs": meta.get("num_profile_runs"),
            "successful_runs": n,
            "failed_runs": meta.get("failed_runs") or [],
            "confidence_level": meta.get("confidence_level"),
            "run_labels": meta.get("run_labels"),
            "method": "AIPerf's: mean over runs -+ t x std / sqrt(runs), Student t, runs - 1 degrees of freedom",
            "schema_version": doc.get("schema_version"),
        },
    }
    if meta.get("single_run"):
        point.invalid_reasons.append("aiperf: an aggregate of one successful run has no interval")
    return to_imported(point)

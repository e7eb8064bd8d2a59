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
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from benchdb.errors import clip
from benchdb.interop import load_json, load_json_lines
from benchdb.interop.serving import LoadPoint, definitions, to_imported
from benchdb.interop.serving_fields import distribution_stats, duration, number, records_in_order, tokens
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


def _record(doc: dict, line: int, base_ns: int) -> RequestRecord:
    """A request on a clock starting at ``base_ns`` (epoch ns in float seconds would lose 0.2 us)."""
    meta = doc["metadata"]
    sent = (meta["request_start_ns"] - base_ns) / 1e9
    warm = meta.get("benchmark_phase", "profiling") != "profiling" or bool(meta.get("was_cancelled"))
    metrics = doc.get("metrics") or {}
    err = doc.get("error")
    if err:
        text = f"HTTP {err.get('code')} {err.get('type')}: {err.get('message')}" if isinstance(err, dict) else str(err)
        return RequestRecord(index=line, sent=sent, error=clip(text), warmup=warm)
    latency = _value(metrics, "request_latency")
    if latency is None:
        raise SourceError(f"line {line}: a completed request without request_latency")
    end = sent + duration(latency, f"line {line}: request_latency") / 1e3
    rec = RequestRecord(index=line, sent=sent, end=end, warmup=warm)
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
    return rec


def _records(path: Path) -> list[RequestRecord]:
    docs = []
    for n, doc in load_json_lines(path, "AIPerf request records, JSON lines"):
        if not isinstance(doc, dict):
            raise SourceError(f"line {n} is not a JSON object")
        docs.append((n, doc, _start_ns(doc, n)))
    base = min(ns for _, _, ns in docs)
    return records_in_order(_record(doc, n, base) for n, doc, _ in docs)


def _load(config: dict) -> dict[str, Any]:
    phases = [p for p in config.get("phases") or [] if isinstance(p, dict)]
    prof = next((p for p in phases if p.get("kind", p.get("name")) == "profiling"), phases[-1] if phases else None)
    if prof is None:
        raise SourceError("input_config names no profiling phase (its load)")
    kind = prof.get("type")
    cap = prof.get("concurrency")
    if kind == "concurrency":
        return {"concurrency": int(number(cap, "the profiling phase's concurrency"))}
    if kind in ("poisson", "gamma", "constant"):
        return {
            "rate": number(prof.get("rate"), "the profiling phase's rate"),
            "arrival": kind,
            "burstiness": float(prof.get("smoothness") or 1.0),
            "concurrency": int(cap) if cap else None,
        }
    raise SourceError(
        f"AIPerf phase type {kind!r} is not a concurrency or a request rate benchdb can key "
        "(concurrency, poisson, gamma, constant)"
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
    records = None if path == summary_path else _records(path)
    return [to_imported(_point(summary, path, records))]


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
            **{
                f"aiperf_{k}": run_info.get(k)
                for k in ("sweep_id", "trial", "run_label", "variation_values", "cli_command")
                if run_info.get(k) not in (None, {}, "")
            },
        },
        invalid_reasons=_invalid(summary),
        **_load(config),
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

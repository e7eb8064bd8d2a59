"""llm-d Benchmark Report v0.1 (llm-d/llm-d-benchmark, ``analysis/benchmark_report/schema_v0_1.py``):
one serving load point per report, YAML or JSON, written beside a harness's native result as
``benchmark_report,_<native file>.yaml``.

- ``scenario.host``: one entry per serving instance, ``type`` replica, or prefill and decode for a
  disaggregated deployment, each with its ``accelerator`` (model, memory GB, count, parallelism
  dp/tp/pp/ep) and its engine (``scenario.platform.engine``: name, version, args). The
  accelerators of a result are the sum of the instances' counts; each instance is kept in
  ``options.parallelism.instances``.
- ``scenario.model`` (name, quantization: the precision), ``scenario.load`` (the harness: its name
  and type; its args are harness-native, so the load is read from the keys harnesses use:
  concurrency / max_concurrency / num_users / streams, else a rate: rate / request_rate /
  qps_values).
- ``metrics``: every figure is the report's own (summary-only), converted to benchdb's names and
  seconds (its units: ms or s, ms/token or s/token): TTFT, TPOT (``time_per_output_token``), E2E
  (``request_latency``) and the report's ITL under its own name; throughputs per GPU over all the
  accelerators; request counts and failures.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from benchdb.interop.writer import Imported, SourceError, utc_iso
from benchdb.schema.serving import E2E, TPOT, TTFT
from benchdb.schema.system import vendor_kind

FILES = ("benchmark_report*.yaml", "benchmark_report*.yml", "benchmark_report*.json")
VERSION = "0.1"
_STATS = {"mean": "mean", "p50": "median", "p90": "p90", "p99": "p99", "stddev": "stddev", "min": "min", "max": "max"}
_TIMES = {
    "time_to_first_token": (TTFT, {"ms": 1e-3, "s": 1.0}),
    "time_per_output_token": (TPOT, {"ms/token": 1e-3, "s/token": 1.0}),
    "request_latency": (E2E, {"ms": 1e-3, "s": 1.0}),
    "inter_token_latency": ("llmd_inter_token_latency_s", {"ms/token": 1e-3, "s/token": 1.0}),
}
_CONCURRENCY_KEYS = ("concurrency", "max_concurrency", "num_users", "streams")
_RATE_KEYS = ("rate", "request_rate", "qps_values")


def _number(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise SourceError(f"{what} is {value!r}, not a non-negative number")
    return float(value)


def _stats(metrics: dict[str, Any]) -> list[tuple[str, str, str, float]]:
    out: list[tuple[str, str, str, float]] = []
    latency = metrics.get("latency") or {}
    for key, (metric, scales) in _TIMES.items():
        block = latency.get(key)
        if not isinstance(block, dict):
            continue
        units = str(block.get("units"))
        if units not in scales:
            raise SourceError(f"metrics.latency.{key}.units is {units!r}; the schema allows {', '.join(scales)}")
        for src, stat in _STATS.items():
            if block.get(src) is not None:
                out.append((metric, "s", stat, _number(block[src], f"metrics.latency.{key}.{src}") * scales[units]))
    return out


def _instances(scenario: dict[str, Any]) -> list[dict[str, Any]]:
    host = scenario.get("host") or {}
    accs = host.get("accelerator") or []
    kinds = host.get("type") or ["replica"] * len(accs)
    engines = (scenario.get("platform") or {}).get("engine") or []
    if len(kinds) != len(accs) or (engines and len(engines) != len(accs)):
        raise SourceError(
            "scenario.host.type, .accelerator and platform.engine differ in length (one entry each per instance)"
        )
    out = []
    for i, acc in enumerate(accs):
        if not isinstance(acc, dict) or not acc.get("model"):
            raise SourceError(f"scenario.host.accelerator[{i}] names no model")
        engine = engines[i] if i < len(engines) and isinstance(engines[i], dict) else {}
        out.append(
            {
                "type": kinds[i],
                "accelerator": str(acc["model"]),
                "count": int(_number(acc.get("count", 1), f"scenario.host.accelerator[{i}].count")),
                "memory_gb": acc.get("memory"),
                "parallelism": {
                    k: v for k, v in (acc.get("parallelism") or {}).items() if k in ("dp", "tp", "pp", "ep")
                },
                "engine": engine.get("name"),
                "engine_version": engine.get("version"),
                "engine_args": engine.get("args") or {},
            }
        )
    return out


def _load(load: dict[str, Any]) -> tuple[str, int]:
    """(input_shape part, batch size) from the harness-native load args."""
    got = load.get("args")
    args: dict[str, Any] = got if isinstance(got, dict) else {}
    for key in _CONCURRENCY_KEYS:
        value = args.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
            return f"concurrency={int(value)}", int(value)
    for key in _RATE_KEYS:
        value = args.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
            return f"rate=poisson:{float(value):g}", 1
    return f"load={load.get('name')}:{load.get('type') or 'default'}", 1


def parse(path: Path) -> list[Imported]:
    from benchdb.schema import documents

    try:
        doc = documents.read_document(path)
    except documents.DocumentError as exc:
        raise SourceError(exc.problem) from None
    if not isinstance(doc, dict) or str(doc.get("version")) != VERSION or "scenario" not in doc or "metrics" not in doc:
        raise SourceError(f"not an llm-d Benchmark Report v{VERSION} (version, scenario and metrics)")
    scenario, metrics = doc["scenario"], doc["metrics"]
    model = (scenario.get("model") or {}).get("name")
    if not model:
        raise SourceError("scenario.model.name is missing (the model served)")
    load = scenario.get("load") or {}
    instances = _instances(scenario)
    gpus = sum(i["count"] for i in instances)
    stats = _stats(metrics)
    throughput = metrics.get("throughput") or {}
    for key, metric in (
        ("total_tokens_per_sec", "total_throughput"),
        ("output_tokens_per_sec", "output_throughput"),
        ("input_tokens_per_sec", "input_throughput"),
        ("requests_per_sec", "request_throughput"),
    ):
        if throughput.get(key) is not None:
            value = _number(throughput[key], f"metrics.throughput.{key}")
            stats.append((metric, "tokens/s" if "tokens" in key else "requests/s", "value", value))
            if gpus and "tokens" in key:
                stats.append((f"{metric}_per_gpu", "tokens/s", "value", value / gpus))
    if not stats:
        raise SourceError("metrics has no latency or throughput figures")
    requests = metrics.get("requests") or {}
    lengths: dict[str, Any] = {k: (requests.get(f"{k}_length") or {}).get("mean") for k in ("input", "output")}
    load_shape, batch = _load(load)
    parts = [
        f"{short}={round(lengths[k])}"
        for k, short in (("input", "in"), ("output", "out"))
        if isinstance(lengths[k], (int, float))
    ]
    shape = ",".join([*parts, load_shape])
    first = instances[0] if instances else {}
    kinds = {i["type"] for i in instances}
    time = metrics.get("time") or {}
    options: dict[str, Any] = {
        "engine": first.get("engine") or "openai",
        "load_generator": f"llm-d {load.get('name') or 'harness'}",
        "accelerators": gpus or None,
        "parallelism": {"disaggregated": kinds >= {"prefill", "decode"}, "instances": instances} if instances else None,
    }
    vendor, kind = vendor_kind(first.get("accelerator"))
    hardware = (
        {"kind": kind, "vendor": vendor, "device_name": first["accelerator"], "system_name": first["accelerator"]}
        if instances
        else {"kind": "unknown", "device_name": "unknown (the report names no accelerator)"}
    )
    return [
        Imported(
            model_id=str(model),
            backend=str(first.get("engine") or "openai"),
            device="unknown",
            mode="completions",
            precision=str((scenario.get("model") or {}).get("quantization") or "unknown").lower(),
            batch_size=batch,
            input_shape=shape,
            primary_metric=TTFT,
            options={k: v for k, v in options.items() if v is not None},
            hardware=hardware,
            model={"model_type": "llm", "architecture": "openai-endpoint", "task": "text-generation"},
            started_at=utc_iso(time.get("start"), "metrics.time.start") if time.get("start") is not None else None,
            run_key=str(doc["metadata"].get("eid") or "") if isinstance(doc.get("metadata"), dict) else "",
            timing_method="source-client",
            tool=f"llm-d benchmark report v{VERSION}",
            summary_only=True,
            percentile_method="linear",
            statistics=stats,
            settings={
                "task": "text-generation",
                "requests": requests.get("total"),
                "failures": requests.get("failures"),
                "incomplete": requests.get("incomplete"),
                "duration_s": time.get("duration"),
                "load": {"name": load.get("name"), "type": load.get("type")},
                "adapters": (scenario.get("model") or {}).get("adapters"),
            },
        )
    ]

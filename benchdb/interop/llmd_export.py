"""`benchdb export --format llm-d`: each measured serving load point as an llm-d Benchmark Report
v0.1 (``benchmark_report,_benchdb-<result>.yaml``), so llm-d's analysis tools read benchdb's points.

What benchdb measured goes where the schema puts it: the model and precision, the server's
hardware and its devices, the engine, the load, request counts, each per-request distribution over
the completed requests (TTFT and E2E in s, TPOT and ITL per token in s/token, lengths in count:
mean, population stddev, min, max, p50, p90, p95, p99) and the throughputs. The schema's load
generators are a fixed list (aiperf, guidellm, inferencemax, inference-perf, vllm-benchmark, nop):
a point imported from one of those tools names it; benchdb's own points say ``nop`` with
``metadata.generator`` naming benchdb, since the list has no other way to. Summary-only points
(published figures without requests) are not exported: the schema's Statistics need a mean.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from benchdb import __version__, sql
from benchdb.errors import BenchdbError

_GENERATORS = {"aiperf": "aiperf", "guidellm": "guidellm", "vllm bench serve": "vllm-benchmark"}
_LATENCY = {
    "ttft_s": ("time_to_first_token", "s"),
    "tpot_s": ("time_per_output_token", "s/token"),
    "itl_token_s": ("inter_token_latency", "s/token"),
    "e2e_s": ("request_latency", "s"),
}


def _stats(d: dict[str, Any], units: str) -> dict[str, Any]:
    out: dict[str, Any] = {"units": units}
    for key in ("mean", "stddev", "min", "max", "p50", "p90", "p95", "p99"):
        value = d.get(key)
        if value is not None and math.isfinite(value):
            out[key] = float(value)
    return out


def report(r: dict[str, Any]) -> dict[str, Any] | None:
    """The v0.1 report of one serving_points row (None: no per-request distribution to give)."""
    dists = {d["metric"]: d for d in r.get("distributions") or [] if d and d.get("metric")}
    if "ttft_s" not in dists or dists["ttft_s"].get("mean") is None:
        return None
    generator = next((g for name, g in _GENERATORS.items() if str(r.get("measured_by") or "").startswith(name)), "nop")
    load_args = {
        "concurrency": r.get("concurrency"),
        "request_rate": r.get("request_rate"),
        "arrival": r.get("arrival"),
        "input_tokens": r.get("in_tokens"),
        "output_tokens": r.get("out_tokens"),
    }
    devices = int(r.get("devices") or 1)
    lengths = {
        k: _stats(dists[m], "count")
        for k, m in (("input_length", "input_tokens"), ("output_length", "output_tokens"))
        if m in dists
    }
    return {
        "version": "0.1",
        "metadata": {
            "generator": f"benchdb {__version__}",
            "measured_by": str(r.get("measured_by") or "benchdb"),
            "result_id": r["result_id"],
            "series_id": r["series_id"],
            "input_shape": r["input_shape"],
        },
        "scenario": {
            "description": f"benchdb serving load point {r['input_shape']}",
            "host": {"type": ["replica"], "accelerator": [{"model": str(r["hardware_name"]), "count": devices}]},
            "platform": {
                "engine": [
                    {
                        "name": str(r["engine"]),
                        **({"version": str(r["engine_version"])} if r.get("engine_version") else {}),
                    }
                ]
            },
            "model": {"name": str(r["model_id"]), "quantization": str(r["precision"])},
            "load": {
                "name": generator,
                "type": str(r.get("load_kind") or "concurrency"),
                "args": {k: v for k, v in load_args.items() if v is not None},
                **(
                    {"metadata": {"generator": f"benchdb {__version__} (not in the schema's list)"}}
                    if generator == "nop"
                    else {}
                ),
            },
        },
        "metrics": {
            "time": {"duration": float(r.get("window_s") or 0.0)},
            "requests": {"total": int(r.get("n_requests") or 0), "failures": int(r.get("errors") or 0), **lengths},
            "latency": {name: _stats(dists[m], units) for m, (name, units) in _LATENCY.items() if m in dists},
            "throughput": {
                k: float(r[col])
                for k, col in (
                    ("output_tokens_per_sec", "output_throughput"),
                    ("total_tokens_per_sec", "total_throughput"),
                    ("input_tokens_per_sec", "input_throughput"),
                    ("requests_per_sec", "request_throughput"),
                )
                if r.get(col) is not None
            },
        },
    }


def export(con, out: Path, models: list[str]) -> tuple[int, int]:
    """(serving load points found, reports written) into the folder ``out``."""
    import yaml

    from benchdb.paths import inside, write_atomic

    rows = sql.rows(con.execute(sql.load("interop/export_llmd.sql"), {"models": models or None}))
    if not rows:
        raise BenchdbError(
            "no measured serving load points (benchdb's own, or imported with their requests) to export as llm-d"
        )
    out.mkdir(parents=True, exist_ok=True)
    n = 0
    for r in rows:
        doc = report(r)
        if doc is None:
            continue
        path = inside(out, out / f"benchmark_report,_benchdb-{r['result_id'][:16]}.yaml")
        write_atomic(path, yaml.safe_dump(doc, sort_keys=True, indent=2).encode())
        n += 1
    return len(rows), n

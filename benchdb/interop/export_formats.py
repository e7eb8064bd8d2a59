"""`benchdb export`: the warehouse's results in other tools' formats.

- ``hud-v3``: JSON lines, one PyTorch HUD v3 record per result x metric; ``benchmark_values`` are
  the raw samples, ``metric.extra_info`` holds benchdb's unit, n and median, and
  ``benchmark.extra_info.benchdb`` the full scenario key, so `benchdb import hud-v3` gives back
  the same samples (same medians and counts).
- ``optimum-benchmark``: one ``benchmark.json`` (``{"config", "report"}``) per result, in a folder
  per result; the report's targets hold the raw latency values.
- ``vllm-serve``: one ``vllm bench serve --save-result --save-detailed`` JSON (vLLM 0.33.0's
  layout) per serving load point with a chunk timeline: every request in send order (failed ones
  in place, as vLLM keeps them), its TTFT, chunk gaps, E2E and tokens, and vLLM's summary figures
  computed from them in vLLM's way (mean, median, population std, linear p99); its TPOT and ITL
  are then benchdb's own, and ``latencies`` hold benchdb's E2E (to the end of the stream, where
  vLLM's end at the last chunk), so `benchdb import vllm-serve` gives back the same medians.

- ``llm-d``: one llm-d Benchmark Report v0.1 per measured serving load point
  (:mod:`benchdb.interop.llmd_export`).

Only results with samples are exported (a summary-only import has none to give).
"""

from __future__ import annotations

import itertools
import json
import math
import statistics
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from benchdb import __version__, sql
from benchdb.errors import BenchdbError
from benchdb.interop import formats
from benchdb.paths import inside, write_atomic
from benchdb.schema import identity

#: benchdb metric -> optimum-benchmark report target (latency values)
OPTIMUM_TARGETS = {
    "latency_s": "forward",
    "ttft_s": "prefill",
    "tpot_s": "per_token",
    "generate_s": "generate",
    "decode_s": "decode",
    "load_s": "load_model",
    "first_call_s": "first_forward",
}
_DTYPES = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16"}


def _rows(con, models: list[str]) -> tuple[list[dict], dict[str, dict[str, dict]]]:
    results = sql.rows(con.execute(sql.load("interop/export_results.sql"), {"models": models}))
    samples: dict[str, dict[str, dict]] = {}
    if results:
        cur = con.execute(sql.load("interop/export_samples.sql"), {"ids": [r["result_id"] for r in results]})
        for d in sql.rows(cur):
            samples.setdefault(d["result_id"], {})[d["metric"]] = d
    return results, samples


def _key(r: dict) -> dict[str, Any]:
    return {
        **{k: r[k] for k in ("result_id", "run_id", *identity.SCENARIO_FIELDS, "primary_metric")},
        "options": json.loads(r["options"] or "{}"),
        "hardware": json.loads(r["fingerprint"] or "{}"),
        "host": r["host"],
        "git_commit": r["git_commit"],
        "started_at": r["started_at"],
        "timing_method": r["timing_method"],
    }


def hud_records(results: list[dict], samples: dict) -> Iterator[dict]:
    for r in results:
        hw = json.loads(r["fingerprint"] or "{}")
        gpu = hw.get("kind") not in ("cpu", None)
        for metric, s in samples.get(r["result_id"], {}).items():
            yield {
                "benchmark": {
                    "name": "benchdb",
                    "mode": "inference",
                    "dtype": r["precision"],
                    "extra_info": {
                        "device": r["device"],
                        "batch_size": r["batch_size"],
                        "input_shape": r["input_shape"],
                        "benchdb": _key(r),
                    },
                },
                "model": {
                    "name": r["model_id"],
                    "type": r["model_type"],
                    "backend": r["backend"],
                    "origins": ["benchdb"],
                },
                "metric": {
                    "name": metric,
                    "benchmark_values": list(s["vals"]),
                    "target_value": None,
                    "extra_info": {"benchdb_metric": metric, "unit": s["unit"], "n": s["n"], "median": s["median"]},
                },
                "runners": [
                    {
                        "name": r["device"],
                        "type": hw.get("device_name"),
                        "cpu_info": hw.get("cpu_model"),
                        "cpu_count": hw.get("cores_logical"),
                        "gpu_info": hw.get("device_name") if gpu else None,
                        "gpu_count": 1 if gpu else 0,
                        "avail_gpu_mem_in_gb": round(hw["memory_bytes"] / 2**30, 3)
                        if gpu and hw.get("memory_bytes")
                        else None,
                        "extra_info": {"hardware_id": r["hardware_id"]},
                    }
                ],
                "dependencies": {"benchdb": {"version": r["benchdb_version"] or __version__}},
                "timestamp": r["started_at"],
            }


def _latency(values: list[float], s: dict) -> dict:
    return {
        "unit": "s",
        "values": list(values),
        "count": len(values),
        "total": sum(values),
        "mean": s["mean"],
        "p50": s["median"],
        "p90": s["p90"],
        "p95": s["p95"],
        "p99": s["p99"],
        "stdev": s["stddev"],
    }


def optimum_document(r: dict, metrics: dict[str, dict]) -> dict:
    hw = json.loads(r["fingerprint"] or "{}")
    opts = json.loads(r["options"] or "{}")
    report: dict[str, Any] = {}
    for metric, s in metrics.items():
        target = OPTIMUM_TARGETS.get(metric)
        if target and s["unit"] == "s":
            report[target] = {
                "latency": _latency(s["vals"], s),
                "throughput": None,
                "memory": None,
                "energy": None,
                "efficiency": None,
            }
    shape = identity.shape_fields(r["input_shape"])
    new_tokens = shape.pop("new_tokens", None)
    gpu = hw.get("kind") not in ("cpu", None)
    device, _, index = r["device"].partition(":")
    config = {
        "name": f"benchdb-{r['result_id'][:12]}",
        "backend": {
            "name": r["backend"],
            "version": __version__,
            "model": r["model_id"],
            "task": r["task"],
            "device": device,
            "device_ids": index or None,
            "torch_dtype": _DTYPES.get(r["precision"], r["precision"]),
            "torch_compile": r["mode"] == "compile",
            "intra_op_num_threads": opts.get("threads"),
            "benchdb": _key(r),
        },
        "scenario": {
            "name": "inference",
            "input_shapes": {"batch_size": r["batch_size"], **shape},
            "new_tokens": int(new_tokens) if new_tokens and new_tokens.isdigit() else None,
        },
        "environment": {
            "cpu": hw.get("cpu_model") or hw.get("device_name"),
            "cpu_count": hw.get("cores_logical"),
            "machine": hw.get("arch"),
            "platform": hw.get("os"),
            "gpu": [hw.get("device_name")] if gpu else [],
            "gpu_count": 1 if gpu else 0,
            "gpu_vram_mb": hw["memory_bytes"] / 2**20 if gpu and hw.get("memory_bytes") else None,
            "benchdb_version": r["benchdb_version"],
        },
    }
    return {"config": config, "report": report}


def _stats(name: str, values_s: list[float]) -> dict[str, float]:
    """vLLM's summary of a metric (ms): mean, median, population std, p99 (0.0 when empty, as vLLM)."""
    from benchdb.schema.serving_metrics import percentile

    if not values_s:
        return {f"mean_{name}_ms": 0.0, f"median_{name}_ms": 0.0, f"std_{name}_ms": 0.0, f"p99_{name}_ms": 0.0}
    return {
        f"mean_{name}_ms": statistics.fmean(values_s) * 1e3,
        f"median_{name}_ms": statistics.median(values_s) * 1e3,
        f"std_{name}_ms": statistics.pstdev(values_s) * 1e3,
        f"p99_{name}_ms": (percentile(values_s, 99, need_min_n=False) or 0.0) * 1e3,
    }


def vllm_document(r: dict, requests: list[dict]) -> dict:
    """One serving result as ``vllm bench serve --save-result --save-detailed`` writes it."""
    shape = identity.shape_fields(r["input_shape"])
    rate = shape.get("rate", "inf").split(":")
    arrival, rate_value = (rate[0], float(rate[1])) if len(rate) > 1 else ("poisson", math.inf)
    burst = float(rate[2]) if len(rate) > 2 else 1.0
    cap = shape.get("concurrency") or shape.get("max_concurrency")
    lists: dict[str, list] = {
        k: [] for k in ("input_lens", "output_lens", "ttfts", "itls", "latencies", "start_times", "errors")
    }
    # Processes (--repeats) one after another on one clock: each starts where the previous window ended.
    window = {q["process"]: q["window_s"] for q in requests if q["window_s"] is not None}
    starts: dict[int, float] = {}
    windows = 0.0
    for proc in sorted({q["process"] for q in requests}):
        starts[proc] = windows
        windows += window.get(proc, 0.0)
    for q in requests:
        if q["sent_s"] is None:  # only the process's window row
            continue
        lists["start_times"].append(starts[q["process"]] + q["sent_s"])
        lists["input_lens"].append(int(q["input_tokens"] or 0))
        done = not q["failed"] and q["ttft_s"] is not None
        times = list(q["chunk_times"] or [])
        lists["ttfts"].append(q["ttft_s"] if done else 0.0)
        lists["itls"].append([b - a for a, b in itertools.pairwise(times)] if done else [])
        lists["latencies"].append(q["e2e_s"] if done and q["e2e_s"] is not None else 0.0)
        lists["output_lens"].append(int(q["output_tokens"] or 0) if done else 0)
        lists["errors"].append("" if done else "failed (benchdb: request_error)")
    ok = [i for i, e in enumerate(lists["errors"]) if not e]
    duration = windows or (
        max((lists["start_times"][i] + lists["latencies"][i] for i in ok), default=0.0)
        - min(lists["start_times"], default=0.0)
    )
    out_tokens = sum(lists["output_lens"][i] for i in ok)
    in_tokens = sum(lists["input_lens"][i] for i in ok)
    tpots = [
        (lists["latencies"][i] - lists["ttfts"][i]) / (lists["output_lens"][i] - 1)
        for i in ok
        if lists["output_lens"][i] > 1
    ]
    opts = json.loads(r["options"] or "{}")
    # vLLM dates its file when the run ends; `--metadata` values are text.
    started = datetime.fromisoformat(r["started_at"]) if r["started_at"] else datetime.now(timezone.utc)
    date = (started.astimezone(timezone.utc) + timedelta(seconds=duration)).strftime("%Y%m%d-%H%M%S")
    from benchdb.interop.serving_fields import ENGINE_OPTIONS

    metadata = {k: str(opts[k]) for k in ENGINE_OPTIONS if opts.get(k) is not None}
    if "dtype" not in metadata and r["precision"] in _DTYPES:
        metadata["dtype"] = _DTYPES[r["precision"]]
    doc: dict[str, Any] = {
        "date": date,
        "endpoint_type": "openai-chat" if r["mode"] == "chat" else "openai",
        "backend": "openai-chat" if r["mode"] == "chat" else "openai",
        "label": f"benchdb-{r['result_id'][:12]}",
        "model_id": r["model_id"],
        "tokenizer_id": r["model_id"],
        "num_prompts": len(lists["errors"]),
        **metadata,
        "benchdb_result_id": r["result_id"],
        "benchdb_hardware": str(json.loads(r["fingerprint"] or "{}").get("device_name") or "unknown"),
        "benchdb_engine": str(opts.get("engine") or r["backend"]),
        "benchdb_input_shape": r["input_shape"],
        "benchdb_arrival": arrival,
        "request_rate": "inf" if math.isinf(rate_value) else rate_value,
        "burstiness": burst if arrival == "gamma" else 1.0,
        "max_concurrency": int(cap) if cap else None,
        "duration": duration,
        "completed": len(ok),
        "failed": len(lists["errors"]) - len(ok),
        "total_input_tokens": in_tokens,
        "total_output_tokens": out_tokens,
        "request_throughput": len(ok) / duration if duration else 0.0,
        "request_goodput": None,
        "output_throughput": out_tokens / duration if duration else 0.0,
        "total_token_throughput": (in_tokens + out_tokens) / duration if duration else 0.0,
        **{k: lists[k] for k in ("input_lens", "output_lens", "ttfts", "itls", "latencies", "start_times")},
        "generated_texts": [""] * len(lists["errors"]),
        "errors": lists["errors"],
    }
    for name, values in (
        ("ttft", [lists["ttfts"][i] for i in ok]),
        ("tpot", tpots),
        ("itl", [g for i in ok for g in lists["itls"][i]]),
        ("e2el", [lists["latencies"][i] for i in ok]),
    ):
        doc.update(_stats(name, values))
    return doc


def _export_vllm(con, results: list[dict], out: str) -> int:
    serving = [r for r in results if r["mode"] in ("completions", "chat") and r["status"] == "ok"]
    if not serving:
        raise BenchdbError("no serving results (modes completions, chat) to export as vllm-serve")
    cur = con.execute(sql.load("interop/export_serving_requests.sql"), {"ids": [r["result_id"] for r in serving]})
    by_result: dict[str, list[dict]] = {}
    for d in sql.rows(cur):
        by_result.setdefault(d["result_id"], []).append(d)
    n = 0
    for r in serving:
        requests = by_result.get(r["result_id"], [])
        if not any(q["chunk_times"] for q in requests):
            continue  # no chunk timeline (a GuideLLM import): vLLM's ITL cannot be given
        doc = vllm_document(r, requests)
        rate = doc["request_rate"]
        cap = f"-concurrency{doc['max_concurrency']}" if doc["max_concurrency"] else ""
        name = f"{doc['label']}-{rate}qps{cap}-{r['model_id'].rstrip('/').split('/')[-1]}-{doc['date']}.json"
        _write_text(inside(out, Path(out) / name), json.dumps(doc, indent=2) + "\n")
        n += 1
    return n


def export(db, fmt: str, out: str, models: list[str] | None = None) -> tuple[int, int]:
    """Write the export; returns (results, records or files written)."""
    from benchdb.warehouse import Warehouse

    if fmt not in formats.export_names():
        raise BenchdbError(f"unknown export format {fmt!r}; choose one of {', '.join(formats.export_names())}")
    wh = Warehouse(db)
    if not wh.path.exists():
        raise BenchdbError(f"{wh.path}: no such warehouse; run `benchdb ingest` first or pass --db")
    if fmt == "llm-d":  # per serving load point, its distributions from its own query
        from benchdb.interop import llmd_export

        with wh.reading() as con:
            return llmd_export.export(con, Path(out), list(models or []))
    if fmt == "vllm-serve":  # per request, from its own query: not every sample of every result
        with wh.reading() as con:
            found = sql.rows(con.execute(sql.load("interop/export_results.sql"), {"models": list(models or [])}))
            written = _export_vllm(con, found, out)
        return written, written
    with wh.reading() as con:
        results, samples = _rows(con, list(models or []))
    if not results:
        raise BenchdbError(
            f"{wh.path}: no results with samples to export" + (f" for model(s) {', '.join(models)}" if models else "")
        )
    if fmt == "hud-v3":
        lines = [json.dumps(rec, sort_keys=True) for rec in hud_records(results, samples)]
        _write_text(out, "\n".join(lines) + "\n")
        return len(results), len(lines)
    folder = Path(out)
    n = 0
    for r in results:
        doc = optimum_document(r, samples.get(r["result_id"], {}))
        if not doc["report"]:
            continue
        target = folder / f"{r['model_id'].replace('/', '_')}-{r['result_id'][:12]}" / "benchmark.json"
        _write_text(inside(folder, target), json.dumps(doc, indent=2, sort_keys=True) + "\n")
        n += 1
    return len(results), n


def _write_text(path: str, text: str) -> None:
    """Write atomically (temp file + rename); ``-`` is standard output."""
    if path == "-":
        import sys

        sys.stdout.write(text)
        return
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(p, text)

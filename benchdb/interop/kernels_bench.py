"""Hugging Face ``kernels benchmark --output FILE.json``: one summary per workload of a kernel
repository's benchmark script (``results[]``: ``workload`` "Class.method", ``timingResults`` with
``mean_ms``, ``std_ms``, ``min_ms``, ``max_ms``, ``q1_ms``, ``q3_ms``, ``iqr_ms``, ``outliers``,
``iterations``, and ``verified`` when the workload checked its output against a reference), with
``machineInfo`` (gpu, backend, PyTorch, OS, CPU), ``kernelCommitSha`` and the script's path and hash.

The file keeps no per-iteration times: each workload is a summary-only result whose figures are the
tool's own (``latency_s`` mean, stddev, min, max, q1, q3, iqr; seconds). Its ``std_ms`` divides by n,
recorded as the definition. The speedup over the reference that the command prints is not in the
file: nothing here invents it. ``verified`` is kept (the command writes no file when a check fails).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from benchdb.interop.writer import Imported, SourceError

FILES = ("*.json",)
_STATS = {
    "mean_ms": "mean",
    "std_ms": "stddev",
    "min_ms": "min",
    "max_ms": "max",
    "q1_ms": "q1",
    "q3_ms": "q3",
    "iqr_ms": "iqr",
}
_KINDS = {"cuda": "cuda", "rocm": "rocm", "hip": "rocm", "xpu": "xpu", "mps": "mps", "cpu": "cpu"}


def hardware(machine: dict[str, Any]) -> dict[str, Any]:
    backend = str(machine.get("backend") or "").strip().lower()
    gpu = str(machine.get("gpu") or "").strip()
    kind = _KINDS.get(backend, "unknown")
    name = gpu if gpu and gpu.upper() != "N/A" and kind != "cpu" else str(machine.get("cpu") or "unknown")
    return {"kind": kind, "device_name": name, "os": machine.get("os"), "arch": machine.get("cpu")}


def _figures(timing: Any, where: str) -> list[tuple[str, str, str, float]]:
    if not isinstance(timing, dict):
        raise SourceError(f"{where}: timingResults is {type(timing).__name__}, not an object of timings")
    stats = []
    for key, stat in _STATS.items():
        value = timing.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
            raise SourceError(f"{where}: timingResults.{key} is {value!r}, not a time in ms")
        stats.append(("latency_s", "s", stat, float(value) / 1e3))
    if not any(s[2] == "mean" for s in stats):
        raise SourceError(f"{where}: timingResults has no mean_ms")
    return stats


def parse(path: Path) -> list[Imported]:
    from benchdb.interop import load_json

    doc = load_json(path)
    if not isinstance(doc, dict) or not isinstance(doc.get("results"), list) or "machineInfo" not in doc:
        raise SourceError("not a `kernels benchmark` JSON file (no 'results' list and 'machineInfo')")
    got = doc.get("machineInfo")
    machine: dict[str, Any] = got if isinstance(got, dict) else {}
    hw = hardware(machine)
    out = []
    for i, r in enumerate(doc["results"], 1):
        where = f"results[{i}]"
        if not isinstance(r, dict) or not isinstance(r.get("workload"), str) or not r["workload"].strip():
            raise SourceError(f"{where}: no workload name")
        timing = r.get("timingResults")
        stats = _figures(timing, f"{where} ({r['workload']})")
        assert isinstance(timing, dict)  # _figures refused anything else
        out.append(
            Imported(
                model_id=f"kernels:{r['workload']}",
                backend="kernels",
                device=f"{hw['kind']}:0" if hw["kind"] in ("cuda", "rocm", "xpu") else hw["kind"],
                mode="eager",
                precision="na",
                batch_size=1,
                input_shape="na",
                primary_metric="latency_s",
                options={"script": doc.get("benchmarkScriptPath")},
                hardware=hw,
                model={"task": "kernel-benchmark"},
                started_at=None,
                run_key=str(doc.get("benchmarkScriptSha") or ""),
                timing_method="source",
                tool="kernels benchmark",
                summary_only=True,
                statistics=stats,
                settings={
                    k: v
                    for k, v in {
                        "verified": r.get("verified"),
                        "iterations": timing.get("iterations"),
                        "outliers": timing.get("outliers"),
                        "kernel_commit": doc.get("kernelCommitSha"),
                        "script_sha": doc.get("benchmarkScriptSha"),
                        "stddev_definition": "population (divides by n), as the tool computes it",
                    }.items()
                    if v is not None
                },
                software={"torch": machine.get("pytorchVersion")} if machine.get("pytorchVersion") else {},
            )
        )
    if not out:
        raise SourceError("no results in it (an empty 'results' list)")
    return out

"""PyTorch HUD "v3" benchmark records (a JSON list, one object, or JSON lines).

A record is ``benchmark{name, mode, dtype, extra_info}``, ``model{name, type, backend, origins}``,
``metric{name, benchmark_values[], target_value, extra_info}``, ``runners[]`` and
``dependencies``; one record per result x metric. Records of the same benchmark, model, backend,
dtype, device and shape are one benchdb result with several metrics; ``benchmark_values`` are its
samples. Metric names: benchdb's own names pass through; ``...(ms)`` names become seconds
(``avg_inference_latency(ms)`` -> ``avg_inference_latency_s``), and a name with "latency" in it is
the primary metric when there is no ``latency_s``. Records written by ``benchdb export --format
hud-v3`` carry benchdb's full key in ``benchmark.extra_info.benchdb`` and import back to it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from benchdb.interop import load_json
from benchdb.interop.writer import Imported, SourceError, utc_iso

FILES = ("*.json", "*.jsonl")
_DTYPES = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16"}


def _records(path: Path) -> list:
    text = path.read_text(encoding="utf-8", errors="replace")
    stripped = text.lstrip()
    if stripped.startswith("{") and "\n{" in stripped.rstrip():
        out = []
        for i, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                try:
                    out.append(json.loads(line))
                except ValueError as exc:
                    why = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
                    raise SourceError(
                        f"line {i} is not valid JSON ({why}); the JSON lines file may be truncated"
                    ) from None
        return out
    doc = load_json(path)
    return doc if isinstance(doc, list) else [doc]


def _metric(name: str, extra: dict) -> tuple[str, str, float]:
    """benchdb metric name, unit and the factor to apply to the values."""
    if extra.get("benchdb_metric"):
        return extra["benchdb_metric"], extra.get("unit") or "", 1.0
    m = re.match(r"^(.*?)\s*\(ms\)\s*$", name)
    if m:
        return re.sub(r"\W+", "_", m.group(1).strip()).strip("_").lower() + "_s", "s", 1e-3
    m = re.match(r"^(.*?)\s*\(s\)\s*$", name)
    if m:
        return re.sub(r"\W+", "_", m.group(1).strip()).strip("_").lower() + "_s", "s", 1.0
    return re.sub(r"\W+", "_", name.strip()).strip("_").lower(), str(extra.get("unit") or "value"), 1.0


def _hardware(runner: dict, device: str, key: dict) -> dict:
    if key.get("hardware"):
        return key["hardware"]
    kind = device.split(":")[0] if device else "unknown"
    if kind == "cpu":
        name = runner.get("cpu_info") or runner.get("type") or "unknown"
        return {"kind": "cpu", "device_name": name, "cpu_model": name, "cores_logical": runner.get("cpu_count")}
    gpu = runner.get("gpu_info") or runner.get("type") or "unknown"
    mem = runner.get("avail_gpu_mem_in_gb")
    count = runner.get("gpu_count") or 1
    return {
        "kind": kind,
        "device_name": gpu,
        "cpu_model": runner.get("cpu_info"),
        "cores_logical": runner.get("cpu_count"),
        "memory_bytes": int(mem * 2**30 / count) if isinstance(mem, (int, float)) and mem else None,
    }


def parse(path: Path) -> list[Imported]:
    records = _records(path)
    groups: dict[str, dict] = {}
    for i, rec in enumerate(records):
        if not isinstance(rec, dict) or not all(isinstance(rec.get(k), dict) for k in ("benchmark", "model", "metric")):
            raise SourceError(f"record {i + 1} is not a HUD v3 record (needs benchmark, model and metric objects)")
        bench, model, metric = rec["benchmark"], rec["model"], rec["metric"]
        bextra = bench.get("extra_info") or {}
        key = bextra.get("benchdb") or {}
        runners = rec.get("runners") or [{}]
        runner = runners[0] if isinstance(runners[0], dict) else {}
        device = key.get("device") or bextra.get("device") or runner.get("name") or "unknown"
        shape = key.get("input_shape") or bextra.get("input_shape") or bextra.get("shape") or "na"
        batch = key.get("batch_size") or bextra.get("batch_size") or 1
        gkey = json.dumps(
            [
                bench.get("name"),
                bench.get("mode"),
                bench.get("dtype"),
                model.get("name"),
                model.get("backend"),
                device,
                str(shape),
                batch,
                key.get("result_id"),
                runner.get("type"),
                rec.get("timestamp"),
            ],
            default=str,
        )
        g = groups.setdefault(
            gkey,
            {
                "rec": rec,
                "key": key,
                "device": device,
                "shape": str(shape),
                "batch": int(batch),
                "runner": runner,
                "metrics": {},
            },
        )
        values = metric.get("benchmark_values")
        if not isinstance(values, list) or not values:
            raise SourceError(f"record {i + 1} ({metric.get('name')}): no benchmark_values")
        bad = [v for v in values if not isinstance(v, (int, float)) or isinstance(v, bool)]
        if bad:
            raise SourceError(
                f"record {i + 1} ({metric.get('name')}): non-numeric value {bad[0]!r} in benchmark_values"
            )
        name, unit, factor = _metric(str(metric.get("name") or "value"), metric.get("extra_info") or {})
        g["metrics"][name] = (unit, [float(v) * factor for v in values])
    out = []
    for g in groups.values():
        rec, key = g["rec"], g["key"]
        bench, model = rec["benchmark"], rec["model"]
        metrics = g["metrics"]
        primary = key.get("primary_metric") or (
            "latency_s"
            if "latency_s" in metrics
            else next((m for m in metrics if "latency" in m and metrics[m][0] == "s"), next(iter(metrics)))
        )
        deps = rec.get("dependencies") or {}
        torch = deps.get("pytorch") or {}
        dtype = str(bench.get("dtype") or "unknown")
        options = {k: v for k, v in (key.get("options") or {}).items() if k != "source"}
        if not key:
            options["benchmark"] = bench.get("name")
        out.append(
            Imported(
                model_id=key.get("model_id") or model.get("name") or "unknown",
                backend=key.get("backend") or model.get("backend") or "unknown",
                device=g["device"],
                mode=key.get("mode") or bench.get("mode") or "inference",
                precision=key.get("precision") or _DTYPES.get(dtype, dtype),
                batch_size=g["batch"],
                input_shape=g["shape"],
                samples=metrics,
                primary_metric=primary,
                options=options,
                hardware=_hardware(g["runner"], g["device"], key),
                model={"model_type": model.get("type"), "origins": model.get("origins")},
                started_at=utc_iso(key.get("started_at") or rec.get("timestamp")),
                host=key.get("host") or "unknown",
                git_commit=key.get("git_commit") or torch.get("sha"),
                software={k: (v.get("version") if isinstance(v, dict) else v) for k, v in deps.items()},
                config={"hud": {"benchmark": bench.get("name"), "origins": model.get("origins")}},
                run_key=str(key.get("run_id") or rec.get("timestamp") or ""),
                timing_method=key.get("timing_method") or "source",
                tool="hud-v3",
                tool_version=str(rec.get("schema_version") or "v3"),
                settings={"target_value": rec["metric"].get("target_value")}
                if rec["metric"].get("target_value") is not None
                else {},
            )
        )
    return out

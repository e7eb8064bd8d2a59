"""optimum-benchmark results: ``benchmark.json`` (``{"config": ..., "report": ...}``) or
``benchmark_report.json`` with ``benchmark_config.json`` beside it.

Each report target (``load_model``, ``first_forward``, ``forward``; ``prefill``, ``decode``,
``per_token``, ``generate`` for text generation) has ``latency.values`` (every raw latency, kept as
samples), ``throughput``, ``memory`` (MB), ``energy`` (kWh) and ``efficiency``. benchdb metric
names: forward -> latency_s (the primary metric), prefill -> ttft_s, per_token -> tpot_s,
generate -> generate_s, decode -> decode_s, load_model -> load_s, first_forward -> first_call_s;
peak memory becomes one sample (bytes), energy one sample (J). Targets without values are skipped.
"""

from __future__ import annotations

from pathlib import Path

from benchdb.interop import load_json
from benchdb.interop.writer import Imported, SourceError, cpu_vendor

FILES = ("benchmark.json", "benchmark_report.json")

TARGET_METRICS = {
    "forward": "latency_s",
    "prefill": "ttft_s",
    "per_token": "tpot_s",
    "generate": "generate_s",
    "decode": "decode_s",
    "load_model": "load_s",
    "first_forward": "first_call_s",
    "call": "latency_s",
    "per_step": "per_step_s",
}
_MEMORY = {
    "max_ram": "peak_rss_bytes",
    "max_global_vram": "peak_device_bytes",
    "max_process_vram": "peak_process_vram_bytes",
    "max_reserved": "peak_device_reserved_bytes",
    "max_allocated": "peak_device_allocated_bytes",
}
_DTYPES = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16", "int8": "int8", None: "fp32"}


def _load(path: Path) -> tuple[dict, dict]:
    doc = load_json(path)
    if not isinstance(doc, dict):
        raise SourceError("not an optimum-benchmark file (expected a JSON object)")
    if "report" in doc and "config" in doc:
        return doc["config"], doc["report"]
    config_path = path.with_name("benchmark_config.json")
    if not config_path.is_file():
        raise SourceError(
            "benchmark_report.json without benchmark_config.json beside it (or give benchmark.json, which holds both)"
        )
    return load_json(config_path), doc


def hardware(env: dict, device: str) -> dict:
    cpu = str(env.get("cpu") or "unknown").strip()
    common = {
        "cpu_model": cpu,
        "cores_logical": env.get("cpu_count"),
        "arch": env.get("machine"),
        "os": env.get("platform") or env.get("system"),
    }
    gpus = env.get("gpu") or []
    if device.startswith(("cuda", "rocm")) and gpus:
        count = env.get("gpu_count") or len(gpus) or 1
        vram = env.get("gpu_vram_mb")
        return {
            "kind": "rocm" if device.startswith("rocm") else "cuda",
            "vendor": env.get("gpu_vendor") or ("AMD" if device.startswith("rocm") else "NVIDIA"),
            "device_name": gpus[0],
            "memory_bytes": int(vram * 2**20 / count) if vram else None,
            **common,
        }
    ram = env.get("cpu_ram_mb")  # benchdb's CPU fingerprint records the machine's memory
    return {
        "kind": "cpu",
        "vendor": cpu_vendor(cpu),
        "device_name": cpu,
        "memory_bytes": int(ram * 2**20) if isinstance(ram, (int, float)) and ram else None,
        **common,
    }


def parse(path: Path) -> list[Imported]:
    config, report = _load(path)
    if not isinstance(report, dict) or not isinstance(config, dict) or "backend" not in config:
        raise SourceError("not an optimum-benchmark report (no config.backend)")
    backend = config["backend"]
    scenario = config.get("scenario") or {}
    env = config.get("environment") or {}
    device = str(backend.get("device") or "cpu")
    if backend.get("device_ids") not in (None, "") and ":" not in device and device != "cpu":
        device = f"{device}:{str(backend['device_ids']).split(',')[0]}"
    shapes = scenario.get("input_shapes") or {}
    batch = int(shapes.get("batch_size") or 1)
    shape = ",".join(f"{k}={v}" for k, v in sorted(shapes.items()) if k != "batch_size")
    new_tokens = scenario.get("new_tokens") or (scenario.get("generate_kwargs") or {}).get("max_new_tokens")
    if new_tokens and any(t in report for t in ("prefill", "decode", "generate")):
        shape = f"{shape},new_tokens={new_tokens}" if shape else f"new_tokens={new_tokens}"
    samples, stats = _measures(report)
    primary = next((m for m in ("latency_s", "generate_s", "ttft_s") if m in samples), None)
    if primary is None:
        raise SourceError("no latency values in any target of the report")
    dtype = backend.get("torch_dtype") or backend.get("dtype")
    precision = _DTYPES.get(dtype, str(dtype))
    threads = backend.get("intra_op_num_threads") or backend.get("torch_num_threads")
    options = {
        k: backend.get(k)
        for k in (
            "provider",
            "torch_compile",
            "attn_implementation",
            "no_weights",
            "inter_op_num_threads",
            "intra_op_num_threads",
            "library",
        )
        if backend.get(k) not in (None, {}, [])
    }
    version = env.get("optimum_benchmark_version") or env.get("benchdb_version")
    key = backend.get("benchdb") or {}  # written by `benchdb export --format optimum-benchmark`
    if key:
        options = {k: v for k, v in (key.get("options") or {}).items() if k != "source"}
        if isinstance(key.get("primary_metric"), str) and key["primary_metric"] in samples:
            primary = key["primary_metric"]
    return [
        Imported(
            model_id=key.get("model_id") or backend.get("model") or "unknown",
            backend=key.get("backend") or backend.get("name") or "unknown",
            device=key.get("device") or device,
            mode=key.get("mode") or ("compile" if backend.get("torch_compile") else "eager"),
            precision=key.get("precision") or precision,
            batch_size=key.get("batch_size") or batch,
            input_shape=key.get("input_shape") or shape or "na",
            samples=samples,
            primary_metric=primary,
            options=options,
            hardware=key.get("hardware") or hardware(env, device),
            model={"task": backend.get("task"), "revision": (backend.get("model_kwargs") or {}).get("revision")},
            host=key.get("host") or "unknown",
            git_commit=key.get("git_commit"),
            started_at=key.get("started_at"),
            threads=threads if isinstance(threads, int) else None,
            software={k: v for k, v in env.items() if k.endswith("_version") and v},
            config={
                "optimum_benchmark": {
                    "name": config.get("name"),
                    "scenario": scenario.get("name"),
                    "iterations": scenario.get("iterations"),
                    "warmup_runs": scenario.get("warmup_runs"),
                }
            },
            run_key=str(key.get("run_id") or config.get("name") or ""),
            timing_method="cuda_events"
            if device.startswith("cuda") and backend.get("name") == "pytorch"
            else "host_clock",
            tool="optimum-benchmark",
            tool_version=version,
            statistics=stats,
        )
    ]


def _measures(report: dict) -> tuple[dict[str, tuple[str, list[float]]], list[tuple[str, str, str, float]]]:
    """Each target's samples (latency values in seconds, memory in bytes, energy in joules) and its
    summary statistics (latency percentiles, throughput)."""
    samples: dict[str, tuple[str, list[float]]] = {}
    stats: list[tuple[str, str, str, float]] = []
    for target, measures in report.items():
        if not isinstance(measures, dict):
            continue
        metric = TARGET_METRICS.get(target, f"{target}_s")
        lat = measures.get("latency") or {}
        if lat.get("values"):
            scale = 1e-3 if lat.get("unit") == "ms" else 1.0
            samples[metric] = ("s", [v * scale for v in lat["values"]])
            stats += [
                (metric, "s", k, float(lat[k]) * scale)
                for k in ("mean", "p50", "p90", "p95", "p99", "stdev")
                if isinstance(lat.get(k), (int, float))
            ]
        tp = measures.get("throughput") or {}
        if isinstance(tp.get("value"), (int, float)):
            stats.append((f"{target}_throughput", tp.get("unit") or "", "value", float(tp["value"])))
        mem = measures.get("memory") or {}
        for field, name in _MEMORY.items():
            if isinstance(mem.get(field), (int, float)):
                samples.setdefault(
                    name, ("bytes", [float(mem[field]) * 2**20 if mem.get("unit", "MB") == "MB" else float(mem[field])])
                )
        energy = measures.get("energy") or {}
        if isinstance(energy.get("total"), (int, float)):
            samples[f"{target}_energy_j"] = (
                "J",
                [float(energy["total"]) * 3.6e6 if energy.get("unit", "kWh") == "kWh" else float(energy["total"])],
            )
    return samples, stats

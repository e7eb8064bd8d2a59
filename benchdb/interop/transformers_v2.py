"""transformers ``benchmark_v2`` result files: ``{config_hash: {metadata, measurements, config}}``.

The format drifts between transformers versions, so every field is looked up under the names it
has had and a missing one is skipped, never fatal, unless no end-to-end latency is left:
- the measurements are under ``measurements`` (older) or ``measures`` (newer);
- ``e2e_latency[]`` is the primary metric (generate_s: one ``generate()`` call, seconds);
- ``time_to_first_token[]`` (ttft_s) is given, or derived from each iteration's token times
  (``dt_tokens`` / ``t_tokens``: seconds since the call started, first = first token);
- ``inter_token_latency[]`` (tpot_s) is given, or derived from the token times
  ((last - first) / (tokens - 1));
- ``gpu_metrics`` (utilisation, memory) become gpu_util_pct / gpu_mem_used_bytes when present.
The model id is ``metadata.model_id``, else ``config.model_id``, else the file name's prefix.

Its execution modes are benchdb's PyTorch modes: eager, compiled (``compile_mode``, or newer files'
``compile_kwargs``) -> compile, and the "kernelized" variant (``kernelize``: transformers' default
kernel mapping) -> kernels or kernels+compile, with the option ``kernels: default`` that benchdb's
own kernelized runs with transformers' mapping carry.
"""

from __future__ import annotations

import re
from pathlib import Path

from benchdb.interop import load_json
from benchdb.interop.writer import Imported, SourceError, cpu_vendor, utc_iso
from benchdb.schema import optionsets

FILES = ("*_benchmark_*.json",)
_DTYPES = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16"}
_KERNELIZED = re.compile(r"(?<![a-z])kernelized")


def _mode(config: dict) -> tuple[str, bool]:
    """(benchdb mode, kernelized) of a benchmark_v2 config."""
    compiled = (
        bool(_first(config, "compile_mode"))
        or config.get("mode") == "compiled"
        or isinstance(config.get("compile_kwargs"), dict)
    )
    kernelized = config.get("kernelize") is True or bool(_KERNELIZED.search(str(config.get("name") or "")))
    if kernelized:
        return ("kernels+compile" if compiled else "kernels"), True
    return ("compile" if compiled else "eager"), False


def _first(d: dict, *names, default=None):
    for n in names:
        if isinstance(d, dict) and d.get(n) is not None:
            return d[n]
    return default


def _numbers(values) -> list[float]:
    if not isinstance(values, list):
        return []
    return [float(v) for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]


def _token_times(measures: dict) -> list[list[float]]:
    raw = _first(measures, "dt_tokens", "t_tokens", "token_generation_times")
    if not isinstance(raw, list):
        return []
    return [_numbers(r) for r in raw if isinstance(r, list) and r]


def hardware(info: dict, device: str) -> dict:
    common = {"cores_logical": _first(info, "cpu_count"), "cpu_model": _first(info, "cpu_name", "cpu_model")}
    gpu = _first(info, "gpu_name")
    mem_mb = _first(info, "gpu_memory_total_mb", "gpu_memory_total")
    if device.startswith("cuda") and gpu:
        return {
            "kind": "cuda",
            "vendor": "NVIDIA",
            "device_name": gpu,
            "memory_bytes": int(mem_mb * 2**20) if isinstance(mem_mb, (int, float)) else None,
            "driver": _first(info, "cuda_version"),
            **common,
        }
    name = common["cpu_model"] or "unknown"
    if device == "cpu":
        ram = _first(info, "memory_total_mb")
        return {
            "kind": "cpu",
            "vendor": cpu_vendor(name),
            "device_name": name,
            "memory_bytes": int(ram * 2**20) if isinstance(ram, (int, float)) else None,
            **common,
        }
    return {"kind": device.split(":")[0], "device_name": gpu or name, **common}


def parse(path: Path) -> list[Imported]:
    doc = load_json(path)
    if not isinstance(doc, dict) or not doc or not all(isinstance(v, dict) for v in doc.values()):
        raise SourceError("not a transformers benchmark_v2 file (expected {config_hash: {...}})")
    out = []
    for cfg_hash, entry in doc.items():
        measures = _first(entry, "measurements", "measures", default=None)
        if not isinstance(measures, dict):
            raise SourceError(f"{cfg_hash}: no measurements (neither 'measurements' nor 'measures')")
        config = entry.get("config") or {}
        meta = entry.get("metadata") or {}
        info = _first(meta, "hardware_info", default={}) or {}
        e2e = _numbers(_first(measures, "e2e_latency", "latency_seconds", "latency"))
        if not e2e:
            raise SourceError(f"{cfg_hash}: no e2e_latency values")
        samples = {"generate_s": ("s", e2e)}
        ttft = _numbers(_first(measures, "time_to_first_token", "time_to_first_token_seconds"))
        itl = _numbers(_first(measures, "inter_token_latency", "time_per_output_token_seconds"))
        tokens = _token_times(measures)
        if not ttft and tokens:
            ttft = [t[0] for t in tokens]
        if not itl and tokens:
            itl = [(t[-1] - t[0]) / (len(t) - 1) for t in tokens if len(t) > 1]
        if ttft:
            samples["ttft_s"] = ("s", ttft)
        if itl:
            samples["tpot_s"] = ("s", itl)
        gpu = measures.get("gpu_metrics")
        if isinstance(gpu, list):
            gpu = [g for g in gpu if isinstance(g, dict)]
        else:
            gpu = [gpu] if isinstance(gpu, dict) else []
        util = [v for g in gpu for v in _numbers(_first(g, "utilization", "gpu_utilization"))]
        if util:
            samples["gpu_util_pct"] = ("pct", util)
        mem = [v * 2**30 for g in gpu for v in _numbers(_first(g, "memory_used", "gpu_memory_used_gb"))]
        if mem:
            samples["gpu_mem_used_bytes"] = ("bytes", mem)
        model_id = _first(meta, "model_id") or _first(config, "model_id") or path.name.split("_benchmark_")[0]
        device = str(_first(config, "device", default="cuda"))
        dtype = str(_first(config, "dtype", "torch_dtype", default="float32")).removeprefix("torch.")
        new_tokens = _first(config, "num_tokens_to_generate", "new_tokens")
        shape = f"seq_len={_first(config, 'sequence_length', 'seq_len', default='na')}"
        if new_tokens is not None:
            shape += f",new_tokens={new_tokens}"
        options = {
            k: config.get(k)
            for k in (
                "attn_implementation",
                "sdpa_backend",
                "compile_mode",
                "kernelize",
                "use_cache",
                "continuous_batching",
            )
            if config.get(k) is not None
        }
        mode, kernelized = _mode(config)
        if kernelized:
            options["kernels"] = _default_kernels()
        out.append(
            Imported(
                model_id=str(model_id),
                backend="pytorch",
                device=device,
                mode=mode,
                precision=_DTYPES.get(dtype, dtype),
                batch_size=int(_first(config, "batch_size", default=1)),
                input_shape=shape,
                samples=samples,
                primary_metric="generate_s",
                options=options,
                hardware=hardware(info, device),
                model={"task": "text-generation"},
                started_at=utc_iso(_first(meta, "timestamp")),
                git_commit=_first(meta, "commit_id"),
                software={k: v for k, v in info.items() if k.endswith("_version") and v},
                config={
                    "benchmark_v2": {
                        "config_hash": cfg_hash,
                        "name": config.get("name"),
                        "warmup_iterations": config.get("warmup_iterations"),
                        "measurement_iterations": config.get("measurement_iterations"),
                    }
                },
                run_key=str(_first(meta, "timestamp", default="")),
                timing_method="host_clock",
                tool="transformers",
                tool_version=_first(info, "transformers_version") or _first(meta, "transformers_version"),
            )
        )
    return out


def _default_kernels() -> str:
    """The pytorch option set's identity of transformers' default kernel mapping, read through the
    contract's registry of option sets (the importer knows no backend module)."""
    pytorch = optionsets.option_set("pytorch")
    if pytorch is None:
        raise SourceError("the pytorch option set is not registered: reinstall benchdb")
    return str(vars(pytorch)["DEFAULT_KERNELS"])

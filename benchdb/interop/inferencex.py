"""SemiAnalysis InferenceX: the serving points its app's API serves (``GET /api/v1/benchmarks``), a
JSON list of objects, one load point each: the deployment (``hardware``, ``framework``, ``model``,
``precision``, ``spec_method``, ``disagg``, ``is_multinode``, ``prefill_*`` / ``decode_*`` TP, EP,
DP-attention and worker counts, ``num_prefill_gpu`` / ``num_decode_gpu``), the load (``isl``,
``osl``, ``conc``), ``image``, ``date``, ``run_url`` and ``metrics``.

A row is a published summary: no request of it is kept, so each becomes a summary-only result whose
figures are the row's own, untouched (``source_statistics``), under benchdb's serving names. Where
each field's meaning comes from (repositories SemiAnalysisAI/InferenceX, Apache-2.0, and
SemiAnalysisAI/InferenceX-app, GPL-3.0; read 2026-04):

- The row layout: ``BenchmarkRow`` in ``packages/db/src/queries/benchmarks.ts`` (app), the columns of
  ``configs`` and ``benchmark_results`` in ``packages/db/migrations/001_initial_schema.sql``.
- ``metrics``: ``utils/process_result.py`` (InferenceX) turns the ``vllm bench serve``-style result
  of ``utils/bench_serving/benchmark_serving.py`` into them: every ``*_ms`` key divided by 1000, so
  ``{mean,median,std,pNN}_{ttft,tpot,itl,e2el}`` are **seconds** (the app's
  ``packages/constants/src/metric-keys.ts``: "All values are in seconds unless noted otherwise.
  Throughput values are tokens/sec/GPU"). Percentiles are numpy's (linear), std is numpy's
  (population). TTFT, TPOT (per request: (latency - TTFT) / (output tokens - 1)) and ITL (every gap
  between streamed chunks, pooled) are vLLM's definitions; E2E ends at the last chunk.
- ``{stat}_intvty`` is ``1000 / {stat}_tpot_ms`` (process_result.py): ``median_intvty`` = 1 / TPOT
  p50, benchdb's interactivity (tokens/s per user, ``serving_points``), kept as ``interactivity``
  median. The others are not statistics of interactivity (``p99_intvty`` is 1 / TPOT p99,
  ``std_intvty`` 1 / the TPOT std) and repeat the TPOT figures: not imported.
- Throughputs per GPU (process_result.py): ``tput_per_gpu`` = total token throughput / every GPU
  of the point; ``output_tput_per_gpu`` = output tokens/s over the same GPUs on one node, over the
  *decode* GPUs of a multinode point; ``input_tput_per_gpu`` = input tokens/s over the same GPUs on
  one node, over the *prefill* GPUs of a multinode point. Kept per GPU as
  ``total_throughput_per_gpu``, ``output_throughput_per_gpu`` and ``input_throughput_per_gpu``
  (tokens/s); each result's definitions say which GPUs divided it. Rows before 2025-12 have only
  ``tput_per_gpu``.
- GPUs a point used: a multinode point, ``num_prefill_gpu + num_decode_gpu`` (process_result's
  ``total_gpus``, the divisor of ``tput_per_gpu``); a single-node point, its TP
  (process_result's ``num_gpus = tp * pp * pcp``: the rows name no PP or PCP, 1 unless a recipe
  set them). A single-node row's ``num_*_gpu`` is the ETL's ``tp * ep``
  (``packages/db/src/etl/benchmark-mapper.ts``, v1 rows), which counts expert-parallel ranks on the
  same GPUs (a TP 8 EP 8 row says 64), so it is not read; the rows bear this out: a B200 TP 8 point
  at 16 concurrent requests, 80.9 tokens/s each, serves about 1,300 output tokens/s, 157 per GPU
  over 8 GPUs, not over 64.
- ``hardware``: the GPU keys of ``packages/constants/src/gpu-keys.ts`` with their vendors; the
  system name is the key, the accelerator its model name (the app's labels, ``src/lib/constants.ts``).
  The rows name no memory, node size or interconnect. ``framework``: the keys of
  ``packages/constants/src/framework-aliases.ts`` (``trt`` is TensorRT-LLM; ``dynamo-*`` and
  ``mori-sglang`` serve one engine disaggregated). ``model``: the app's model key (``dsr1`` is
  DeepSeek-R1-0528, ``packages/constants/src/models.ts``), kept as the model id.
- The load: ``benchmarks/benchmark_lib.sh`` (InferenceX) runs every point with random prompts of
  ``isl`` / ``osl`` tokens (``--ignore-eos``), ``--max-concurrency conc`` and ``--request-rate
  inf``: a closed loop at ``conc``, written ``in=ISL,out=OSL,concurrency=CONC`` as benchdb's own
  serving runs are. The rows do not name the endpoint; the harness sends nearly every model to
  ``/v1/completions`` (``--backend vllm``), recorded as ``completions``.
- Measured power (rows from 2026 on, the app's "Measured Energy" charts): ``avg_power_w``, the mean
  GPU-board power per GPU over the validated load window, kept as ``accelerator_power_w`` mean (W);
  a row whose ``power_valid`` is present and not 1 / true keeps none (the app shows such power as
  unavailable), nor does an ``avg_power_w`` of 0 (no telemetry).
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any

from benchdb.interop.writer import Imported, SourceError, utc_iso
from benchdb.schema.serving import E2E, ITL_CHUNK, TPOT, TTFT
from benchdb.schema.serving_request import MAX_DEVICE_TOKENS_PER_S, MAX_REQUEST_S, MAX_TOKENS_PER_S

FILES = ("benchmarks*.json", "*inferencex*.json")

#: GPU key -> (vendor, kind, accelerator name) (gpu-keys.ts, the app's HARDWARE_CONFIG labels).
HARDWARE = {
    "h100": ("NVIDIA", "cuda", "NVIDIA H100"),
    "h200": ("NVIDIA", "cuda", "NVIDIA H200"),
    "b200": ("NVIDIA", "cuda", "NVIDIA B200"),
    "b300": ("NVIDIA", "cuda", "NVIDIA B300"),
    "gb200": ("NVIDIA", "cuda", "NVIDIA GB200"),
    "gb300": ("NVIDIA", "cuda", "NVIDIA GB300"),
    "mi300x": ("AMD", "rocm", "AMD Instinct MI300X"),
    "mi325x": ("AMD", "rocm", "AMD Instinct MI325X"),
    "mi355x": ("AMD", "rocm", "AMD Instinct MI355X"),
}
#: Framework spellings of older rows (framework-aliases.ts), then benchdb's engine names.
_FRAMEWORK_ALIASES = {"sglang-disagg": "mori-sglang", "trtllm": "trt", "dynamo-trtllm": "dynamo-trt"}
_ENGINES = {"trt": "tensorrt-llm"}
PRECISIONS = ("fp4", "fp8", "bf16", "fp16", "fp32", "int4", "int8")
#: ``{stat}_{figure}`` metric keys -> benchdb's metric (seconds).
_TIMES = {"ttft": TTFT, "tpot": TPOT, "itl": ITL_CHUNK, "e2el": E2E}
_STAT = re.compile(r"^(mean|median|std|p\d+(?:\.\d+)?)_(ttft|tpot|itl|e2el|intvty)$")
_PER_GPU = {
    "tput_per_gpu": "total_throughput_per_gpu",
    "output_tput_per_gpu": "output_throughput_per_gpu",
    "input_tput_per_gpu": "input_throughput_per_gpu",
}
INTERACTIVITY = "interactivity"
#: The mean board power per GPU a row measured (W), and benchdb's name for it.
POWER = "avg_power_w"
ACCELERATOR_POWER = "accelerator_power_w"
_REQUIRED = (
    "hardware",
    "framework",
    "model",
    "precision",
    "isl",
    "osl",
    "conc",
    "disagg",
    "is_multinode",
    "prefill_tp",
    "decode_tp",
    "metrics",
)
_WHY = "a published InferenceX summary: no per-request data"
_TIME_DEFS = {
    TTFT: ("the first streamed chunk with content - request start (vLLM's TTFT)", True),
    TPOT: ("(latency - TTFT) / (output tokens - 1), per request with more than one output token", True),
    ITL_CHUNK: ("each gap between consecutive streamed chunks, pooled over requests (vLLM's ITL)", True),
    E2E: ("the last streamed chunk - request start (benchdb's ends at the end of the stream)", False),
}


def _count(row: dict, key: str, where: str, minimum: int = 1, default: int | None = None) -> int:
    value = row.get(key, default)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise SourceError(f"{where}: {key} is {value!r}, not a whole number >= {minimum}")
    return value


def _flag(row: dict, key: str, where: str, default: bool | None = None) -> bool:
    value = row.get(key, default)
    if not isinstance(value, bool):
        raise SourceError(f"{where}: {key} is {value!r}, not true or false")
    return value


def _text(row: dict, key: str, where: str) -> str:
    value = row.get(key)
    if not isinstance(value, str) or not value.strip():
        raise SourceError(f"{where}: {key} is {value!r}, not a name")
    return value.strip().lower()


def _absurd(stat: str | None, figure: str, value: float) -> str | None:
    """Why a published figure is beyond what a request or a GPU can do (the bounds of
    :mod:`benchdb.schema.serving_request`, the same the recomputed imports and the live client keep)."""
    if figure in _PER_GPU and value > MAX_DEVICE_TOKENS_PER_S:
        return f"more tokens/s than one GPU can process (at most {MAX_DEVICE_TOKENS_PER_S:g})"
    if figure == "intvty" and value > MAX_TOKENS_PER_S:
        return f"more tokens/s than one request can produce (at most {MAX_TOKENS_PER_S:g})"
    if figure in _TIMES and value > MAX_REQUEST_S:
        return f"longer than any request takes (at most {MAX_REQUEST_S:g} s)"
    if figure == "tpot" and stat != "std" and 0 < value < 1 / MAX_TOKENS_PER_S:
        return f"a time per token faster than one request can produce (at most {MAX_TOKENS_PER_S:g} tokens/s)"
    return None


def _figures(metrics: Any, where: str) -> tuple[list[tuple[str, str, str, float]], list[str]]:
    """(statistics in benchdb's names, the metric keys left unread) of a row's ``metrics``."""
    if not isinstance(metrics, dict):
        raise SourceError(f"{where}: metrics is {type(metrics).__name__}, not an object of figures")
    stats: list[tuple[str, str, str, float]] = []
    unread: list[str] = []
    for key, value in metrics.items():
        if key in (POWER, "power_valid"):
            continue  # read by _power, with its validity
        m = _STAT.match(key)
        per_gpu = _PER_GPU.get(key)
        if m is None and per_gpu is None:
            unread.append(key)  # a figure InferenceX added later (power, energy): its unit is not known here
            continue
        if m is not None and m.group(2) == "intvty" and m.group(1) != "median":
            continue  # 1 / another TPOT statistic: not a statistic of interactivity
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise SourceError(f"{where}: metrics.{key} is {value!r}, not a number")
        if value < 0:
            raise SourceError(f"{where}: metrics.{key} is {value:g}: a time or a throughput cannot be negative")
        absurd = _absurd(m.group(1) if m else None, m.group(2) if m else key, float(value))
        if absurd:
            raise SourceError(f"{where}: metrics.{key} is {value:g}: {absurd}")
        if per_gpu is not None:
            stats.append((per_gpu, "tokens/s", "value", float(value)))
        elif m is not None and m.group(2) == "intvty":
            stats.append((INTERACTIVITY, "tokens/s", "median", float(value)))
        elif m is not None:
            stats.append((_TIMES[m.group(2)], "s", {"std": "stddev"}.get(m.group(1), m.group(1)), float(value)))
    if not stats:
        raise SourceError(f"{where}: metrics has no figure InferenceX writes (median_ttft, tput_per_gpu, ...)")
    return stats, sorted(unread)


def _power(row: dict, where: str) -> list[tuple[str, str, str, float]]:
    """The row's measured mean power per GPU (in ``metrics`` or beside it), unless marked invalid."""
    metrics: dict = row["metrics"] if isinstance(row.get("metrics"), dict) else {}
    value = metrics.get(POWER, row.get(POWER))
    valid = metrics.get("power_valid", row.get("power_valid", True))
    # the app's validated contract is power_valid = 1; anything else (0, false, "0", null) is not
    if value is None or value == 0 or str(valid).strip().lower() not in ("1", "1.0", "true"):
        return []
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 5000:
        raise SourceError(f"{where}: {POWER} is {value!r}, not a GPU's power in W (0-5000)")
    return [(ACCELERATOR_POWER, "W", "mean", float(value))]


def _gpus(row: dict, where: str, multinode: bool, disagg: bool) -> tuple[int, dict[str, int] | None]:
    """(GPUs the point used, per phase for a multinode point) as the module docstring says."""
    if multinode:
        prefill = _count(row, "num_prefill_gpu", where)
        decode = _count(row, "num_decode_gpu", where)
        return prefill + decode, {"prefill": prefill, "decode": decode}
    if disagg:
        raise SourceError(
            f"{where}: a disaggregated point on one node: InferenceX's process_result.py refuses "
            "these, and which GPUs divided its per-GPU figures is not known"
        )
    tp, decode_tp = _count(row, "prefill_tp", where), _count(row, "decode_tp", where)
    if tp != decode_tp:
        raise SourceError(
            f"{where}: a single-node point with prefill_tp {tp} and decode_tp {decode_tp} (they are one server's TP)"
        )
    return tp, None


def _phase(row: dict, phase: str, where: str) -> dict[str, Any]:
    out: dict[str, Any] = {
        "tp": _count(row, f"{phase}_tp", where),
        "ep": _count(row, f"{phase}_ep", where, default=1),
        "dp_attention": _flag(row, f"{phase}_dp_attention", where, default=False),
    }
    workers = _count(row, f"{phase}_num_workers", where, minimum=0, default=0)
    if workers:
        out["workers"] = workers
    return out


def _definitions(
    stats: list[tuple[str, str, str, float]], gpus: dict[str, int] | None, accelerators: int
) -> dict[str, Any]:
    present = {s[0] for s in stats}
    names = {TTFT: "ttft", TPOT: "tpot", ITL_CHUNK: "itl", E2E: "e2el"}
    out: dict[str, Any] = {}
    for metric, (text, same) in _TIME_DEFS.items():
        if metric in present:
            out[metric] = {
                "source_metric": metric,
                "same_definition": same,
                "recomputed": False,
                "why": _WHY,
                "source_definition": f"{{mean,median,std,pNN}}_{names[metric]} (s): {text}",
            }
    split = gpus or {"prefill": accelerators, "decode": accelerators}
    per_gpu = {
        "total_throughput_per_gpu": f"tput_per_gpu: (input + output) tokens/s / {accelerators} GPUs (all of them)",
        "output_throughput_per_gpu": f"output_tput_per_gpu: output tokens/s / {split['decode']} "
        + ("decode GPUs" if gpus else "GPUs (all of them)"),
        "input_throughput_per_gpu": f"input_tput_per_gpu: input tokens/s / {split['prefill']} "
        + ("prefill GPUs" if gpus else "GPUs (all of them)"),
        INTERACTIVITY: "median_intvty: 1000 / median_tpot_ms, tokens/s per user (benchdb's: 1 / TPOT p50)",
    }
    # A multinode point's output (input) figure is over its decode (prefill) GPUs only.
    over_all = (INTERACTIVITY, "total_throughput_per_gpu")
    for metric, text in per_gpu.items():
        if metric in present:
            out[metric] = {
                "source_metric": metric,
                "source_definition": text,
                "recomputed": False,
                "why": _WHY,
                "same_definition": metric in over_all or not gpus,
            }
    return out


def _point(row: Any, where: str) -> Imported:
    if not isinstance(row, dict):
        raise SourceError(f"{where} is {type(row).__name__}, not an object (an InferenceX benchmark row)")
    missing = [k for k in _REQUIRED if row.get(k) is None]
    if missing:
        raise SourceError(
            f"{where} has no {', '.join(missing)} (an InferenceX benchmark row names its hardware, "
            "framework, model, precision, isl, osl, conc, parallelism and metrics)"
        )
    key = _text(row, "hardware", where)
    if key not in HARDWARE:
        raise SourceError(
            f"{where}: unknown hardware {key!r} (known: {', '.join(HARDWARE)}); a newer InferenceX "
            "GPU key needs its vendor and name added to benchdb.interop.inferencex.HARDWARE"
        )
    vendor, kind, name = HARDWARE[key]
    framework = _text(row, "framework", where)
    engine = _ENGINES.get(_FRAMEWORK_ALIASES.get(framework, framework), _FRAMEWORK_ALIASES.get(framework, framework))
    precision = _text(row, "precision", where)
    if precision not in PRECISIONS:
        raise SourceError(f"{where}: unknown precision {precision!r} (known: {', '.join(PRECISIONS)})")
    model = _text(row, "model", where)
    isl, osl, conc = _count(row, "isl", where), _count(row, "osl", where), _count(row, "conc", where)
    disagg, multinode = _flag(row, "disagg", where), _flag(row, "is_multinode", where)
    accelerators, by_phase = _gpus(row, where, multinode, disagg)
    if disagg:
        parallelism: dict[str, Any] = {
            "disaggregated": True,
            "prefill": _phase(row, "prefill", where),
            "decode": _phase(row, "decode", where),
        }
    else:
        parallelism = {
            **{k: v for k, v in _phase(row, "decode", where).items() if k != "workers"},
            "disaggregated": False,
        }
        if not multinode:
            parallelism["nodes"] = 1
    stats, unread = _figures(row["metrics"], where)
    stats += _power(row, where)
    spec = str(row.get("spec_method") or "none").strip().lower()
    options: dict[str, Any] = {
        "engine": engine,
        "load_generator": "InferenceX benchmark_serving.py",
        "accelerators": accelerators,
        "parallelism": parallelism,
    }
    if spec != "none":
        options["speculative_decoding"] = spec
    if multinode:
        options["multinode"] = True
    if disagg and by_phase:
        options["accelerators_by_phase"] = by_phase
    image = row.get("image") if isinstance(row.get("image"), str) else None
    run_url = row.get("run_url") if isinstance(row.get("run_url"), str) else None
    settings: dict[str, Any] = {
        "task": "text-generation",
        "engine_named_by_file": True,
        "framework": framework,
        "hardware_key": key,
        "image": image,
        "run_url": run_url,
        "date": row.get("date"),
        "endpoint": "not named by the row: InferenceX's harness uses /v1/completions",
        "unread_metrics": unread or None,
    }
    return Imported(
        model_id=model,
        backend=engine,
        device=f"remote:{key}",
        mode="completions",
        precision=precision,
        batch_size=conc,
        input_shape=f"in={isl},out={osl},concurrency={conc}",
        primary_metric=TTFT,
        options=options,
        hardware={"kind": kind, "vendor": vendor, "device_name": name, "system_name": key},
        model={"model_type": "llm", "architecture": "openai-endpoint", "task": "text-generation"},
        started_at=utc_iso(row.get("date"), f"{where}: date"),
        run_key=run_url or str(row.get("date")),
        timing_method="source-client",
        tool="InferenceX",
        summary_only=True,
        percentile_method="linear",
        statistics=stats,
        settings={k: v for k, v in settings.items() if v is not None},
        definitions=_definitions(stats, by_phase, accelerators),
        software={"image": image} if image else {},
    )


def parse(path: Path) -> list[Imported]:
    from benchdb.interop import load_json

    doc = load_json(path)
    if not isinstance(doc, list):
        raise SourceError(
            f"a JSON {type(doc).__name__}, not a list of InferenceX benchmark rows (the app's "
            "/api/v1/benchmarks answer)"
        )
    return [_point(row, f"row {i + 1} of {len(doc)}") for i, row in enumerate(doc)]

"""Each backend's options as a typed set: everything besides the key columns that changes a number.

The option set of a scenario is hashed into its identity (:func:`benchdb.schema.identity.options_id`)
and stored in full on the result. The sets live in the contract, beside the key, because both
sides need them: runners build them, and ingest rebuilds them for files written before options
were part of the key (contract v1). A backend benchdb does not know may pass any JSON object.

What is deliberately *not* an option: the stopping rule, the background-CPU limit, timeouts and
tags change how long or how carefully a scenario is measured, not what is measured.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any, Mapping

from benchdb.schema import identity


@dataclass(frozen=True)
class BackendOptions:
    #: Threads the engine was given (intra-op for ONNX Runtime, inference threads for OpenVINO).
    threads: int

    def as_dict(self) -> dict[str, Any]:
        """The canonical form (benchdb.schema.identity): unset values dropped, JSON-plain types."""
        return identity.canonical_options(asdict(self))


@dataclass(frozen=True)
class NumpyOptions(BackendOptions):
    pass


@dataclass(frozen=True)
class PytorchOptions(BackendOptions):
    #: torch.compile mode (default, reduce-overhead, max-autotune, ...); None when eager.
    compile_mode: str | None = None


@dataclass(frozen=True)
class OnnxruntimeOptions(BackendOptions):
    #: Execution providers in priority order, as benchdb names them (CPU, CUDA, TensorRT, ...).
    providers: tuple[str, ...] = ("CPU",)
    #: ORT_ENABLE_ALL, ORT_ENABLE_EXTENDED, ORT_ENABLE_BASIC or ORT_DISABLE_ALL.
    graph_optimization: str = "ORT_ENABLE_ALL"


@dataclass(frozen=True)
class OpenvinoOptions(BackendOptions):
    #: The OpenVINO device the model was compiled for (CPU, GPU.0, NPU, AUTO).
    ov_device: str = "CPU"
    #: LATENCY or THROUGHPUT.
    performance_hint: str = "LATENCY"
    #: The precision asked for; the key's precision is the one the compiled model reports.
    precision_hint: str = "fp32"
    #: Asynchronous infer requests kept busy (THROUGHPUT hint: the compiled model's
    #: OPTIMAL_NUMBER_OF_INFER_REQUESTS, known once compiled); None (left out) for the LATENCY
    #: hint's single synchronous request.
    num_requests: int | None = None


@dataclass(frozen=True)
class UserbenchOptions(BackendOptions):
    #: The environment variables a user bench declares (module-level ``ENV = [...]``) with their
    #: values, as canonical JSON text: names sorted, null when unset (``{"BENCH_SCALE":"2"}``).
    #: None (left out) when it declares none. Another value is another scenario.
    env: str | None = None


def env_differences(a: str | None, b: str | None) -> set[str]:
    """The names of the declared ENV variables whose values differ between two ``env`` option texts
    (:class:`UserbenchOptions`); text that is not such JSON names none."""
    import json

    try:
        ea, eb = json.loads(a or "{}"), json.loads(b or "{}")
        return {n for n in set(ea) | set(eb) if ea.get(n) != eb.get(n)}
    except (TypeError, ValueError, AttributeError):
        return set()


@dataclass(frozen=True)
class OrtwebOptions(BackendOptions):
    #: onnxruntime-web's execution provider: wasm, webgpu or webnn (``threads``: WASM threads).
    ep: str = "wasm"
    #: The browser engine it ran in (its version is in the result's extra and the run's software).
    browser: str = "chromium"


BY_BACKEND: dict[str, type[BackendOptions]] = {
    "numpy": NumpyOptions, "pytorch": PytorchOptions, "onnxruntime": OnnxruntimeOptions,
    "openvino": OpenvinoOptions, "userbench": UserbenchOptions, "ort-web": OrtwebOptions,
}


#: Options that are counts (positive integers) besides ``threads``.
INT_OPTIONS = ("num_requests",)


def check(backend: str, options: Any) -> dict[str, Any]:
    """Validate an options object against the backend's typed set; returns it as a plain dict.

    Raises ValueError naming the field. Unknown backends only need a JSON object.
    """
    if not isinstance(options, Mapping):
        raise ValueError("not an object")
    cls = BY_BACKEND.get(backend)
    if cls is None:
        return dict(options)
    known = {f.name: f for f in fields(cls)}
    for name in options:
        if name not in known:
            raise ValueError(f"{name}: not an option of {backend} (it has {', '.join(known)})")
    if not isinstance(options.get("threads"), int) or isinstance(options.get("threads"), bool) \
            or options["threads"] < 1:
        raise ValueError("threads: must be a positive integer")
    for name, value in options.items():
        if name in INT_OPTIONS:
            if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
                raise ValueError(f"{name}: must be a positive integer")
        elif name == "providers":
            if not isinstance(value, (list, tuple)) or not value or not all(isinstance(p, str) for p in value):
                raise ValueError("providers: must be a non-empty list of names")
        elif name != "threads" and value is not None and not isinstance(value, str):
            raise ValueError(f"{name}: must be a string, found {type(value).__name__}")
    return dict(options)


def from_v1(scenario: Mapping[str, Any]) -> dict[str, Any]:
    """The best options a contract v1 scenario (or a schema-2 results row) allows: rebuilt from
    the settings and thread count it recorded. Threads unknown -> left out (never guessed)."""
    settings = scenario.get("settings") or {}
    backend = scenario.get("backend")
    out: dict[str, Any] = {"threads": scenario.get("threads")}
    if backend == "pytorch":
        out["compile_mode"] = settings.get("compile_mode")
    elif backend == "onnxruntime":
        out["providers"] = list(settings.get("providers") or ["CPU"])
        out["graph_optimization"] = settings.get("graph_optimization")
    elif backend == "openvino":
        out["ov_device"] = settings.get("ov_device")
        out["performance_hint"] = settings.get("performance_hint")
        out["precision_hint"] = scenario.get("precision")
    return {k: v for k, v in out.items() if v is not None}


#: Tasks whose PyTorch results include generation (TTFT, TPOT): the forced number of new tokens
#: is part of their input shape (``,new_tokens=N``).
GENERATIVE_TASKS = ("text-generation", "text2text-generation", "automatic-speech-recognition",
                    "image-text-to-text")
#: benchdb 0.1's --gen-tokens default, for results that did not record theirs.
V1_GEN_TOKENS = 16


def v1_gen_tokens(config: Mapping[str, Any] | None) -> int:
    """The forced new tokens of a 0.1 run, from its recorded configuration."""
    config = config or {}
    for source in [config] + list(config.get("runs") or []):
        if isinstance(source, Mapping) and isinstance(source.get("gen_tokens"), int):
            return source["gen_tokens"]
    return V1_GEN_TOKENS


#: The device family an ONNX Runtime execution provider runs on (None: the provider's own device
#: setting decides, as for OpenVINO's CPU/GPU/NPU).
ORT_PROVIDER_DEVICE: dict[str, str | None] = {
    "CPU": "cpu", "CUDA": "cuda", "TensorRT": "cuda", "ROCm": "rocm", "MIGraphX": "rocm",
    "DirectML": "dml", "CoreML": "coreml", "QNN": "npu", "OpenVINO": None,
}


def ort_device(providers: list[str] | tuple[str, ...], requested: str = "cpu") -> str:
    """The device an ONNX Runtime session measures: that of its first execution provider, with
    the unit number from ``requested`` when it names the same family (``--device cuda:1``)."""
    family = ORT_PROVIDER_DEVICE.get(providers[0], providers[0].lower())
    requested = (requested or "cpu").lower()
    if family is None:
        return requested
    base, _, index = requested.replace(".", ":").partition(":")
    if base == family and index:
        return f"{family}:{index}"
    return family

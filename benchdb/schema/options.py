"""Checking a result's options, and rebuilding them for files written before options were part
of the key (contract v1).

The option set of a scenario is hashed into its identity (:func:`benchdb.schema.identity.options_id`)
and stored in full on the result. Each backend declares its typed set
(:attr:`benchdb.backends.api.BackendInfo.option_set`); a backend not registered here may pass any
JSON object.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from typing import Any

from benchdb.errors import BenchdbError


def env_differences(a: str | None, b: str | None) -> set[str]:
    """The names of the declared ENV variables whose values differ between two ``env`` option texts
    (:class:`benchdb.backends.userbench.options.UserbenchOptions`); text that is not such JSON names none."""
    import json

    try:
        ea, eb = json.loads(a or "{}"), json.loads(b or "{}")
        return {n for n in set(ea) | set(eb) if ea.get(n) != eb.get(n)}
    except (TypeError, ValueError, AttributeError):
        return set()


def option_set(backend: str) -> type | None:
    """The backend's typed option set (:attr:`benchdb.backends.api.BackendInfo.option_set`), or
    None for a backend not registered here."""
    from benchdb.backends import registry

    try:
        found = registry.backends().get(backend)
    except BenchdbError:       # no backends registered (benchdb not installed): check JSON only
        return None
    return found.option_set if found is not None else None


def _kind(annotation: Any) -> str:
    """What a typed option set's field holds, from its annotation: int (a positive count), bool,
    list (of names: a tuple field), dict (a JSON object, e.g. a serving deployment's parallelism) or str."""
    text = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", str(annotation))
    for kind, marks in (("dict", ("dict",)), ("list", ("tuple", "list")), ("bool", ("bool",)), ("int", ("int",))):
        if any(m in text for m in marks):
            return kind
    return "str"


def _check_value(name: str, kind: str, value: Any) -> None:
    if value is None:
        return
    if kind == "int" and (not isinstance(value, int) or isinstance(value, bool) or value < 1):
        raise ValueError(f"{name}: must be a positive integer")
    if kind == "bool" and not isinstance(value, bool):
        raise ValueError(f"{name}: must be true or false, found {type(value).__name__}")
    if kind == "list" and (not isinstance(value, (list, tuple)) or not value
                           or not all(isinstance(p, str) for p in value)):
        raise ValueError(f"{name}: must be a non-empty list of names")
    if kind == "dict" and not isinstance(value, Mapping):
        raise ValueError(f"{name}: must be an object, found {type(value).__name__}")
    if kind == "str" and not isinstance(value, str):
        raise ValueError(f"{name}: must be a string, found {type(value).__name__}")


def check(backend: str, options: Any) -> dict[str, Any]:
    """Validate an options object against the backend's typed set (each field's type from its
    annotation); returns it as a plain dict.

    Raises ValueError naming the field. Unknown backends only need a JSON object.
    """
    if not isinstance(options, Mapping):
        raise ValueError("not an object")
    cls = option_set(backend)
    if cls is None:
        return dict(options)
    known = {f.name: f for f in fields(cls)}
    for name in options:
        if name not in known:
            raise ValueError(f"{name}: not an option of {backend} (it has {', '.join(known)})")
    if options.get("threads") is None:
        raise ValueError("threads: must be a positive integer")
    for name, value in options.items():
        _check_value(name, _kind(known[name].type), value)
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

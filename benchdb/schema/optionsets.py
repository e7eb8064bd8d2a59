"""Checking a result's options, and rebuilding them for files written before options were part
of the key (contract v1).

The option set of a scenario is hashed into its identity (:func:`benchdb.schema.identity.options_id`)
and stored in full on the result. Each backend declares its typed set
(:attr:`benchdb.backends.protocol.BackendInfo.option_set`); a backend not registered here may pass any
JSON object.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from functools import lru_cache
from typing import Any


def env_differences(a: str | None, b: str | None) -> set[str]:
    """The names of the declared ENV variables whose values differ between two ``env`` option texts
    (:class:`benchdb.backends.userbench.options.UserbenchOptions`); text that is not such JSON names none."""
    import json

    try:
        ea, eb = json.loads(a or "{}"), json.loads(b or "{}")
        return {n for n in set(ea) | set(eb) if ea.get(n) != eb.get(n)}
    except (TypeError, ValueError, AttributeError):
        return set()


#: The entry-point group backends register in (benchdb's own and plug-ins'). Each entry point
#: names an object whose ``option_set`` is the backend's typed set; schema reads it through the
#: entry point, so it imports no backend.
ENTRY_POINT_GROUP = "benchdb.backends"

_registered: dict[str, type | None] = {}


def register(backend: str, option_set: type | None) -> None:
    """Register a backend's typed option set (a backend found another way than its entry point,
    e.g. a plug-in loaded by hand in a test)."""
    _registered[backend] = option_set


@lru_cache(maxsize=1)
def _from_entry_points() -> dict[str, type | None]:
    """Each backend's option set from the ``benchdb.backends`` entry points: benchdb's own first, so
    a plug-in cannot take its name; a plug-in that fails to load has none (any JSON object)."""
    from importlib import metadata  # ~35 ms (email, zipfile): not paid by readers that never check options

    found: dict[str, type | None] = {}
    for ep in sorted(
        metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda ep: (not ep.value.startswith("benchdb."), ep.name)
    ):
        if ep.name in found:
            continue
        try:
            found[ep.name] = getattr(ep.load(), "option_set", None)
        except Exception:  # a broken plug-in must not break ingest: its results keep any JSON object
            found[ep.name] = None
    return found


def option_set(backend: str) -> type | None:
    """The backend's typed option set (:attr:`benchdb.backends.protocol.BackendInfo.option_set`), or
    None for a backend not registered here."""
    if backend in _registered:
        return _registered[backend]
    return _from_entry_points().get(backend)


def measured_device(backend: str, options: Mapping[str, Any], requested: str) -> str:
    """The device a result measured, as its backend's option set defines it (ONNX Runtime: its
    first execution provider's); the requested device for a backend that does not say."""
    cls = option_set(backend)
    rule = getattr(cls, "measured_device", None)
    return rule(options, requested) if rule is not None else requested


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
    if kind == "list" and (
        not isinstance(value, (list, tuple)) or not value or not all(isinstance(p, str) for p in value)
    ):
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
GENERATIVE_TASKS = ("text-generation", "text2text-generation", "automatic-speech-recognition", "image-text-to-text")
#: benchdb 0.1's --gen-tokens default, for results that did not record theirs.
V1_GEN_TOKENS = 16


def v1_gen_tokens(config: Mapping[str, Any] | None) -> int:
    """The forced new tokens of a 0.1 run, from its recorded configuration."""
    config = config or {}
    for source in [config] + list(config.get("runs") or []):
        if isinstance(source, Mapping) and isinstance(source.get("gen_tokens"), int):
            return source["gen_tokens"]
    return V1_GEN_TOKENS

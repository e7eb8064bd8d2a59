"""The registry of backends: benchdb's own, plus any a third party adds through an entry point.

A third-party package adds a backend by exposing a :class:`~benchdb.harness.machine.BackendInfo`
in the ``benchdb.backends`` entry-point group, for example in its ``pyproject.toml``::

    [project.entry-points."benchdb.backends"]
    tensorrt_llm = "mypkg.benchdb_backend:BACKEND"

where ``BACKEND = BackendInfo("tensorrt_llm", "tensorrt_llm", "tensorrt_llm", "pip install ...",
"mypkg.benchdb_backend")`` names the module that implements the backend protocol described in
:mod:`benchdb.backends.base`. Listing backends imports no backend library; loading one does.
"""

from __future__ import annotations

import importlib
from functools import lru_cache
from importlib import metadata
from types import ModuleType

from benchdb import __version__
from benchdb.errors import BackendUnavailable, BenchdbError
from benchdb.harness.machine import TORCH, BackendInfo, availability

ENTRY_POINT_GROUP = "benchdb.backends"

BUILTIN: dict[str, BackendInfo] = {
    "numpy": BackendInfo("numpy", "numpy", "numpy", "pip install numpy", "benchdb.backends.numpy"),
    "pytorch": TORCH,
    "onnxruntime": BackendInfo("onnxruntime", "onnxruntime", "onnxruntime", "pip install 'benchdb[onnx]'",
                               "benchdb.backends.onnxruntime"),
    "openvino": BackendInfo("openvino", "openvino", "openvino", "pip install 'benchdb[openvino]'",
                            "benchdb.backends.openvino"),
    # your own bench_* functions (benchdb run --bench PATH): needs nothing beyond benchdb itself
    "userbench": BackendInfo("userbench", "benchdb", "benchdb.bench", "reinstall benchdb",
                             "benchdb.backends.userbench"),
}


@lru_cache(maxsize=1)
def backends() -> dict[str, BackendInfo]:
    """Every known backend by name: the built-in ones, then those of installed plug-ins."""
    found = dict(BUILTIN)
    for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
        if ep.name in found:
            continue
        try:
            info = ep.load()
        except Exception:  # a broken plug-in must not break benchdb: it is listed as unavailable
            info = BackendInfo(ep.name, ep.dist.name if ep.dist else ep.name, ep.value.split(":")[0],
                               f"reinstall the package that provides {ep.name}", ep.value.split(":")[0])
        if isinstance(info, BackendInfo):
            found[ep.name] = info
    return found


def names() -> list[str]:
    return sorted(backends())


def info(name: str) -> BackendInfo:
    found = backends().get(name)
    if found is None:
        raise BenchdbError(f"unknown backend {name!r}; choose one of {', '.join(names())}")
    return found


def load(name: str) -> ModuleType:
    """Import a backend's implementation, or say it is unavailable and how to install it."""
    backend = info(name)
    avail = availability(backend, install=True)
    if avail["status"] != "available":
        why = avail.get("reason") or f"{backend.package} is not installed"
        raise BackendUnavailable(f"backend {name} is unavailable: {why}; install it with: {avail['hint']}")
    if not backend.implementation:
        raise BackendUnavailable(f"backend {name} has no implementation in benchdb {__version__}")
    try:
        module = importlib.import_module(backend.implementation)
        module.software()          # imports the backend library itself
    except ImportError as exc:
        raise BackendUnavailable(f"backend {name} is unavailable: importing {backend.module} failed ({exc}); "
                                 f"reinstall it with: {backend.hint}") from None
    return module

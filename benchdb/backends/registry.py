"""The registry of backends: every one, benchdb's own included, registers through the
``benchdb.backends`` entry-point group.

A backend is a package (see :mod:`benchdb.backends.protocol`) whose light ``__init__`` exposes a
:class:`~benchdb.backends.protocol.BackendInfo`; its distribution names it in ``pyproject.toml``::

    [project.entry-points."benchdb.backends"]
    tensorrt_llm = "mypkg.benchdb_backend:BACKEND"

where ``BACKEND = BackendInfo("tensorrt_llm", "tensorrt_llm", "tensorrt_llm", "pip install ...",
"mypkg.benchdb_backend.backend", options=(...))`` names the module implementing
:class:`~benchdb.backends.protocol.Backend`. Listing backends imports no backend library; loading one does.
"""

from __future__ import annotations

import importlib
import inspect
from functools import lru_cache
from importlib import metadata
from types import ModuleType

from benchdb import __version__
from benchdb.backends.protocol import METHODS, Backend, BackendInfo
from benchdb.errors import BackendUnavailable, BenchdbError, did_you_mean
from benchdb.harness.hardware import availability
from benchdb.schema import optionsets

ENTRY_POINT_GROUP = optionsets.ENTRY_POINT_GROUP


@lru_cache(maxsize=1)
def backends() -> dict[str, BackendInfo]:
    """Every registered backend by name: benchdb's own first, then installed plug-ins' (a plug-in
    cannot take a name benchdb's own backend has)."""
    points = sorted(metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda ep: (not _is_own(ep), ep.name))
    found: dict[str, BackendInfo] = {}
    for ep in points:
        if ep.name in found:
            continue
        try:
            info = ep.load()
        except Exception:  # a broken plug-in must not break benchdb: it is listed as unavailable
            module = ep.value.split(":")[0]
            info = BackendInfo(
                ep.name,
                ep.dist.name if ep.dist else ep.name,
                module,
                f"reinstall the package that provides {ep.name}",
                "",
            )
        if isinstance(info, BackendInfo):
            found[ep.name] = info
    if not any(n in found for n in ("numpy", "userbench")):
        raise BenchdbError(
            "benchdb's own backends are not registered (no `benchdb.backends` entry points): "
            "install benchdb, e.g. pip install -e ."
        )
    return found


def _is_own(ep: metadata.EntryPoint) -> bool:
    return ep.value.startswith("benchdb.")


def names() -> list[str]:
    return sorted(backends())


def info(name: str) -> BackendInfo:
    found = backends().get(name)
    if found is None:
        raise BenchdbError(f"unknown backend {name!r}{did_you_mean(name, names())}; choose one of {', '.join(names())}")
    return found


def check_device(name: str, device: str) -> None:
    """Refuse a device the backend cannot drive, in one line naming it, where its implementation
    checks devices (a ``check_device(device)`` of its own); a backend without one is not asked."""
    check = getattr(load(name), "check_device", None)
    if check is not None:
        check(device)


def load(name: str) -> Backend:
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
        module.software()  # imports the backend library itself
    except ImportError as exc:
        raise BackendUnavailable(
            f"backend {name} is unavailable: importing {backend.module} failed ({exc}); "
            f"reinstall it with: {backend.hint}"
        ) from None
    lacks = missing_methods(module)
    if lacks:
        raise BackendUnavailable(
            f"backend {name} is broken: {backend.implementation} lacks {', '.join(lacks)} "
            "(see benchdb.backends.protocol.Backend)"
        )
    return module


def missing_methods(module: ModuleType) -> list[str]:
    """What a backend module lacks of :class:`Backend`: missing functions, or ones whose required
    parameters do not match the protocol's."""
    out = []
    for name in METHODS:
        fn = getattr(module, name, None)
        if not callable(fn):
            out.append(f"{name}()")
            continue
        want = [
            p
            for p in inspect.signature(getattr(Backend, name)).parameters.values()
            if p.name != "self" and p.default is inspect.Parameter.empty
        ]
        try:
            got = [p for p in inspect.signature(fn).parameters.values() if p.default is inspect.Parameter.empty]
        except (TypeError, ValueError):
            continue
        if len(got) != len(want):
            out.append(f"{name}({', '.join(p.name for p in want)})")
    return out

"""The kernelized modes: a model's layers swapped for kernels through the ``kernels`` library
(``--mode kernels``, ``--mode kernels+compile[:mode]``), as transformers' ``use_kernels`` and its
benchmark_v2 "kernelized" variant do.

Which kernels: ``--kernels MAPPING`` (:func:`parse`) or transformers' default mapping for the
device. A mapping's key is a layer name the model's classes are registered under
(``@use_kernel_forward_from_hub("RMSNorm")``) or a module class name (``LlamaRMSNorm``): the
latter works whichever transformers registers, and with a transformers that does not accept the
installed ``kernels`` (its decorators then do nothing). The mapping's canonical form
(:func:`identity`: repository and version, or a local repository's content hash) is part of the
kernelized scenarios' identity; what was applied (every replaced layer, its source, the library's
version) goes into the result (:class:`~benchdb.backends.pytorch.kernelize.Applied`). Nothing replaced
is :class:`~benchdb.backends.pytorch.kernelize.Unsupported`, never an eager measurement labelled
"kernels" (:mod:`benchdb.backends.pytorch.kernelize` applies a mapping).

Measuring never downloads (the same rule as models): Hub kernels come from the local cache, unless
the environment says ``HF_HUB_OFFLINE=0``; a missing one is unsupported with the command that
fetches it. Trust is the ``kernels`` library's (trusted publishers; ``trust_remote_code`` only with
``--kernels-trust-remote-code``).

Imports no torch or ``kernels`` at module level (planning parses mappings in the parent process).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchdb.backends.pytorch.options import PytorchOptions
from benchdb.errors import BackendUnavailable, BenchdbError

INSTALL = "pip install 'benchdb[kernels]'"
#: The identity of transformers' default mapping (what it held is in each result).
DEFAULT = PytorchOptions.DEFAULT_KERNELS
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")
_NAME = re.compile(r"^[A-Za-z_][\w.]*$")
_SYNTAX = "Layer=org/repo:LayerName[@version] or Layer=/path/to/repo:LayerName"


def library():
    """The ``kernels`` module, or :class:`BackendUnavailable` with the install hint."""
    try:
        import kernels
    except ImportError as exc:
        raise BackendUnavailable(
            f"the kernelized modes are unavailable: the kernels library is not installed "
            f"({exc}); install it with: {INSTALL}"
        ) from None
    return kernels


def split_mode(mode: str) -> tuple[bool, str | None] | None:
    """(kernelized, torch.compile mode or None) of a kernelized mode; None for another mode."""
    from benchdb.backends.pytorch import COMPILE_MODES

    if mode == "kernels":
        return True, None
    if mode == "kernels+compile":
        return True, "default"
    if mode.startswith("kernels+compile:") and mode[16:] in COMPILE_MODES:
        return True, mode[16:]
    return None


@dataclass(frozen=True)
class Entry:
    """One mapping entry: the model's layer and the kernel layer that replaces it."""

    layer: str  # a registered layer name (RMSNorm) or a module class name (LlamaRMSNorm)
    source: str  # a Hub repository id, or a local repository's absolute path
    name: str  # the layer class in the kernel repository
    local: bool
    version: int | None = None
    revision: str | None = None
    digest: str | None = None  # a local repository's content hash

    def identity(self) -> str:
        if self.local:
            return f"{self.layer}=local:{self.digest}:{self.name}"
        at = f"@v{self.version}" if self.version is not None else f"@{self.revision}"
        return f"{self.layer}={self.source}:{self.name}{at}"

    def fetch_command(self, trust: bool) -> str:
        ref = f"version={self.version}" if self.version is not None else f"revision={self.revision!r}"
        extra = ", trust_remote_code=True" if trust else ""
        return f"python -c \"import kernels; kernels.get_kernel('{self.source}', {ref}{extra})\""


def content_hash(path: Path) -> str:
    """A local kernel repository's identity: every file's relative path and bytes (bytecode, which
    importing the kernel writes there, left out)."""
    h = hashlib.sha256()
    for p in sorted(path.rglob("*")):
        rel = p.relative_to(path)
        if not p.is_file() or "__pycache__" in rel.parts or p.suffix == ".pyc":
            continue
        h.update(str(rel).encode() + b"\0")
        h.update(p.read_bytes())
        h.update(b"\0")
    return "sha256:" + h.hexdigest()[:16]


def _entry(layer: str, target: str, where: str) -> Entry:
    layer, target = layer.strip(), target.strip()
    if not _NAME.match(layer):
        raise BenchdbError(f"{where}: {layer!r} is not a layer name; write {_SYNTAX}")
    head, at, ref = target.rpartition("@")
    if not at or "/" in ref or ":" in ref:
        head, ref = target, ""
    source, colon, name = head.rpartition(":")
    if not colon or not source or not _NAME.match(name):
        raise BenchdbError(f"{where}: {target!r} names no kernel layer; write {_SYNTAX}")
    path = Path(source).expanduser()
    if source.startswith(("/", "./", "../", "~")) or path.is_dir():
        if ref:
            raise BenchdbError(f"{where}: a local kernel repository ({source}) has no versions; drop @{ref}")
        if not path.is_dir():
            raise BenchdbError(f"{where}: local kernel repository {source} does not exist")
        path = path.resolve()
        return Entry(layer, str(path), name, True, digest=content_hash(path))
    if not _HUB_ID.match(source):
        raise BenchdbError(f"{where}: {source!r} is neither a Hub repository (org/name) nor a local folder")
    if ref.lstrip("v").isdigit():
        return Entry(layer, source, name, False, version=int(ref.lstrip("v")))
    # transformers' KernelConfig takes version 1 when none is given
    return Entry(layer, source, name, False, version=None if ref else 1, revision=ref or None)


def _from_file(path: Path) -> list[Entry]:
    where = f"--kernels {path}"
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BenchdbError(f"{where}: cannot read it ({exc})") from None
    if path.suffix.lower() not in (".yaml", ".yml", ".json"):
        lines = [line.split("#", 1)[0].strip() for line in text.splitlines()]
        return _inline(",".join(line for line in lines if line), where)
    import yaml

    try:
        data = json.loads(text) if path.suffix.lower() == ".json" else yaml.safe_load(text)
    except (ValueError, yaml.YAMLError) as exc:
        raise BenchdbError(f"{where}: not valid {path.suffix[1:].upper()} ({str(exc).splitlines()[0]})") from None
    if not isinstance(data, dict) or not data:
        raise BenchdbError(f"{where}: expected a mapping like {{RMSNorm: 'org/repo:LayerName@1'}}")
    out = []
    for layer, target in data.items():
        if isinstance(target, list) and len(target) == 2 and isinstance(target[1], dict):
            # transformers' KernelConfig form: ["org/repo:LayerName", {"version": 1} or {"revision": "..."}]
            ref = target[1].get("version", target[1].get("revision"))
            target = f"{target[0]}@{ref}" if ref is not None else target[0]
        if not isinstance(target, str):
            raise BenchdbError(f"{where}: the kernel of {layer!r} must be a string like 'org/repo:LayerName@1'")
        out.append(_entry(str(layer), target, where))
    return out


def _inline(text: str, where: str) -> list[Entry]:
    out = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        layer, eq, target = part.partition("=")
        if not eq:
            raise BenchdbError(f"{where}: {part!r} is not {_SYNTAX}")
        out.append(_entry(layer, target, where))
    if not out:
        raise BenchdbError(f"{where}: no entries; write {_SYNTAX}")
    return out


def parse(text: str | None) -> list[Entry] | None:
    """The ``--kernels`` entries (None: transformers' default mapping). A file (lines, or a YAML or
    JSON mapping) or inline entries; :class:`BenchdbError` naming what is wrong."""
    if text is None:
        return None
    path = Path(text).expanduser()
    entries = _from_file(path) if path.is_file() else _inline(text, f"--kernels {text!r}")
    seen: set[str] = set()
    for e in entries:
        if e.layer in seen:
            raise BenchdbError(f"--kernels: layer {e.layer} is mapped twice")
        seen.add(e.layer)
    return entries


def identity(entries: list[Entry] | None) -> str:
    """The mapping's canonical form, for the scenario's options."""
    return DEFAULT if entries is None else ",".join(sorted(e.identity() for e in entries))


def _layer_names(net) -> dict[str, set[str]]:
    """Every module class name and registered layer name of a model, with the classes behind it."""
    out: dict[str, set[str]] = {}
    for module in kernel_modules(net):
        cls = type(module)
        out.setdefault(cls.__name__, set()).add(cls.__name__)
        registered = getattr(cls, "kernel_layer_name", None)
        if registered:
            out.setdefault(str(registered), set()).add(cls.__name__)
    return out


def kernel_modules(net) -> Iterator[Any]:
    """The model's modules and the kernel functions attached to them (``use_kernelized_func``)."""
    for module in net.modules():
        yield module
        yield from getattr(module, "_kernel_funcs", {}).values()


def check_layers(entries: list[Entry], specs: list[str], task: str | None) -> None:
    """Refuse a mapping entry that names a layer no model of the run has (a typo), from each
    model's classes built on the meta device (no weights)."""
    import torch
    import transformers as T

    from benchdb.backends.shared import models

    have: dict[str, dict[str, set[str]]] = {}
    for spec in specs:
        m = models.resolve(spec, task)
        try:
            with torch.device("meta"):
                have[spec] = _layer_names(getattr(T, m.kind.auto_class).from_config(m.config))
        except Exception:  # a model that cannot be built without weights is checked when measured
            continue
    if not have:
        return
    for e in entries:
        if not any(e.layer in names for names in have.values()):
            spec, names = next(iter(have.items()))
            registered = ", ".join(sorted({n for n, classes in names.items() if n not in classes})) or _none()
            lead = f"model {spec} has" if len(have) == 1 else f"none of the models ({', '.join(have)}) has"
            raise BenchdbError(
                f"--kernels: {lead} no layer {e.layer!r}; its registered kernel layers: "
                f"{registered}; classes: {', '.join(sorted(c for c in names if c in names[c]))}"
            )


def _none() -> str:
    """Why a model has no registered kernel layers: transformers registers them only with the
    kernels versions it takes (its decorators do nothing otherwise)."""
    import transformers
    from transformers.utils import import_utils

    if import_utils.is_kernels_available():
        return "none"
    return (
        f"none (transformers {transformers.__version__} registers them only with {kernels_taken()}; "
        "name a module class)"
    )


def kernels_taken() -> str:
    from transformers.utils import import_utils

    low = getattr(import_utils, "KERNELS_MIN_VERSION", "?")
    high = getattr(import_utils, "KERNELS_MAX_VERSION", "?")
    return f"kernels >={low},<{high}"

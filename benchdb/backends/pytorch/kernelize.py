"""Kernelizing a model for a measurement: the kernels library's mapping built for the model (the
--kernels entries or transformers' default), Hub kernels resolved from the local cache only, the
layers swapped, and what was replaced (:class:`Applied`), or :class:`Unsupported` with why."""

from __future__ import annotations

import os
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchdb.backends.pytorch.hubkernels import Entry, identity, kernel_modules, kernels_taken, library


class Unsupported(Exception):
    """Nothing could be kernelized, with why (the scenario's unsupported reason)."""


@dataclass
class Applied:
    """What kernelizing a model did: the replaced modules, grouped by layer and kernel."""

    mapping: str
    library: str
    layers: list[dict[str, Any]] = field(default_factory=list)

    @property
    def replaced(self) -> int:
        return sum(layer["modules"] for layer in self.layers)

    def extra(self) -> dict[str, Any]:
        return {
            "kernels": {
                "mapping": self.mapping,
                "library": self.library,
                "replaced": self.replaced,
                "layers": self.layers,
            }
        }


def _downloads_allowed() -> bool:
    value = os.environ.get("HF_HUB_OFFLINE")
    return value is not None and value.strip().lower() in ("0", "false", "no", "off")


@contextmanager
def _hub_access():
    """The kernels library resolves Hub kernels from the local cache only while huggingface_hub
    is offline; benchdb holds it offline unless the environment explicitly allows downloads."""
    from huggingface_hub import constants

    old = constants.HF_HUB_OFFLINE
    constants.HF_HUB_OFFLINE = not _downloads_allowed()
    try:
        yield
    finally:
        constants.HF_HUB_OFFLINE = old


def _default_mapping(lib) -> dict:
    import transformers
    from transformers.utils import import_utils

    if not import_utils.is_kernels_available():
        raise Unsupported(
            f"transformers {transformers.__version__} has no kernel mapping with kernels "
            f"{lib.__version__} (it takes {kernels_taken()}); pass --kernels "
            "Layer=org/repo:LayerName with a module class as Layer"
        )
    from transformers.integrations import hub_kernels

    return hub_kernels.get_kernel_mapping_transformers()


def _repository(lib, e: Entry, trust: bool):
    if e.local:
        return lib.LocalLayerRepository(repo_path=Path(e.source), layer_name=e.name)
    return lib.LayerRepository(
        e.source, layer_name=e.name, version=e.version, revision=e.revision, trust_remote_code=trust
    )


def _user_mapping(lib, net, entries: list[Entry], device: str, trust: bool) -> tuple[dict, dict[str, Entry]]:
    """The kernels library's mapping for the entries that name layers of this model; classes named
    by their class name are registered under it (kernels.replace_kernel_forward_from_hub)."""
    mapping: dict = {}
    by_layer: dict[str, Entry] = {}
    for e in entries:
        for module in kernel_modules(net):
            cls = type(module)
            registered = getattr(cls, "kernel_layer_name", None)
            if registered != e.layer and cls.__name__ != e.layer:
                continue
            if registered is None:
                lib.replace_kernel_forward_from_hub(cls, e.layer)
                registered = e.layer
            mapping[str(registered)] = {device: _repository(lib, e, trust)}
            by_layer[str(registered)] = e
    return mapping, by_layer


def _has_device(devices: dict, device: str) -> bool:
    return any((d if isinstance(d, str) else getattr(d, "type", None)) == device for d in devices)


def _replaced(net) -> dict[tuple[str, str, str], int]:
    """(registered layer, module class, kernel forward) -> modules whose forward was replaced."""
    out: dict[tuple[str, str, str], int] = {}
    for module in kernel_modules(net):
        cls = type(module)
        bound = module.__dict__.get("forward")
        fn = getattr(bound, "__func__", None)
        if getattr(cls, "kernel_layer_name", None) is None or fn is None or fn is cls.forward:
            continue
        key = (str(cls.kernel_layer_name), cls.__name__, f"{fn.__module__}.{fn.__qualname__}")
        out[key] = out.get(key, 0) + 1
    return out


def apply(net, spec: str, entries: list[Entry] | None, device: str, compiled: bool, trust: bool) -> Applied:
    """Kernelize ``net`` in place for inference on ``device`` (a kernels device type: cpu, cuda,
    rocm, mps, xpu), for torch.compile on top when ``compiled``. :class:`Unsupported` when nothing
    was replaced or a kernel could not be loaded."""
    lib = library()
    by_layer: dict[str, Entry] = {}
    if entries is None:
        mapping = _default_mapping(lib)
    else:
        mapping, by_layer = _user_mapping(lib, net, entries, device, trust)
    present = sorted(
        {
            str(cls_layer)
            for m in kernel_modules(net)
            if (cls_layer := getattr(type(m), "kernel_layer_name", None)) is not None
        }
    )
    what = "the --kernels mapping" if entries is not None else "transformers' default mapping"
    why = [
        f"no kernel for {name} on {device} in {what}"
        for name in present
        if not _has_device(mapping.get(name, {}), device)
    ]
    mode = lib.Mode.INFERENCE | lib.Mode.TORCH_COMPILE if compiled else lib.Mode.INFERENCE
    try:
        with _hub_access(), lib.use_kernel_mapping(mapping, inherit_mapping=False):
            lib.kernelize(net, mode=mode, device=device, use_fallback=lib.KernelizeFallback.DEFAULT)
    except Exception as exc:
        hub = list(dict.fromkeys(e.fetch_command(trust) for e in by_layer.values() if not e.local))
        if hub:
            fetch = "; fetch it first with: " + " && ".join(hub)
        elif entries is None:
            fetch = (
                "; fetch the kernels of transformers' mapping first, e.g. python -c \"import kernels; "
                "kernels.get_kernel('org/repo', version=N)\" for the repository named above"
            )
        else:
            fetch = ""
        raise Unsupported(
            f"a kernel for {spec} could not be loaded ({type(exc).__name__}: {' '.join(str(exc).split())}){fetch}"
        ) from None
    loaded = {k.module.__name__: k for k in lib.get_loaded_kernels()}
    applied = Applied(identity(entries), lib.__version__)
    for (layer, cls_name, kernel), count in sorted(_replaced(net).items()):
        info: dict[str, Any] = {"layer": layer, "class": cls_name, "modules": count, "kernel": kernel}
        e = by_layer.get(layer)
        if e is not None:
            info.update({"source": e.source, "version": e.version, "revision": e.revision, "hash": e.digest})
        found = loaded.get(kernel.split(".", 1)[0])
        if found is not None:
            info["kernel_name"] = str(found.metadata.name)
            info["kernel_version"] = found.metadata.version
            if found.repo_info is not None:
                info.setdefault("source", found.repo_info.repo_id)
                info["resolved_revision"] = found.repo_info.revision
        applied.layers.append(info)
    if not applied.replaced:
        if not present:
            why = [
                f"{spec} has no layer {', '.join(e.layer for e in entries)}"
                if entries is not None
                else f"no layer of {spec} is registered for Hub kernels"
            ]
        elif not why and compiled:
            why = [
                f"the kernels for {', '.join(present)} do not declare torch.compile support "
                "(can_torch_compile); use --mode kernels"
            ]
        elif not why:
            why = [f"kernelizing kept the original forward of every {', '.join(present)} layer of {spec}"]
        raise Unsupported("; ".join(why))
    return applied

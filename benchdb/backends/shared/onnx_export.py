"""Export Hugging Face models to ONNX / OpenVINO IR, with an on-disk cache.

ONNX routes, tried in order: the dynamo exporter with a dynamic batch axis, dynamo with static
shapes, the legacy (TorchScript) exporter with a dynamic batch axis, legacy static. The route
that produced the file is recorded. OpenVINO converts the ONNX file when there is one, else the
``torch.export`` program. Artifacts are cached under ``$BENCHDB_CACHE`` (default
``~/.cache/benchdb``) keyed by the model's content hash, the route, opset, library versions and
the input signature, so a second run does not export again.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchdb.backends.shared.models import ResolvedModel
from benchdb.harness import hardware
from benchdb.paths import cache_root

OPSET = 18
LEGACY_OPSET = 17


class ExportFailed(Exception):
    """No route could export the model; ``reasons`` says why each one failed."""

    def __init__(self, reasons: list[str]):
        super().__init__("; ".join(reasons))
        self.reasons = reasons


@dataclass
class Exported:
    path: Path
    route: str  # e.g. onnx:dynamo-dynamic, openvino:torch.export-static
    dynamic_batch: bool
    export_s: float | None  # None when it came from the cache
    cached: bool


def _wrapper(net, names: list[str], extra: dict):
    import torch

    class Flat(torch.nn.Module):
        """Keyword or positional tensors in, a flat tuple of tensors out (exporters want that)."""

        def __init__(self):
            super().__init__()
            self.net = net

        def forward(self, *args, **kwargs):
            # a dynamo export passes every input as a keyword (args empty), the legacy one positionally
            kwargs.update(zip(names, args, strict=False))
            out = self.net(**kwargs, **extra)
            flat: list = []

            def walk(o):
                if isinstance(o, torch.Tensor):
                    flat.append(o)
                elif isinstance(o, (tuple, list)):
                    for x in o:
                        walk(x)

            walk(out)
            return tuple(flat)

    return Flat().eval()


def flat_module(model: ResolvedModel, net, names: list[str]):
    extra = {"return_dict": False}
    if model.kind.generative:
        extra["use_cache"] = False  # the prefill forward only: no KV-cache outputs
    return _wrapper(net, names, extra)


def _signature(fwd: dict, dynamic: bool) -> list:
    return [(k, str(v.dtype), list(v.shape[1:] if dynamic else v.shape)) for k, v in fwd.items()]


def _key(model: ResolvedModel, kind: str, fwd: dict, dynamic: bool) -> str:
    versions = {p: hardware.package_version(p) for p in ("torch", "transformers", "onnx", "onnxscript", "openvino")}
    # the head too: --task loads the same weights as another class (ViTModel, ViTForImageClassification)
    payload = json.dumps(
        {
            "model": model.spec if model.path is None else None,
            "revision": model.revision,
            "auto_class": model.kind.auto_class,
            "task": model.kind.task,
            "kind": kind,
            "opset": OPSET,
            "versions": versions,
            "signature": _signature(fwd, dynamic),
            "dynamic": dynamic,
        },
        sort_keys=True,
    )
    return hashlib.sha256(payload.encode()).hexdigest()[:24]


def _first_line(exc: BaseException) -> str:
    """The root cause's first line (exporters wrap the real error in generic ones)."""
    while exc.__cause__ is not None:
        exc = exc.__cause__
    text = str(exc).strip().replace("\x1b[96m", "").replace("\x1b[0m", "")
    return f"{type(exc).__name__}: {text.splitlines()[0][:200] if text else ''}"


def _cached(model, kind: str, fwd: dict, suffix: str) -> Exported | None:
    for dynamic in (True, False):
        folder = cache_root() / kind / _key(model, kind, fwd, dynamic)
        meta = folder / "export.json"
        if meta.exists():
            info = json.loads(meta.read_text())
            return Exported(folder / f"model{suffix}", info["route"], info["dynamic_batch"], None, True)
    return None


def _store(model, kind: str, fwd: dict, dynamic: bool, route: str, write) -> Exported:
    return _write_folder(cache_root() / kind / _key(model, kind, fwd, dynamic), route, dynamic, write)


def _write_folder(folder: Path, route: str, dynamic: bool, write) -> Exported:
    """Write into a temp folder, then move it into place (a crash never leaves a half cache)."""
    tmp = folder.with_name(folder.name + f".tmp{os.getpid()}")
    tmp.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    path = write(tmp)
    export_s = time.perf_counter() - t0
    (tmp / "export.json").write_text(json.dumps({"route": route, "dynamic_batch": dynamic, "export_s": export_s}))
    try:
        if not folder.exists():
            os.replace(tmp, folder)
    except OSError:
        # another process sharing the cache (a --parallel worker, a second run) moved its copy of the
        # same artifact into place between the check and the move: that copy is kept
        if not (folder / "export.json").exists():
            raise
    if tmp.exists():
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)
    return Exported(folder / path.name, route, dynamic, export_s, False)


def cached_artifact(kind: str, key: str, route: str, dynamic: bool, suffix: str, write) -> Exported:
    """An artifact derived from another (a quantized model), from ``$BENCHDB_CACHE/kind/key`` when
    there, else made by ``write(folder) -> path`` and stored there."""
    folder = cache_root() / kind / key
    if (folder / "export.json").exists():
        info = json.loads((folder / "export.json").read_text())
        return Exported(folder / f"model{suffix}", info["route"], info["dynamic_batch"], None, True)
    return _write_folder(folder, route, dynamic, write)


def onnx(model: ResolvedModel, net, fwd: dict) -> Exported:
    """An ONNX file for ``net`` on inputs like ``fwd`` (torch tensors), from the cache if there."""
    import torch

    hit = _cached(model, "onnx", fwd, ".onnx")
    if hit:
        return hit
    import logging

    logging.getLogger("torch.onnx").setLevel(logging.ERROR)  # e.g. "torchvision is not installed"
    names = list(fwd)
    flat = flat_module(model, net, names)
    args = tuple(fwd.values())
    reasons = []
    # (A dynamo export with a dynamic batch axis failed for every key class with torch 2.13, so
    # dynamo exports are static per input shape; the legacy fallback keeps a dynamic batch axis.)
    routes = [
        (
            "dynamo-static",
            False,
            lambda p: torch.onnx.export(flat, (), p, kwargs=fwd, dynamo=True, opset_version=OPSET),
        ),
        (
            "legacy-dynamic",
            True,
            lambda p: torch.onnx.export(
                flat,
                args,
                p,
                input_names=names,
                dynamo=False,
                opset_version=LEGACY_OPSET,
                dynamic_axes={k: {0: "batch"} for k in names},
            ),
        ),
    ]
    for route, dynamic, fn in routes:

        def write(folder: Path, fn=fn) -> Path:
            path = folder / "model.onnx"
            with warnings.catch_warnings(), torch.inference_mode(False), torch.no_grad(), one_torchlib_registry():
                warnings.simplefilter("ignore")
                quiet(fn, str(path))
            return path

        try:
            return _store(model, "onnx", fwd, dynamic, f"onnx:{route}", write)
        except Exception as exc:  # this route cannot export the model: try the next
            reasons.append(f"{route}: {_first_line(exc)}")
    raise ExportFailed(reasons)


#: torchlib registries built in this process, by the arguments they were built with.
_REGISTRIES: dict[tuple, Any] = {}


@contextmanager
def one_torchlib_registry() -> Iterator[None]:
    """Within the block, torch.onnx's dynamo exporter takes its table of ATen-to-ONNX functions
    (the torchlib registry) from one built once per process and opset, not afresh for each export.

    Building it costs about a second (onnxscript re-parses the source of every function in the
    table), and it depends only on the opset and the installed torch and onnxscript; an export only
    reads it (a custom translation table, which would add to it, is never passed here), so every
    export gets the same graph either way. Where torch lacks the hook the exports build their own."""
    try:
        from torch.onnx._internal.exporter import _registration
    except ImportError:
        yield
        return
    cls = _registration.ONNXRegistry
    original = cls.__dict__.get("from_torchlib")
    if not isinstance(original, classmethod):
        yield
        return
    build = original.__func__

    def shared(klass, *args, **kwargs):
        key = (klass, args, tuple(sorted(kwargs.items())))
        if key not in _REGISTRIES:
            _REGISTRIES[key] = build(klass, *args, **kwargs)
        return _REGISTRIES[key]

    cls.from_torchlib = classmethod(shared)  # type: ignore[method-assign,assignment]
    try:
        yield
    finally:
        cls.from_torchlib = original  # type: ignore[method-assign,assignment]


def quiet(fn, *args, **kwargs):
    """Run an exporter or quantizer without its progress chatter on stdout/stderr."""
    import contextlib
    import io

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        return fn(*args, **kwargs)


def openvino_ir(model: ResolvedModel, net, fwd: dict, onnx_file: Exported | None) -> Exported:
    """OpenVINO IR (.xml/.bin, kept in fp32: compress_to_fp16=False) from ONNX or torch.export."""
    import openvino as ov
    import torch

    hit = _cached(model, "openvino", fwd, ".xml")
    if hit:
        return hit
    reasons = []
    if onnx_file is not None:

        def from_onnx(folder: Path) -> Path:
            path = folder / "model.xml"
            ov.save_model(ov.convert_model(str(onnx_file.path)), str(path), compress_to_fp16=False)
            return path

        try:  # as dynamic as the ONNX file it comes from
            return _store(model, "openvino", fwd, onnx_file.dynamic_batch, "openvino:onnx", from_onnx)
        except Exception as exc:
            reasons.append(f"from ONNX: {_first_line(exc)}")

    def from_torch(folder: Path) -> Path:
        path = folder / "model.xml"
        flat = flat_module(model, net, list(fwd))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            program = quiet(torch.export.export, flat, (), fwd)
            ov.save_model(ov.convert_model(program), str(path), compress_to_fp16=False)
        return path

    try:
        return _store(model, "openvino", fwd, False, "openvino:torch.export", from_torch)
    except Exception as exc:
        reasons.append(f"torch.export: {_first_line(exc)}")
    raise ExportFailed(reasons)


def compare(reference, outputs, precision: str) -> tuple[float, float, bool]:
    """(max abs error, max error relative to the reference's largest magnitude, within tolerance)
    of the first output, against the PyTorch fp32 reference."""
    import numpy as np

    ref = np.asarray(reference, dtype=np.float64)
    out = np.asarray(outputs, dtype=np.float64)
    if ref.shape != out.shape:
        return float("inf"), float("inf"), False
    abs_err = float(np.max(np.abs(out - ref))) if ref.size else 0.0
    scale = float(np.max(np.abs(ref))) if ref.size else 1.0
    rel = abs_err / scale if scale > 0 else abs_err
    tolerance = TOLERANCE.get(precision)
    return abs_err, rel, tolerance is None or rel <= tolerance


def agreement(reference, outputs, task: str | None = None, generative: bool = False) -> dict[str, float]:
    """How closely an output follows the fp32 reference beyond its largest error: the mean cosine
    similarity of each item's output (``cosine_similarity``), and for a classifier the share of items
    whose top class is the reference's (``top1_agreement``), for a generative model the share of
    positions whose most likely next token is the reference's (``token_agreement``). Empty when the
    shapes differ or a value is not finite."""
    import numpy as np

    ref = np.asarray(reference, dtype=np.float64)
    out = np.asarray(outputs, dtype=np.float64)
    if ref.shape != out.shape or not ref.size or not (np.isfinite(ref).all() and np.isfinite(out).all()):
        return {}
    a, b = ref.reshape(ref.shape[0], -1), out.reshape(out.shape[0], -1)
    norms = np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1)
    cos = np.where(norms > 0, np.sum(a * b, axis=1) / np.where(norms > 0, norms, 1.0), 1.0)
    found = {"cosine_similarity": float(np.mean(cos))}
    if ref.ndim >= 2 and ref.shape[-1] > 1:
        same = float(np.mean(np.argmax(ref, axis=-1) == np.argmax(out, axis=-1)))
        if generative:
            found["token_agreement"] = same
        elif task and task.endswith("classification") and ref.ndim == 2:
            found["top1_agreement"] = same
    return found


def check_outcome(
    reference, outputs, precision: str, task: str | None = None, generative: bool = False
) -> tuple[str, str | None, list, dict]:
    """(status, error, metric rows, extra fields) of the first output's check against the PyTorch
    fp32 reference (:func:`compare`), with its :func:`agreement` for every precision but fp32.
    A quantized precision has no tolerance: its agreement is recorded, and a constraint on it
    (``report --max-accuracy-drop``) decides.

    A non-finite error (NaN or inf in the outputs, or outputs of another shape) is a mismatch
    whose error says so; it is never written as a metric value (the contract takes finite values
    only), and its extra fields are null."""
    import math

    abs_err, rel_err, agrees = compare(reference, outputs, precision)
    tolerance = TOLERANCE.get(precision)
    finite = math.isfinite(abs_err) and math.isfinite(rel_err)
    if agrees and finite:
        status, error = "ok", None
    elif not finite:
        status, error = (
            "mismatch",
            (
                "outputs differ from PyTorch fp32: NaN or inf in the outputs, or another "
                "shape (no finite error to report)"
            ),
        )
    else:
        status, error = "mismatch", f"outputs differ from PyTorch fp32: max rel error {rel_err:.3g} > {tolerance:g}"
    rows = [("max_abs_err", "abs", 0, 0.0, abs_err), ("max_rel_err", "ratio", 0, 0.0, rel_err)] if finite else []
    fields: dict[str, Any] = {
        "max_abs_err": abs_err if finite else None,
        "max_rel_err": rel_err if finite else None,
        "tolerance": tolerance,
    }
    if precision != "fp32":
        found = agreement(reference, outputs, task, generative)
        rows += [(name, "ratio", 0, 0.0, value) for name, value in found.items()]
        fields.update(found)
    return status, error, rows, fields


#: Largest error (relative to the output's largest magnitude) still counted as agreeing. Quantized
#: precisions (int8, int4) have none: their agreement is recorded, not judged here.
TOLERANCE = {"fp32": 1e-3, "fp16": 2e-2, "bf16": 5e-2}


def reference_output(flat, fwd: dict) -> Any:
    import torch

    with torch.inference_mode():
        return flat(**fwd)[0].float().numpy()


def describe_failure(exc: ExportFailed) -> str:
    return "no exporter could convert this model: " + " | ".join(exc.reasons)

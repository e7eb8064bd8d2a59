"""Quantized precisions (int8, int4): which route makes them per backend, calibration inputs, and
the quantized artifacts, cached like exports.

Routes (``--precision int8 --quant METHOD``; the first listed is the default):

- onnxruntime int8: ``dynamic`` (onnxruntime.quantization.quantize_dynamic: int8 weights,
  activations quantized per call) or ``static`` (quantize_static, QDQ, activations calibrated on
  CALIBRATION seeded inputs);
- openvino int8: ``static`` (NNCF post-training quantization of weights and activations on the
  same calibration inputs) or ``weights`` (NNCF int8 weight compression); openvino int4:
  ``weights`` (NNCF int4 symmetric weight compression, group-wise);
- pytorch int8: ``dynamic`` (torch.ao dynamic quantization of every nn.Linear; CPU only).

Anything else is ``unsupported`` with the reason. The method and the calibration go into the
scenario's options (its identity). Quantized files are cached under ``$BENCHDB_CACHE`` keyed by the
fp32 artifact they came from, the method, the calibration and the quantizing library's version.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from benchdb.backends.shared import inputs
from benchdb.errors import BenchdbError
from benchdb.harness import hardware

QUANTIZED = ("int8", "int4")
#: Calibration: this many inputs of the scenario's shape, drawn with seeds 1..N (seed 0 is the
#: measured input, so calibration never sees it).
CALIBRATION = 8

#: (backend, precision) -> methods, the default first.
ROUTES: dict[tuple[str, str], tuple[str, ...]] = {
    ("onnxruntime", "int8"): ("dynamic", "static"),
    ("openvino", "int8"): ("static", "weights"),
    ("openvino", "int4"): ("weights",),
    ("pytorch", "int8"): ("dynamic",),
}


class Unsupported(Exception):
    """No route makes this precision with this method here; the message says why."""


def method_for(backend: str, precision: str, requested: str | None) -> str:
    """The quantization method of a quantized scenario (raises Unsupported with the reason)."""
    methods = ROUTES.get((backend, precision))
    if not methods:
        others = sorted({b for b, p in ROUTES if p == precision})
        raise Unsupported(f"{backend} has no {precision} route in benchdb (available with: {', '.join(others)})")
    if requested is None:
        return methods[0]
    if requested not in methods:
        raise Unsupported(f"{backend} {precision} has no method {requested!r} (use {' or '.join(methods)})")
    return requested


def requested_methods(requested: str | None) -> list[str | None]:
    """The methods ``--quant`` names (comma-separated: one scenario per method and quantized
    precision), [None] for the backends' defaults. A value no backend knows is a bad option (exit 2),
    not an unsupported result."""
    if requested is None:
        return [None]
    known = sorted({m for methods in ROUTES.values() for m in methods})
    names = [m.strip() for m in requested.split(",") if m.strip()]
    for m in names or [requested]:
        if m not in known:
            raise BenchdbError(f"--quant {m!r} is not a quantization method; use one of {', '.join(known)}")
    return list(dict.fromkeys(names))


def check_applies(opts) -> None:
    """--quant and --sts are read by the runners that have quantization routes (ROUTES); for any other
    backend they would do nothing, so they are refused rather than ignored."""
    takers = sorted({b for b, _ in ROUTES})
    if opts.backend in takers:
        return
    for flag, value in (("--quant", opts.quantization), ("--sts", opts.sts)):
        if value:
            raise BenchdbError(f"{flag} applies to {', '.join(takers)}, not {opts.backend}")


def per_method(opts, expand) -> list:
    """``expand(opts)``'s (model, scenarios) once per requested method: float precisions once, each
    quantized precision once per method, in one plan (so one run interleaves them). Also checks the
    run's --sts file, which every ML runner's plan goes through here."""
    from dataclasses import replace

    if opts.sts:
        from benchdb.backends.shared import similarity

        similarity.load_pairs(opts.sts)  # a bad file stops the plan, before anything runs
    methods = requested_methods(opts.quantization)
    grouped: dict[str, list] = {}
    for i, method in enumerate(methods):
        for spec, scenarios in expand(replace(opts, quantization=method)):
            keep = [sc for sc in scenarios if i == 0 or sc.precision in QUANTIZED]
            grouped.setdefault(spec, []).extend(keep)
    return [(spec, scs) for spec, scs in grouped.items() if scs]


def options(backend: str, precision: str, requested: str | None) -> dict[str, Any]:
    """The identity options of a quantized scenario: its method and, where it calibrates, the
    calibration set. Empty for other precisions; a route that does not exist records the method asked
    for, so the unsupported result keeps its own identity."""
    if precision not in QUANTIZED:
        return {}
    try:
        method = method_for(backend, precision, requested)
    except Unsupported:
        return {"quantization": requested or "default"}
    out: dict[str, Any] = {"quantization": method}
    if method == "static":
        out["calibration"] = f"seeded-inputs:{CALIBRATION}"
    return out


def calibration_inputs(model, net, batch: int, seq_len: int) -> list[dict]:
    """CALIBRATION sets of forward inputs like the measured one, drawn with seeds 1..N."""
    return [inputs.make(model, net, batch, seq_len, seed=k).forward for k in range(1, CALIBRATION + 1)]


def _key(source: Path, method: str, precision: str, library: str) -> str:
    payload = json.dumps(
        {
            "source": str(source.parent.name),
            "method": method,
            "precision": precision,
            "calibration": CALIBRATION,
            "library": library,
            "version": hardware.package_version(library),
        },
        sort_keys=True,
    )
    return hashlib.sha256(payload.encode()).hexdigest()[:24]


def onnx_int8(source, method: str, calib: list[dict]):
    """The fp32 ONNX artifact ``source`` quantized to int8 by ONNX Runtime (cached)."""
    from benchdb.backends.shared import onnx_export as export

    def write(folder: Path) -> Path:
        from onnxruntime.quantization import CalibrationDataReader, QuantType, quantize_dynamic, quantize_static

        path = folder / "model.onnx"
        if method == "dynamic":
            # MatMul only: ONNX Runtime has no CPU kernel for the ConvInteger a quantized Conv becomes
            export.quiet(
                quantize_dynamic,
                str(source.path),
                str(path),
                op_types_to_quantize=["MatMul"],
                weight_type=QuantType.QInt8,
            )
        else:
            import onnx

            names = [i.name for i in onnx.load(str(source.path), load_external_data=False).graph.input]

            class Reader(CalibrationDataReader):
                def __init__(self):
                    self.items = iter([inputs.feeds(names, fwd) for fwd in calib])

                def get_next(self):
                    return next(self.items, None)

            export.quiet(quantize_static, str(source.path), str(path), Reader(), op_types_to_quantize=["MatMul"])
        return path

    key = _key(source.path, method, "int8", "onnxruntime")
    return export.cached_artifact(
        "onnx-int8", key, f"{source.route}+ort-{method}-int8", source.dynamic_batch, ".onnx", write
    )


def openvino_quantized(source, method: str, precision: str, calib: list[dict]):
    """The fp32 OpenVINO IR ``source`` quantized by NNCF (cached)."""
    from benchdb.backends.shared import onnx_export as export

    try:
        import nncf  # noqa: F401
    except ImportError:
        raise Unsupported("NNCF is not installed: pip install 'benchdb[quant]'") from None

    def write(folder: Path) -> Path:
        import nncf
        import openvino as ov

        path = folder / "model.xml"
        model = ov.Core().read_model(str(source.path))
        if method == "static":
            names = [p.get_any_name() for p in model.inputs]
            data = [inputs.feeds(names, fwd) for fwd in calib]
            out = export.quiet(
                nncf.quantize, model, nncf.Dataset(data), model_type=nncf.ModelType.TRANSFORMER, subset_size=len(data)
            )
        elif precision == "int8":
            out = export.quiet(nncf.compress_weights, model, mode=nncf.CompressWeightsMode.INT8_ASYM)
        else:
            out = export.quiet(
                nncf.compress_weights,
                model,
                mode=nncf.CompressWeightsMode.INT4_SYM,
                group_size=_group_size(model),
                ratio=1.0,
            )
        ov.save_model(out, str(path), compress_to_fp16=False)
        return path

    key = _key(source.path, method, precision, "nncf")
    return export.cached_artifact(
        f"openvino-{precision}", key, f"{source.route}+nncf-{method}-{precision}", source.dynamic_batch, ".xml", write
    )


def _group_size(model) -> int:
    """NNCF's int4 groups: 128 weights per scale, or fewer where a layer's input is narrower (tiny
    models), down to a divisor of every MatMul's input width."""
    import math

    widths = []
    for op in model.get_ordered_ops():
        if op.get_type_name() == "MatMul":
            shape = op.input(1).get_partial_shape()
            if shape.rank.is_static and shape.rank.get_length() == 2 and shape[1].is_static:
                widths.append(shape[1].get_length())
    g = 128
    for w in widths:
        g = math.gcd(g, w)
    return max(g, 1)


def torch_dynamic_int8(net):
    """``net`` with every nn.Linear quantized dynamically to int8 (torch.ao; CPU only)."""
    import warnings

    import torch

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch.ao.quantization is deprecated in favour of torchao
        return torch.ao.quantization.quantize_dynamic(net, {torch.nn.Linear}, dtype=torch.qint8)

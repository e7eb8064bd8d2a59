"""The onnxruntime backend's typed option set (part of every scenario's identity) and its own
run option, the execution providers."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from benchdb.backends.protocol import BackendOptions, Option


@dataclass(frozen=True)
class OnnxruntimeOptions(BackendOptions):
    #: Execution providers in priority order, as benchdb names them (CPU, CUDA, TensorRT, ...).
    providers: tuple[str, ...] = ("CPU",)
    #: ORT_ENABLE_ALL, ORT_ENABLE_EXTENDED, ORT_ENABLE_BASIC or ORT_DISABLE_ALL.
    graph_optimization: str = "ORT_ENABLE_ALL"
    #: int8/int4: how they were made (benchdb.backends.shared.quantize); None for float precisions.
    quantization: str | None = None
    #: The calibration set of a calibrated method (static); None otherwise.
    calibration: str | None = None

    @staticmethod
    def measured_device(options: Mapping[str, Any], requested: str) -> str:
        """A session measures the device of its first execution provider (read by ingest through
        :func:`benchdb.schema.optionsets.measured_device`)."""
        return ort_device(list(options.get("providers") or ["CPU"]), requested)


#: Run options of its own, besides the core ones (:mod:`benchdb.backends.core_options`).
OPTIONS: tuple[Option, ...] = (
    Option(
        "providers",
        "words",
        ("CPU",),
        "onnxruntime execution providers in priority order, comma-separated: CPU, CUDA, TensorRT, OpenVINO, ...",
        flag="--ep",
        key="ep",
        aliases=("providers",),
        identity=True,
    ),
)


#: The device family an ONNX Runtime execution provider runs on (None: the provider's own device
#: setting decides, as for OpenVINO's CPU/GPU/NPU).
ORT_PROVIDER_DEVICE: dict[str, str | None] = {
    "CPU": "cpu",
    "CUDA": "cuda",
    "TensorRT": "cuda",
    "ROCm": "rocm",
    "MIGraphX": "rocm",
    "DirectML": "dml",
    "CoreML": "coreml",
    "QNN": "npu",
    "OpenVINO": None,
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

"""The onnxruntime backend's typed option set (part of every scenario's identity) and its own
run option, the execution providers."""

from __future__ import annotations

from dataclasses import dataclass

from benchdb.backends.api import BackendOptions, Option


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


#: Run options of its own, besides the core ones (:mod:`benchdb.backends.options`).
OPTIONS: tuple[Option, ...] = (
    Option("providers", "words", ("CPU",), "onnxruntime execution providers in priority order, comma-separated: "
           "CPU, CUDA, TensorRT, OpenVINO, ...", flag="--ep", key="ep", aliases=("providers",), identity=True),
)

"""The openvino backend's typed option set: part of every scenario's identity."""

from __future__ import annotations

from dataclasses import dataclass

from benchdb.backends.protocol import BackendOptions


@dataclass(frozen=True)
class OpenvinoOptions(BackendOptions):
    #: The OpenVINO device the model was compiled for (CPU, GPU.0, NPU, AUTO).
    ov_device: str = "CPU"
    #: LATENCY or THROUGHPUT.
    performance_hint: str = "LATENCY"
    #: The precision asked for; the key's precision is the one the compiled model reports.
    precision_hint: str = "fp32"
    #: Asynchronous infer requests kept busy (THROUGHPUT hint: the compiled model's
    #: OPTIMAL_NUMBER_OF_INFER_REQUESTS, known once compiled); None (left out) for the LATENCY
    #: hint's single synchronous request.
    num_requests: int | None = None
    #: int8/int4: how they were made (benchdb.backends.shared.quantize); None for float precisions.
    quantization: str | None = None
    #: The calibration set of a calibrated method (static); None otherwise.
    calibration: str | None = None

"""The pytorch backend's typed option set: part of every scenario's identity."""

from __future__ import annotations

from dataclasses import dataclass

from benchdb.backends.api import BackendOptions


@dataclass(frozen=True)
class PytorchOptions(BackendOptions):
    #: torch.compile mode (default, reduce-overhead, max-autotune, ...); None when eager.
    compile_mode: str | None = None
    #: int8/int4: how they were made (benchdb.backends.shared.quantize); None for float precisions.
    quantization: str | None = None
    #: The calibration set of a calibrated method (static); None otherwise.
    calibration: str | None = None

"""The onnxruntime backend: Models exported to ONNX, run by ONNX Runtime execution providers.

This module is what the ``benchdb.backends`` entry point loads; it imports nothing heavy.
The implementation is :mod:`benchdb.backends.onnxruntime.backend`.
"""

from __future__ import annotations

from benchdb.backends.onnxruntime.options import OPTIONS, OnnxruntimeOptions
from benchdb.backends.protocol import BackendInfo

BACKEND = BackendInfo(
    "onnxruntime",
    "onnxruntime",
    "onnxruntime",
    "pip install 'benchdb[onnx]'",
    "benchdb.backends.onnxruntime.backend",
    devices=("cpu", "cuda", "rocm", "npu"),
    option_set=OnnxruntimeOptions,
    options=OPTIONS,
    modes=("opt-all", "opt-extended", "opt-basic", "opt-disabled"),
    summary="Models exported to ONNX, run by ONNX Runtime execution providers",
)

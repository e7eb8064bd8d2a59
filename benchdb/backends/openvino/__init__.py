"""The openvino backend: Models exported to ONNX, compiled by OpenVINO.

This module is what the ``benchdb.backends`` entry point loads; it imports nothing heavy.
The implementation is :mod:`benchdb.backends.openvino.backend`.
"""

from __future__ import annotations

from benchdb.backends.openvino.options import OpenvinoOptions
from benchdb.backends.protocol import BackendInfo

BACKEND = BackendInfo(
    "openvino",
    "openvino",
    "openvino",
    "pip install 'benchdb[openvino]'",
    "benchdb.backends.openvino.backend",
    devices=("cpu", "gpu", "npu"),
    modes=("latency", "throughput"),
    option_set=OpenvinoOptions,
    summary="Models exported to ONNX, compiled by OpenVINO",
)

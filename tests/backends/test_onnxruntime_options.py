"""benchdb.backends.onnxruntime.options: the device an ONNX Runtime session measures, from its
first execution provider."""

from __future__ import annotations

import pytest

from benchdb.backends.onnxruntime.options import ort_device

pytestmark = pytest.mark.core


def test_onnxruntime_device_comes_from_the_first_provider():
    assert ort_device(["CPU"]) == "cpu"
    assert ort_device(["CUDA", "CPU"]) == "cuda"
    assert ort_device(["TensorRT", "CUDA", "CPU"], "cuda:1") == "cuda:1"
    assert ort_device(["QNN", "CPU"]) == "npu"
    assert ort_device(["DirectML"]) == "dml"
    assert ort_device(["CoreML"]) == "coreml"
    assert ort_device(["OpenVINO", "CPU"], "gpu") == "gpu"

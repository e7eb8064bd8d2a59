"""benchdb.schema.optionsets: each backend's typed option set found through its entry point (the
schema imports no backend), a result's options checked field by field against it, and the options
rebuilt for contract v1 files."""

from __future__ import annotations

from dataclasses import fields

import pytest

from benchdb.backends.numpy.options import NumpyOptions
from benchdb.backends.onnxruntime.options import OnnxruntimeOptions
from benchdb.backends.openai.options import OpenaiOptions
from benchdb.backends.openvino.options import OpenvinoOptions
from benchdb.backends.ortweb.options import OrtwebOptions
from benchdb.backends.pytorch.options import PytorchOptions
from benchdb.backends.userbench.options import UserbenchOptions
from benchdb.schema import optionsets

pytestmark = pytest.mark.core


def test_each_backend_entry_point_gives_its_option_set():
    assert {
        name: optionsets.option_set(name)
        for name in ("numpy", "pytorch", "onnxruntime", "openvino", "userbench", "ort-web", "openai")
    } == {
        "numpy": NumpyOptions,
        "pytorch": PytorchOptions,
        "onnxruntime": OnnxruntimeOptions,
        "openvino": OpenvinoOptions,
        "userbench": UserbenchOptions,
        "ort-web": OrtwebOptions,
        "openai": OpenaiOptions,
    }
    assert optionsets.option_set("no-such-backend") is None
    # every set starts from the fields every backend shares
    for cls in (NumpyOptions, PytorchOptions, OpenvinoOptions, OrtwebOptions, UserbenchOptions, OpenaiOptions):
        assert [f.name for f in fields(cls)][:2] == ["threads", "co_runners"], cls


def test_options_are_checked_by_the_kind_each_field_declares():
    assert optionsets.check("numpy", {"threads": 2}) == {"threads": 2}
    ok = {"threads": 1, "providers": ["CUDA", "CPU"], "graph_optimization": "ORT_ENABLE_ALL"}
    assert optionsets.check("onnxruntime", ok) == ok
    assert optionsets.check("openai", {"threads": 1, "ignore_eos": True, "parallelism": {"tp": 8}})
    refused = [
        ("numpy", {"threads": 1, "nosuch": 1}, "nosuch: not an option of numpy (it has threads, co_runners)"),
        ("numpy", {"co_runners": 1}, "threads: must be a positive integer"),
        ("numpy", {"threads": 0}, "threads: must be a positive integer"),
        ("numpy", {"threads": True}, "threads: must be a positive integer"),
        ("onnxruntime", {"threads": 1, "providers": []}, "providers: must be a non-empty list of names"),
        ("onnxruntime", {"threads": 1, "providers": [1]}, "providers: must be a non-empty list of names"),
        ("openai", {"threads": 1, "ignore_eos": "yes"}, "ignore_eos: must be true or false, found str"),
        ("openai", {"threads": 1, "parallelism": [8]}, "parallelism: must be an object, found list"),
        ("pytorch", {"threads": 1, "compile_mode": 3}, "compile_mode: must be a string, found int"),
        ("numpy", [1], "not an object"),
    ]
    for backend, options, message in refused:
        with pytest.raises(ValueError) as err:
            optionsets.check(backend, options)
        assert str(err.value) == message, options
    # a backend not registered here may pass any JSON object
    assert optionsets.check("someone-elses", {"anything": [1, {"x": None}]}) == {"anything": [1, {"x": None}]}


def test_a_registered_set_overrides_and_measured_device_follows_the_set():
    assert optionsets.measured_device("onnxruntime", {"providers": ["CUDA", "CPU"]}, "cpu") == "cuda"
    assert optionsets.measured_device("onnxruntime", {"providers": ["CUDA"]}, "cuda:1") == "cuda:1"
    assert optionsets.measured_device("onnxruntime", {}, "cpu") == "cpu"
    assert optionsets.measured_device("numpy", {}, "cpu") == "cpu"
    optionsets.register("hand-loaded", NumpyOptions)
    try:
        assert optionsets.option_set("hand-loaded") is NumpyOptions
        with pytest.raises(ValueError, match="x: not an option of hand-loaded"):
            optionsets.check("hand-loaded", {"threads": 1, "x": 1})
    finally:
        optionsets.register("hand-loaded", None)


def test_v1_options_are_rebuilt_from_what_the_file_recorded_and_threads_never_guessed():
    pt = {"backend": "pytorch", "threads": 4, "settings": {"compile_mode": "max-autotune"}}
    assert optionsets.from_v1(pt) == {"threads": 4, "compile_mode": "max-autotune"}
    ort = {"backend": "onnxruntime", "threads": None, "settings": {"graph_optimization": "ORT_ENABLE_ALL"}}
    assert optionsets.from_v1(ort) == {"providers": ["CPU"], "graph_optimization": "ORT_ENABLE_ALL"}
    ov = {"backend": "openvino", "threads": 2, "precision": "fp16", "settings": {"ov_device": "CPU"}}
    assert optionsets.from_v1(ov) == {"threads": 2, "ov_device": "CPU", "precision_hint": "fp16"}
    assert optionsets.v1_gen_tokens(None) == optionsets.V1_GEN_TOKENS == 16
    assert optionsets.v1_gen_tokens({"runs": [{"model": "m"}, {"gen_tokens": 32}]}) == 32
    assert optionsets.v1_gen_tokens({"gen_tokens": 8, "runs": [{"gen_tokens": 32}]}) == 8


def test_env_differences_name_the_variables_not_their_values():
    assert optionsets.env_differences('{"A": "1", "B": "2"}', '{"A": "1", "B": "3", "C": null}') == {"B"}
    assert optionsets.env_differences(None, '{"A": "1"}') == {"A"}
    assert optionsets.env_differences("not json", '{"A": "1"}') == set()

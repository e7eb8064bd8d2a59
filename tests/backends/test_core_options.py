"""benchdb.backends.core_options: what is built from the run options' declarations: the arguments
that give an ``--ab`` or bisect child the same options, a config file's values checked by each
option's kind, and axis values that are no value of their axis refused before anything runs. The
real command line (click's CliRunner, and a subprocess where the folder a run would write matters)."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner
from conftest import benchdb_cmd

from benchdb.backends import core_options as options
from benchdb.cli import main
from benchdb.errors import BenchdbError
from benchdb.harness.scenario import RunOptions

pytestmark = pytest.mark.core


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def test_run_options_pass_to_a_child_in_a_form_it_reads_back():
    """--ab and bisect children get the run's options as flags: each quantity's text reads back."""
    opts = options.apply(
        RunOptions("numpy", ("matmul:8",)),
        {"target_ci": 0.07, "max_background_cpu": 37.5, "min_time": 0.05, "timeout_s": 7200.0},
    )
    args = options.child_args(opts, {})
    flags = dict(zip(args[1::2], args[2::2], strict=False))
    assert (flags["--target-ci"], flags["--max-background-cpu"], flags["--min-time"], flags["--timeout"]) == (
        "7%",
        "37.5%",
        "0.05s",
        "7200s",
    )
    for opt in options.CORE:
        if opt.kind in options.QUANTITIES:
            value = options.value_of(opts, opt)
            assert options.quantity_of(opt, options.quantity_text(opt, value)) == value, opt.name


@pytest.mark.parametrize(
    "args,line",
    [
        (
            ["--precision", "fp23"],
            "--precision 'fp23' is not a precision (did you mean 'fp32'?); use one of fp32, fp16, bf16, "
            "fp64, int8, int4",
        ),
        (
            ["--precision", "fp32,fp23"],
            "--precision 'fp23' is not a precision (did you mean 'fp32'?); use one of fp32, fp16, bf16, "
            "fp64, int8, int4",
        ),
        (["--mode", "opt-all"], "--mode 'opt-all' is not a mode of numpy; use one of eager"),
        (
            ["--device", "cdua"],
            "--device 'cdua' is not a device (did you mean 'cuda'?); use one of cpu, cuda, rocm, mps, "
            "xpu, gpu, npu, dml, auto, wasm, webgpu, webnn",
        ),
    ],
)
def test_an_unknown_axis_value_is_refused_before_anything_runs(tmp_path, args, line):
    out = tmp_path / "o"
    proc = benchdb_cmd("run", "--backend", "numpy", "--model", "matmul:8", *args, "--out", str(out))
    assert proc.returncode == 2  # before: exit 3 and an `unsupported` file
    assert proc.stderr.strip().startswith(f"benchdb: error: {line}") and len(proc.stderr.strip().splitlines()) == 1
    assert not out.exists()


def test_other_backends_modes_and_config_axes_are_refused_too(tmp_path):
    r = invoke("run", "--backend", "pytorch", "--model", "tiny:bert", "--mode", "compile:fast", "--dry-run")
    assert r.exit_code == 2
    assert (
        "--mode 'compile:fast' is not a mode of pytorch (did you mean 'compile:default'?); use one of eager, compile, "
    ) in r.output
    r = invoke("run", "--backend", "onnxruntime", "--model", "tiny:bert", "--mode", "opt-al", "--dry-run")
    assert r.exit_code == 2 and r.output.strip() == (
        "benchdb: error: --mode 'opt-al' is not a mode of onnxruntime "
        "(did you mean 'opt-all'?); use one of opt-all, opt-extended, "
        "opt-basic, opt-disabled"
    )
    path = tmp_path / "c.yaml"
    path.write_text("runs: [{backends: numpy, models: matmul:8, precisions: [fp32, fp23]}]\n")
    r = invoke("run", "--config", path, "--dry-run")
    assert r.exit_code == 2 and r.output.strip() == (
        f"benchdb: error: {path}: runs[0]: precisions 'fp23' is not a "
        "precision (did you mean 'fp32'?); use one of fp32, fp16, bf16, "
        "fp64, int8, int4"
    )
    # an unknown backend is still the first thing said
    r = invoke("run", "--backend", "nope", "--model", "x", "--precision", "fp23")
    assert r.exit_code == 2 and "unknown backend 'nope'" in r.output


def test_a_known_value_a_backend_cannot_measure_is_still_recorded_as_unsupported(tmp_path):
    out = tmp_path / "o"
    r = invoke(
        "run",
        "--backend",
        "numpy",
        "--model",
        "matmul:8",
        "--precision",
        "bf16",
        "--device",
        "cuda",
        "--no-isolation",
        "--out",
        out,
    )
    assert r.exit_code == 3, r.output  # none succeeded: each file records why
    assert "numpy runs on the CPU only" in r.output
    assert len(list(out.rglob("*.parquet"))) == 1


def test_declared_modes_are_the_ones_the_backends_take():
    """Each backend's declared --mode values (BACKEND.modes, checked before planning) are the ones
    its implementation knows."""
    from benchdb.backends import registry
    from benchdb.backends.onnxruntime import backend as ort
    from benchdb.backends.openai import backend as openai
    from benchdb.backends.openvino import backend as ov
    from benchdb.backends.ortweb import backend as ortweb

    declared = {name: info.modes for name, info in registry.backends().items()}
    assert declared["onnxruntime"] == tuple(ort.MODES)
    assert declared["openvino"] == tuple(ov.MODES)
    assert declared["openai"] == openai.ENDPOINTS
    assert declared["ort-web"] == ortweb.MODES
    assert declared["numpy"] == declared["userbench"] == ("eager",)
    from benchdb.backends.pytorch import COMPILE_MODES

    compiled = tuple(f"compile:{m}" for m in COMPILE_MODES)
    assert declared["pytorch"] == (
        "eager",
        "compile",
        *compiled,
        "kernels",
        "kernels+compile",
        *(f"kernels+{m}" for m in compiled),
    )


def test_a_config_value_is_checked_and_converted_by_its_options_kind():
    by_key = options.by_config_key()
    assert by_key["model"] is by_key["models"]  # an alias reads as its option
    where = "config key 'x'"
    assert options.config_value(by_key["batch_sizes"], 4, where) == (4,)  # an axis is a list
    assert options.config_value(by_key["min_time"], "500ms", where) == 0.5
    assert options.config_value(by_key["target_ci"], "5%", where) == 0.05
    for key, value, says in (
        ("batch_sizes", [], "give at least one value"),
        ("batch_sizes", [0], "0 is not a positive integer"),
        ("isolate", "yes", "'yes' is not true or false"),
        ("threads", True, "True is not a positive integer"),
        ("min_time", "fast", "config key 'x': "),
    ):
        with pytest.raises(BenchdbError, match="^" + re.escape(f"{where}: ")) as err:
            options.config_value(by_key[key], value, where)
        assert says in str(err.value), (key, str(err.value))


def test_reproduce_args_name_only_what_differs_from_the_defaults():
    opts = options.apply(RunOptions("numpy", ("matmul:8",), threads=2), {"min_time": 0.25, "tags": ("x",)})
    args = options.reproduce_args(opts, {})
    assert args[:1] == ["run"] and "--min-time" in args and args[args.index("--min-time") + 1] == "0.25s"
    assert "--threads" in args and args[args.index("--threads") + 1] == "2"
    assert "--tag" not in args and "--max-time" not in args  # tags left to the reader; a default left out
    assert options.identity_options(opts) == {}  # numpy declares no identity option; co_runners unset
    with pytest.raises(KeyError, match="backend numpy declares no option 'providers'"):
        options.backend_option(opts, "providers")

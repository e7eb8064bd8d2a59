"""benchdb.backends.numpy.backend: ``matmul:N`` models, the scenarios a run plans (every mode,
precision and batch size), and in-process measurement: real matrix products timed, a scenario numpy
cannot measure recorded as unsupported with why, the suite going on."""

from __future__ import annotations

from dataclasses import replace

import pytest

from benchdb.backends.numpy import backend
from benchdb.errors import BenchdbError
from benchdb.harness.scenario import RunOptions
from benchdb.harness.timing import StopRule

pytestmark = pytest.mark.core

RULE = StopRule(warmup_iters=1, warmup_s=0.0, min_iters=5, min_time_s=0.01, max_time_s=0.1, target_ci=0.5)


def test_a_model_is_matmul_of_a_size_within_bounds():
    info = backend.model_info("matmul:8")
    assert (info["num_parameters"], info["flops_per_item"], info["task"]) == (64, 2.0 * 8**3, "matmul")
    for bad in ("matmul:0", "matmul:16385", "matmul:x", "tiny:bert"):
        with pytest.raises(BenchdbError, match=f"model '{bad}' is not a numpy model; use matmul:<N> with 1 <= N"):
            backend.model_info(bad)


def test_the_plan_crosses_modes_precisions_and_batch_sizes_per_model():
    opts = RunOptions("numpy", ("matmul:8", "matmul:4"), device="CPU", precisions=("fp32", "fp64"), batch_sizes=(1, 2))
    plan = backend.plan(replace(opts, threads=3))
    assert [model for model, _ in plan] == ["matmul:8", "matmul:4"]
    scenarios = plan[0][1]
    assert [(sc.precision, sc.batch_size) for sc in scenarios] == [("fp32", 1), ("fp32", 2), ("fp64", 1), ("fp64", 2)]
    assert {(sc.backend, sc.device, sc.mode, sc.input_shape) for sc in scenarios} == {("numpy", "cpu", "eager", "n=8")}
    assert all(sc.options == {"threads": 3} for sc in scenarios)


def test_run_model_measures_what_it_can_and_records_why_not_the_rest():
    opts = RunOptions("numpy", ("matmul:8",), threads=1, precisions=("fp32", "bf16"), batch_sizes=(2,), rule=RULE)
    ((model, scenarios),) = backend.plan(opts)
    ok, bf16 = scenarios
    scenarios = [ok, bf16, replace(ok, device="cuda:0"), replace(ok, mode="compile")]
    started: list[int] = []
    outcomes = list(backend.run_model(model, scenarios, opts, on_start=started.append))
    assert started == [0, 1, 2, 3] and [o.scenario for o in outcomes] == scenarios
    assert [o.status for o in outcomes] == ["ok", "unsupported", "unsupported", "unsupported"]
    assert [o.error for o in outcomes[1:]] == [
        "numpy has no bf16 matmul; use one of fp32, fp64, fp16",
        "numpy runs on the CPU only (device 'cuda:0')",
        "numpy has no 'compile' mode; use --mode eager",
    ]
    measured = outcomes[0]
    latencies = [value for metric, _, _, _, value in measured.rows if metric == "latency_s"]
    assert len(latencies) >= RULE.min_iters and all(v > 0 for v in latencies)
    assert {metric for metric, *_ in measured.rows} == {"latency_s", "first_call_s", "load_s"}
    assert measured.timing_method == "host_clock" and measured.conditions is not None

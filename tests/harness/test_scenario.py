"""What every run shares (benchdb.harness.scenario): a scenario's key and label, an outcome's validity
and the warnings its conditions carry, the run options a resumed run reads back from its recorded
config, and one outcome merged from the processes a scenario was measured in (its steady-state window:
tests/schema/test_steady_state.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchdb.harness.scenario import Conditions, Outcome, RunOptions, Scenario, merge_repeats

pytestmark = pytest.mark.core

SC = Scenario("matmul:64", "numpy", "cpu", "eager", "int8", 2, "n=64", {"threads": 4, "quantization": "dynamic"})


def test_a_scenarios_key_and_label():
    assert SC.key() == {
        "model_id": "matmul:64",
        "backend": "numpy",
        "device": "cpu",
        "mode": "eager",
        "precision": "int8",
        "batch_size": 2,
        "input_shape": "n=64",
        "options": {"threads": 4, "quantization": "dynamic"},
    }
    assert SC.label() == "matmul:64 numpy/cpu eager int8(dynamic) bs=2 n=64 threads=4"
    assert Scenario("m", "b", "cpu", "eager", "fp32", 1, "n=1").label() == "m b/cpu eager fp32 bs=1 n=1"


def test_an_outcome_is_valid_only_when_it_ran_with_no_reason_and_warnings_never_invalidate():
    cond = Conditions(None, 50.0, 1, warnings=["busy_machine: w"])
    ok = Outcome(SC, {}, conditions=cond, extra={"warnings": ["older"]})
    assert ok.validity == "valid" and ok.extra["warnings"] == ["older", "busy_machine: w"]
    assert Outcome(SC, {}, validity_reasons=["noisy"]).validity == "invalid"
    assert Outcome(SC, {}, status="oom").validity == "invalid"


def test_a_resumed_run_reads_its_options_back_from_the_recorded_config():
    cfg = {
        "backend": "onnxruntime",
        "models": ["m1", "m2"],
        "batch_sizes": [1, 8],
        "threads": 2,
        "stop_rule": {"min_iters": 7, "target_ci": 0.05, "gone_field": 1},
        "providers": ["CPUExecutionProvider"],  # recorded by benchdb 0.2
        "backend_options": {"graph_opt": ["all", "basic"]},
        "no_longer_an_option": True,
    }
    opts = RunOptions.from_config(cfg, "out")
    assert (opts.models, opts.batch_sizes, opts.threads, opts.out) == (("m1", "m2"), (1, 8), 2, Path("out"))
    assert (opts.rule.min_iters, opts.rule.target_ci) == (7, 0.05)
    assert opts.backend_options == {"graph_opt": ("all", "basic"), "providers": ("CPUExecutionProvider",)}


def test_repeats_merge_into_one_outcome_tagged_by_process():
    a = Outcome(
        SC,
        {},
        rows=[("latency_s", "s", 0, 0.0, 1.0)],
        validity_reasons=["noisy"],
        conditions=Conditions(None, 10.0, 1),
        extra={"placement": "0", "ci_rel": 0.1},
    )
    b = Outcome(
        SC,
        {},
        status="timeout",
        error="ran past 9 s",
        rows=[("latency_s", "s", 0, 0.0, 2.0), ("latency_s", "s", 1, 0.5, 3.0)],
        validity_reasons=["noisy", "too_few_samples"],
        conditions=Conditions(None, 70.0, 1, warnings=["busy"]),
        extra={"placement": "1"},
    )
    m = merge_repeats([a, b])
    assert m.rows == [
        ("latency_s", "s", 0, 0.0, 1.0, 0),
        ("latency_s", "s", 0, 0.0, 2.0, 1),
        ("latency_s", "s", 1, 0.5, 3.0, 1),
    ]
    assert (m.status, m.error, m.validity_reasons) == (
        "timeout",
        "repeat 1: ran past 9 s",
        ["noisy", "too_few_samples"],
    )
    assert m.conditions is b.conditions  # the busiest conditions seen
    assert m.extra == {
        "ci_rel": 0.1,
        "repeat_status": ["ok", "timeout"],
        "warnings": ["busy"],
        "placements": ["0", "1"],
    }

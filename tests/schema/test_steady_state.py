"""The steady-state window (benchdb.schema.steady_state) of load points against the stub's scripted
shapes, whose truth is known: a warm-up, a drain, a drift, a level shift; real sockets and streams."""

from __future__ import annotations

import pytest
from conftest import need_module

from benchdb.harness.timing import StopRule
from benchdb.schema import steady_state

need_module("httpx", "benchdb[serving]")

from benchdb.backends.openai.loadgen import LoadSpec, run  # noqa: E402
from benchdb.testing.stub import StubConfig, StubServer  # noqa: E402

N = 128


def shaped(shape: str):
    """N requests, one at a time (each request's TPOT is the stub's ITL for it), under ``shape``."""
    rule = StopRule(warmup_iters=0, min_iters=1, min_time_s=0.0, max_time_s=60.0, max_iters=N, target_ci=1e-9)
    with StubServer(StubConfig(ttft_ms=2.0, itl_ms=3.0, shape=shape)) as stub:
        res = run(LoadSpec(base_url=stub.url, model="stub", prompts=["a b"], max_tokens=6, concurrency=1, rule=rule))
    assert len(res.measured) == N and res.errors == {}
    return res, steady_state.of_point(res.records, res.window_start)


@pytest.mark.serial  # the stub's 3 ms tokens are timed: another test beside it moves the window
def test_a_scripted_warm_up_and_drain_are_cut_to_the_request():
    res, (rows, seen) = shaped("warmup:24:3")
    sends = sorted(r.sent - res.window_start for r in res.measured)
    # it starts at the first request after the scripted warm-up, or a bucket later where the machine
    # disturbed the first bucket after it
    assert seen["found"] and seen["start_s"] in (pytest.approx(sends[24]), pytest.approx(sends[32])), seen
    assert seen["end_s"] == pytest.approx(sends[-1]) and seen["requests"] >= N - 32
    steady = [v for m, _, _, _, v in rows if m == "steady_tpot_s"]
    assert len(steady) == seen["requests"] and sum(v > 0.006 for v in steady) <= 2  # none of the 9 ms warm-up tokens
    res, (_, drained) = shaped("drain:100:2")
    sends = sorted(r.sent - res.window_start for r in res.measured)
    # the end is the scripted one; the start may drop a first bucket the machine disturbed
    assert drained["found"] and drained["end_s"] == pytest.approx(sends[99]) and drained["requests"] >= 92, drained


@pytest.mark.serial  # the stub's 3 ms tokens are timed: another test beside it moves the window
def test_a_drift_has_no_steady_state_and_says_so():
    _, (rows, seen) = shaped("drift:0.01")
    assert not seen["found"] and seen["reason"].startswith("drifting up"), seen
    assert rows == []


@pytest.mark.serial  # the stub's 3 ms tokens are timed: another test beside it moves the window
def test_a_level_shift_reports_the_first_plateau_and_flags_the_shift():
    res, (_, seen) = shaped("shift:96:1.6")
    sends = sorted(r.sent - res.window_start for r in res.measured)
    assert seen["found"] and seen["end_s"] == pytest.approx(sends[95]) and seen["requests"] >= 88, seen
    shift = seen["level_shift"]
    assert shift["change"] == pytest.approx(0.6, abs=0.15)
    assert sends[80] <= shift["at_s"] <= sends[112]  # Pettitt's change point, within two buckets


def test_too_few_requests_are_no_window_with_the_count_named():
    w = steady_state.find([0.0, 0.1, 0.2], [0.01, 0.01, 0.01], [0.1, 0.1, 0.1])
    assert not w.found and "too few requests" in w.reason and "(3;" in w.reason


def test_the_trend_tests_on_series_of_known_shape():
    flat = [1.0, 1.01, 0.99, 1.0, 1.02, 0.98, 1.0, 1.01]
    rising = [1.0 + 0.05 * i for i in range(8)]
    assert abs(steady_state.mann_kendall_z(flat)) < 1.96 and steady_state.mann_kendall_z(rising) > 1.96
    assert steady_state.admissible(flat) and not steady_state.admissible(rising)
    at, p = steady_state.pettitt([1.0] * 10 + [2.0] * 10)
    assert at == 10 and p < 0.01


def test_a_load_point_of_several_processes_is_steady_only_where_every_process_was():
    """``--repeats``: the merged result keeps each process's window; found only where all found one
    (its steady rows then pool every process's window), else the first process's reason for none."""
    from benchdb.harness.scenario import Outcome, Scenario, merge_repeats

    sc = Scenario("m", "openai", "cpu", "chat", "fp32", 2, "in=8,out=8,concurrency=2", {}, {})
    steady = {"found": True, "method": "m", "buckets": 16, "start_s": 1.0, "end_s": 4.0, "requests": 40}
    drift = {"found": False, "method": "m", "buckets": 16, "reason": "drifting up: the server slowed throughout"}
    both = merge_repeats(
        [Outcome(sc, {}, extra={"steady_state": steady}), Outcome(sc, {}, extra={"steady_state": steady})]
    )
    assert both.extra["steady_state"]["found"] is True and both.extra["steady_state"]["processes"] == [steady, steady]
    assert "start_s" not in both.extra["steady_state"]  # two processes, two clocks: no one window
    one = merge_repeats(
        [Outcome(sc, {}, extra={"steady_state": steady}), Outcome(sc, {}, extra={"steady_state": drift})]
    )
    assert one.extra["steady_state"]["found"] is False
    assert one.extra["steady_state"]["reason"] == "process 1: drifting up: the server slowed throughout"
    alone = merge_repeats([Outcome(sc, {}, extra={"steady_state": drift})])
    assert alone.extra["steady_state"] == drift

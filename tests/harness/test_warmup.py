"""Adaptive warm-up, driven by a fake clock: warm-up ends once the per-call time is
stable, never before ``warmup_iters`` calls, never after ``warmup_s``; the samples' stopping rule
is unchanged."""

import pytest
from conftest import FakeClock

from benchdb.harness.timing import STABLE_CALLS, StopRule, measure, stable


def script(first, warm, steady):
    yield first
    yield from warm
    while True:
        yield steady


RULE = dict(min_iters=10, min_time_s=0.1, max_time_s=100, warmup_stable=0.05)


def test_stable_calls_end_warm_up_early():
    c = FakeClock(script(1.0, [], 0.001))
    m = measure(c.fn, StopRule(warmup_iters=1, warmup_s=10.0, **RULE), clock=c.clock)
    assert m.warmup_iters == STABLE_CALLS  # not 10 s of warm-up
    assert m.stop_reason == "converged"


def test_warm_up_goes_on_while_the_call_time_still_falls():
    falling = [0.1 / (1 + i) for i in range(8)]  # a JIT still settling: 100 ms ... 12.5 ms
    c = FakeClock(script(1.0, falling, 0.01))
    m = measure(c.fn, StopRule(warmup_iters=1, warmup_s=10.0, **RULE), clock=c.clock)
    assert m.warmup_iters == len(falling) + STABLE_CALLS  # until three calls agree at 10 ms
    assert m.samples == pytest.approx([0.01] * len(m.samples))


def test_warm_up_stops_at_warmup_s_when_never_stable():
    jitter = [0.01, 0.03] * 1000
    c = FakeClock(script(1.0, jitter, 0.01))
    m = measure(c.fn, StopRule(warmup_iters=1, warmup_s=0.2, **RULE), clock=c.clock)
    assert m.warmup_iters == 10  # 0.2 s of 10 + 30 ms calls
    assert len(m.samples) >= 10


def test_warmup_iters_is_a_floor_even_when_stable():
    c = FakeClock(script(1.0, [], 0.001))
    m = measure(c.fn, StopRule(warmup_iters=7, warmup_s=10.0, **RULE), clock=c.clock)
    assert m.warmup_iters == 7


def test_without_warmup_stable_warm_up_lasts_warmup_s():
    c = FakeClock(script(1.0, [], 0.01))
    m = measure(
        c.fn, StopRule(warmup_iters=1, warmup_s=0.5, min_iters=10, min_time_s=0.1, max_time_s=100), clock=c.clock
    )
    assert m.warmup_iters == 50


def test_stable_needs_enough_calls_within_tolerance():
    assert not stable([0.01, 0.01], 0.05)
    assert stable([0.0100, 0.0102, 0.0099], 0.05)
    assert not stable([0.0100, 0.0120, 0.0099], 0.05)
    assert not stable([0.0, 0.0, 0.0], 0.05)

"""The timing loop's logic, driven by a fake clock (no sleeps, no real timings asserted)."""

import pytest
from conftest import FakeClock

from benchdb.harness.timing import StopRule, measure


def constant(v):
    while True:
        yield v


def test_first_call_is_its_own_metric_and_warmup_is_untimed():
    def script():
        yield 5.0  # first call: compilation
        for _ in range(3):
            yield 0.5  # warm-up
        while True:
            yield 0.01

    c = FakeClock(script())
    rule = StopRule(warmup_iters=3, warmup_s=0.0, min_iters=10, min_time_s=0.1, max_time_s=100)
    m = measure(c.fn, rule, clock=c.clock)
    assert m.first_call_s == 5.0
    assert m.warmup_iters == 3
    assert m.samples == pytest.approx([0.01] * len(m.samples))
    assert m.stop_reason == "converged"


def test_min_iters_and_min_time_both_hold_before_converging():
    c = FakeClock(constant(0.001))
    rule = StopRule(warmup_iters=0, warmup_s=0.0, min_iters=10, min_time_s=0.5, max_time_s=10)
    m = measure(c.fn, rule, clock=c.clock)
    assert m.stop_reason == "converged"
    assert len(m.samples) >= 500  # 0.5 s of 1 ms calls
    assert m.offsets[-1] + m.samples[-1] >= 0.5


def test_noisy_series_runs_to_max_time():
    import random

    rnd = random.Random(0)

    def script():
        while True:
            yield rnd.lognormvariate(-4.6, 1.5)  # median 10 ms, far too noisy for +-2 % in 3 s

    c = FakeClock(script())
    rule = StopRule(warmup_iters=0, warmup_s=0.0, min_iters=5, min_time_s=0.1, max_time_s=3.0)
    m = measure(c.fn, rule, clock=c.clock)
    assert m.stop_reason == "max_time"
    assert 2.9 <= m.offsets[-1] + m.samples[-1] <= 3.2
    assert any(r.startswith("noisy:") for r in m.validity_reasons(rule))


def test_max_iters_stops():
    c = FakeClock(constant(0.001))
    rule = StopRule(warmup_iters=0, warmup_s=0.0, min_iters=5, max_iters=7, min_time_s=100, max_time_s=200)
    m = measure(c.fn, rule, clock=c.clock)
    assert (m.stop_reason, len(m.samples)) == ("max_iters", 7)


def test_too_few_samples_are_invalid_and_ci_is_null():
    c = FakeClock(constant(1.0))
    rule = StopRule(warmup_iters=0, warmup_s=0.0, min_iters=10, min_time_s=0, max_time_s=3.5)
    m = measure(c.fn, rule, clock=c.clock)
    assert len(m.samples) == 4
    assert m.ci_low is None and m.ci_rel is None
    reasons = m.validity_reasons(rule)
    assert reasons[0] == "too_few_samples: 4 < min_iters 10"
    assert reasons[1].startswith("no_ci:")


def test_sync_runs_inside_the_timed_region():
    c = FakeClock(constant(0.001))

    def sync():
        c.t += 0.002  # the device finishes 2 ms after the host call returns

    rule = StopRule(warmup_iters=0, warmup_s=0.0, min_iters=10, min_time_s=0.01, max_time_s=1)
    m = measure(c.fn, rule, clock=c.clock, sync=sync)
    assert m.samples[0] == pytest.approx(0.003)


def test_warmup_respects_time_as_well_as_count():
    c = FakeClock(constant(0.01))
    rule = StopRule(warmup_iters=2, warmup_s=0.5, min_iters=10, min_time_s=0.1, max_time_s=10)
    m = measure(c.fn, rule, clock=c.clock)
    assert m.warmup_iters == 50


@pytest.mark.parametrize(
    "kwargs", [dict(min_iters=0), dict(target_ci=0), dict(min_time_s=5, max_time_s=1), dict(min_iters=10, max_iters=5)]
)
def test_bad_rules_are_refused(kwargs):
    with pytest.raises(ValueError):
        StopRule(**kwargs)

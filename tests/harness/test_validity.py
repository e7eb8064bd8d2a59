"""A busy machine is recorded, not fatal (benchdb.harness.validity.judge): other processes above
``max_background_cpu`` before a scenario make it invalid only when its measurement did not converge;
a converged one stays valid with a ``busy_machine`` warning in ``extra.warnings``."""

import pickle

from conftest import FakeClock

from benchdb.harness.scenario import Conditions, Outcome, Scenario
from benchdb.harness.timing import Measurement, StopRule, measure
from benchdb.harness.validity import judge

SC = Scenario("matmul:64", "numpy", "cpu", "eager", "fp32", 1, "n=64", {"threads": 1})


def steady(v):
    while True:
        yield v


def noisy(seed=0):
    import random

    rnd = random.Random(seed)
    while True:
        yield rnd.lognormvariate(-4.6, 1.5)  # median 10 ms, far too noisy for +-2 % in 3 s


RULE = StopRule(warmup_iters=0, warmup_s=0.0, min_iters=10, min_time_s=0.1, max_time_s=3.0, target_ci=0.02)


def test_converged_measurement_on_a_busy_machine_is_valid_with_a_warning():
    c = FakeClock(steady(0.001))
    m = measure(c.fn, RULE, clock=c.clock)
    assert m.stop_reason == "converged" and m.ci_rel <= RULE.target_ci
    cond = Conditions(load_avg_1m=None, background_cpu_pct=62.0, threads=1)
    reasons = judge(m, RULE, cond, max_background_cpu=30.0)
    assert reasons == []
    (warning,) = cond.warnings
    assert warning.startswith("busy_machine: other processes used 62% CPU before the scenario (limit 30%); ")
    assert "met the target +-2.0%" in warning
    out = Outcome(
        SC, {}, validity_reasons=reasons, stop_reason=m.stop_reason, conditions=cond, extra={"ci_rel": m.ci_rel}
    )
    assert out.validity == "valid"
    assert out.extra == {"ci_rel": m.ci_rel, "warnings": [warning]}
    # what crosses the pipe from an isolated child keeps it
    assert pickle.loads(pickle.dumps(out)).extra["warnings"] == [warning]


def test_measurement_that_did_not_converge_on_a_busy_machine_is_invalid():
    c = FakeClock(noisy())
    m = measure(c.fn, RULE, clock=c.clock)
    assert m.stop_reason == "max_time" and m.ci_rel > RULE.target_ci
    cond = Conditions(load_avg_1m=None, background_cpu_pct=62.0, threads=1)
    reasons = judge(m, RULE, cond, max_background_cpu=30.0)
    busy = [r for r in reasons if r.startswith("busy_machine:")]
    assert len(busy) == 1 and "(limit 30%); CI of the median +-" in busy[0]
    assert busy[0].endswith("did not converge to the target +-2.0%")
    assert cond.warnings == []
    out = Outcome(SC, {}, validity_reasons=reasons, conditions=cond)
    assert out.validity == "invalid" and "warnings" not in out.extra


def test_convergence_is_the_final_interval_not_only_the_stop_reason():
    # stopped at max_time between two convergence checks, but its final CI is within the target
    m = Measurement(
        first_call_s=0.01,
        samples=[1.0] * 20,
        offsets=list(range(20)),
        stop_reason="max_time",
        median=1.0,
        ci_low=0.99,
        ci_high=1.01,
    )
    cond = Conditions(None, 90.0, 1)
    assert judge(m, RULE, cond, 30.0) == [] and len(cond.warnings) == 1
    # a quiet machine: neither reason nor warning, whatever the interval
    quiet = Conditions(None, 12.0, 1)
    c = FakeClock(noisy(1))
    assert not any(r.startswith("busy_machine") for r in judge(measure(c.fn, RULE, clock=c.clock), RULE, quiet, 30.0))
    assert quiet.warnings == []

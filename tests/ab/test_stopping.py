"""When an adaptive A/B run may stop (benchdb/ab/stopping.py): the gate's verdict on the trials so far,
at the confidence level of the looks it may take."""

from __future__ import annotations

import random

import pytest

from benchdb.ab.process import Group, Measured
from benchdb.ab.stopping import decided
from benchdb.harness.scenario import Outcome, RunOptions, Scenario

pytestmark = pytest.mark.core


def _trials(per_process: list[list[float]], status: str = "ok") -> list[list[Measured]]:
    """One group of one scenario: a Measured per process (trial), latency samples as given."""
    sc = Scenario("m", "numpy", "cpu", "eager", "fp32", 1, "n=1", {}, {})
    return [
        [
            Measured(
                Outcome(sc, {}, status=status, rows=[("latency_s", "s", i, i * 1e-3, v) for i, v in enumerate(vals)])
            )
        ]
        for vals in per_process
    ]


def _group() -> Group:
    sc = Scenario("m", "numpy", "cpu", "eager", "fp32", 1, "n=1", {}, {})
    return Group(RunOptions("numpy", ("m",), repeats=2), "m", {}, {"base": [sc], "cand": [sc]})


def test_decided_follows_the_gate_on_the_trials_so_far():
    def procs(level: float, spread: list[float]) -> list[list[float]]:
        rng = random.Random(0)
        return [[level * f * (1 + rng.gauss(0, 0.002)) for _ in range(200)] for f in spread]

    tight = [1.0, 1.002, 0.998, 1.001]
    assert decided(_group(), _trials(procs(1.0, tight)), _trials(procs(1.0, tight)), 0.05, 1)  # unchanged
    assert decided(_group(), _trials(procs(1.0, tight)), _trials(procs(1.3, tight)), 0.05, 1)  # regressed
    flip = [1.0, 1.5, 1.0, 1.5]  # half the processes 50 % slower on both sides
    assert not decided(_group(), _trials(procs(1.0, flip)), _trials(procs(1.0, flip[::-1])), 0.05, 1)
    # a failed side: more trials would not mend it
    assert decided(_group(), _trials(procs(1.0, flip)), _trials(procs(1.0, flip), status="failed"), 0.05, 1)
    # an equivalence interval that holds at one look (90 %: [+0.5 %, +3.5 %]) is too wide at the
    # level of 20 looks (99.5 %: [-3.0 %, +6.4 %])
    near = [1.0, 1.01, 0.99, 1.005]
    base, cand = _trials(procs(1.0, near)), _trials(procs(1.02, near[::-1]))
    assert decided(_group(), base, cand, 0.05, 1) and not decided(_group(), base, cand, 0.05, 20)

"""How one bisect step's verdict is read from the gate's per-scenario ones (benchdb.bisect.steps):
any regression makes the step regressed, a scenario broken on the tested side makes it skipped, an
inconclusive one leaves it open and says why, and an unchanged step reports its largest change."""

from __future__ import annotations

import pytest

from benchdb.analysis.gate import Comparison, GateResult
from benchdb.bisect import steps

pytestmark = pytest.mark.core


def _c(model: str, verdict: str, change: float | None = None, reason: str = "") -> Comparison:
    scenario = {"model_id": model, "backend": "numpy", "device": "cpu", "batch_size": 1, "input_shape": "n=8"}
    return Comparison(scenario, verdict, reason, change=change, ci_low=change, ci_high=change)


def _step(*comparisons: Comparison) -> steps.Verdict:
    return steps.verdict(GateResult("base", "cand", "latency_s", 0.05, list(comparisons)), "ab-1")


def test_any_regression_makes_the_step_regressed_whatever_else_it_saw():
    v = _step(_c("a", "unchanged", 0.01), _c("b", "broken", reason="boom"), _c("c", "regressed", 0.2))
    assert (v.verdict, v.change, v.scenario, v.ab_id) == ("regressed", 0.2, "c numpy/cpu bs=1 n=8", "ab-1")
    assert v.note == ""


def test_a_scenario_broken_on_the_tested_side_makes_the_step_skipped_with_why():
    for broken in ("broken", "still_broken"):
        v = _step(_c("a", "inconclusive", 0.04, "wide"), _c("b", broken, reason="ImportError: x"))
        assert (v.verdict, v.change, v.scenario) == ("skipped", None, "b numpy/cpu bs=1 n=8")
        assert v.note == "its bench fails: ImportError: x"


def test_an_inconclusive_step_says_why_and_an_unchanged_one_reports_its_largest_change():
    v = _step(_c("a", "unchanged", 0.01), _c("b", "inconclusive", 0.04, "interval straddles the threshold"))
    assert (v.verdict, v.scenario, v.note) == (
        "inconclusive",
        "b numpy/cpu bs=1 n=8",
        "interval straddles the threshold",
    )
    v = _step(_c("a", "unchanged", 0.01), _c("b", "improved", -0.3, "faster"), _c("c", "unchanged", None))
    assert (v.verdict, v.change, v.scenario, v.note) == ("unchanged", -0.3, "b numpy/cpu bs=1 n=8", "improved: faster")


def test_a_commit_reads_as_its_short_sha_subject_and_day():
    c = steps.Commit("0123456789abcdef", "Make it fast", "2026-01-02T03:04:05+00:00")
    assert c.short == "0123456789" and c.line() == "0123456789 Make it fast (2026-01-02)"

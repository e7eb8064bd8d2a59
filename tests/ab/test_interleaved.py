"""Interleaved A/B trials (benchdb/ab/interleaved.py): both sides once per trial, back to back in the
scheduled order, and one run per side whose file holds every trial. The sides here are real
interpreters that cannot start (PYTHONHOME points nowhere), so each process fails at once and the test
checks the run's bookkeeping in a fraction of a second; a measured A/A run and a slower candidate are
`benchdb run --ab`'s tests (tests/cli/test_ab.py)."""

from __future__ import annotations

import random
import sys
from dataclasses import replace

import pytest

from benchdb.ab import interleaved
from benchdb.ab.plan import plan_ab, schedule
from benchdb.ab.process import SIDES, Side
from benchdb.errors import BenchdbError
from benchdb.harness.scenario import RunOptions
from benchdb.schema import contract

pytestmark = pytest.mark.core


def _opts(repeats: int) -> RunOptions:
    return RunOptions("numpy", ("matmul:8",), threads=1, repeats=repeats, isolate=False)


@pytest.fixture
def broken(tmp_path) -> dict[str, Side]:
    env = {"PYTHONHOME": str(tmp_path / "nowhere"), "AB_MARK": "x"}
    return {s: Side(s, sys.executable, env, "0.9.0", frozenset({"AB_MARK"})) for s in SIDES}


def test_each_trial_runs_both_sides_in_the_scheduled_order_and_each_side_is_one_run(tmp_path, broken):
    groups = plan_ab([_opts(2)], broken)
    seen = []

    def progress(step, name, group, measured, done, total, seconds):
        seen.append((step.trial, name, done, total, [m.outcome.status for m in measured]))

    rep = interleaved.run_ab(
        groups,
        broken,
        config={"source": "test"},
        out=tmp_path / "out",
        tags=("pr",),
        seed=3,
        progress=progress,
        ab_id="feedbeef",
        max_trials=4,
    )
    assert rep.steps == schedule([2], random.Random(3))  # a failed side decides: no trial is added
    assert [(t, n) for t, n, *_ in seen] == [(s.trial, name) for s in rep.steps for name in s.order]
    assert [(d, n, st) for _, _, d, n, st in seen] == [(i, 4, ["failed"]) for i in range(1, 5)]
    assert rep.tags == {s: f"ab-feedbeef-{s}" for s in SIDES}
    for side in SIDES:
        (path,) = rep.reports[side].files
        meta = contract.read_footer(path).metadata
        run, ab, sc = meta["run"], meta["run"]["config"]["ab"], meta["scenario"]
        assert run["tags"] == ["pr", "ab-feedbeef", f"ab-feedbeef-{side}"] and run["config"]["source"] == "test"
        assert (ab["id"], ab["side"], ab["seed"], ab["trials"], ab["max_trials"]) == ("feedbeef", side, 3, 2, 4)
        assert ab["other"]["side"] == ("cand" if side == "base" else "base")
        assert ab["order"][0]["first"] == [s.order[0] for s in rep.steps] and ab["sequence"] == [[0], [0]]
        assert ab["env"]["AB_MARK"] == "x" and "nowhere" not in ab["env"]["PYTHONHOME"]  # only public ones as given
        assert run["benchdb_version"] == "0.9.0"  # no process recorded its own
        assert (sc["status"], sc["repeats"], sc["extra"]["ab_side"]) == ("failed", 2, side)
        assert sc["error"].startswith(f"repeat 0: the {side} process exited with code 1")


def test_no_scenario_or_one_trial_is_refused_before_anything_runs(tmp_path, broken):
    with pytest.raises(BenchdbError, match="the plan has no scenarios"):
        interleaved.run_ab([], broken, config={}, out=tmp_path)
    (group,) = plan_ab([_opts(2)], broken)
    with pytest.raises(BenchdbError, match="--ab needs at least 2 trials per scenario"):
        interleaved.run_ab([replace(group, opts=_opts(1))], broken, config={}, out=tmp_path)
    assert list(tmp_path.iterdir()) == []

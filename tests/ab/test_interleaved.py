"""Interleaved A/B trials (benchdb/ab/interleaved.py) with real side processes: both sides once per
trial, back to back in the scheduled order, and one run per side whose file holds every trial."""

from __future__ import annotations

import random
import sys
from dataclasses import replace

import pyarrow.parquet as pq
import pytest

from benchdb.ab import interleaved
from benchdb.ab.plan import plan_ab, schedule
from benchdb.ab.process import SIDES, probe
from benchdb.errors import BenchdbError
from benchdb.harness.scenario import RunOptions
from benchdb.harness.timing import StopRule
from benchdb.schema import contract

pytestmark = pytest.mark.core

RULE = StopRule(warmup_iters=1, warmup_s=0.0, min_iters=5, min_time_s=0.02, max_time_s=0.2)


def _opts(repeats: int) -> RunOptions:
    return RunOptions(
        "numpy", ("matmul:8",), threads=1, rule=RULE, repeats=repeats, isolate=False, max_background_cpu=100.0
    )


@pytest.fixture(scope="module")
def sides():
    return {
        "base": probe("base", sys.executable, {}),
        "cand": probe("cand", sys.executable, {"AB_MARK": "cand", "AB_TOKEN": "s3cret"}, frozenset({"AB_MARK"})),
    }


def test_each_trial_runs_both_sides_in_the_scheduled_order_and_each_side_is_one_run(tmp_path, sides):
    groups = plan_ab([_opts(2)], sides)
    seen = []

    def progress(step, name, group, measured, done, total, seconds):
        seen.append((step.trial, name, done, total, [m.outcome.status for m in measured]))

    rep = interleaved.run_ab(
        groups,
        sides,
        config={"source": "test"},
        out=tmp_path,
        tags=("pr",),
        seed=3,
        progress=progress,
        ab_id="feedbeef",
    )
    assert rep.steps == schedule([2], random.Random(3))  # the seed fixes the order
    run_order = [(s.trial, name) for s in rep.steps for name in s.order]
    assert [(t, n) for t, n, *_ in seen] == run_order
    assert [(d, n, st) for _, _, d, n, st in seen] == [(i, 4, ["ok"]) for i in range(1, 5)]
    assert rep.tags == {s: f"ab-feedbeef-{s}" for s in SIDES}
    for side in SIDES:
        (path,) = rep.reports[side].files
        meta = contract.read_footer(path).metadata
        run, ab = meta["run"], meta["run"]["config"]["ab"]
        assert run["tags"] == ["pr", "ab-feedbeef", f"ab-feedbeef-{side}"] and run["config"]["source"] == "test"
        assert (ab["id"], ab["side"], ab["seed"], ab["trials"], ab["python"]) == (
            "feedbeef",
            side,
            3,
            2,
            sys.executable,
        )
        assert ab["other"]["side"] == ("cand" if side == "base" else "base")
        assert ab["order"][0]["first"] == [s.order[0] for s in rep.steps]
        assert ab["sequence"] == [[0], [0]]
        assert meta["scenario"]["repeats"] == 2 and meta["scenario"]["extra"]["ab_side"] == side
        assert sorted(set(pq.read_table(path, columns=["repeat"]).column("repeat").to_pylist())) == [0, 1]
    cand = contract.read_footer(rep.reports["cand"].files[0]).metadata["run"]["config"]["ab"]["env"]
    assert cand["AB_MARK"] == "cand" and cand["AB_TOKEN"] != "s3cret"  # only a public variable as given


def test_no_scenario_or_one_trial_is_refused_before_anything_runs(tmp_path, sides):
    with pytest.raises(BenchdbError, match="the plan has no scenarios"):
        interleaved.run_ab([], sides, config={}, out=tmp_path)
    (group,) = plan_ab([_opts(2)], sides)
    with pytest.raises(BenchdbError, match="--ab needs at least 2 trials per scenario"):
        interleaved.run_ab([replace(group, opts=_opts(1))], sides, config={}, out=tmp_path)
    assert list(tmp_path.iterdir()) == []

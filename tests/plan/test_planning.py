"""The scenario plan (benchdb.plan.planning) of real numpy runs: every scenario of the run entries
less the excluded ones (a rule that matches nothing reported), shards that partition the plan, and
the plan's series: their ids, the ones to skip, and how long they should take."""

from __future__ import annotations

import pytest

from benchdb.harness.scenario import RunOptions
from benchdb.harness.timing import StopRule
from benchdb.plan import planning

pytestmark = pytest.mark.core

RULE = StopRule(min_time_s=0.5)


def _runs() -> list[RunOptions]:
    return [
        RunOptions("numpy", ("matmul:16", "matmul:32"), batch_sizes=(1, 2), threads=1, rule=RULE),
        RunOptions("numpy", ("matmul:8",), threads=2, rule=RULE),
    ]


def _labels(items) -> list[str]:
    return [sc.label() for item in items for sc in item.scenarios]


def test_every_scenario_less_the_excluded_ones_and_a_rule_that_matched_nothing_is_reported():
    whole = planning.build_plan(_runs())
    assert [(i.model, len(i.scenarios)) for i in whole] == [("matmul:16", 2), ("matmul:32", 2), ("matmul:8", 1)]
    unmatched = []
    kept = planning.build_plan(
        _runs(),
        exclude=[{"model": "matmul:32"}, {"model": "matmul:16", "batch_size": 2}, {"backend": "nosuch"}],
        unmatched=unmatched.append,
    )
    assert _labels(kept) == [
        "matmul:16 numpy/cpu eager fp32 bs=1 n=16 threads=1",
        "matmul:8 numpy/cpu eager fp32 bs=1 n=8 threads=2",
    ]
    assert unmatched == [{"backend": "nosuch"}]


def test_shards_partition_the_plan_in_plan_order():
    whole = _labels(planning.build_plan(_runs()))
    shards = [_labels(planning.build_plan(_runs(), shard=(i, 2))) for i in (1, 2)]
    assert shards == [whole[0::2], whole[1::2]]
    assert [len(planning.build_plan(_runs(), shard=(i, 7))) for i in range(1, 8)] == [1] * 5 + [0] * 2


def test_series_ids_are_one_per_scenario_and_skipping_drops_those_series():
    items = planning.build_plan(_runs())
    ids = planning.series_ids(items)
    assert len(ids) == len(set(ids)) == 5
    assert set(planning.hardware_ids(items)) == {("numpy", "cpu")}
    assert planning.skip_series(items, {ids[0], ids[4]}) == 2
    assert planning.series_ids(items) == ids[1:4] and [len(i.scenarios) for i in items] == [1, 2, 0]


def test_the_estimate_takes_each_series_last_time_else_its_minimum_plus_set_up():
    items = planning.build_plan(_runs())
    ids = planning.series_ids(items)
    assert planning.estimate_seconds(items, {}) == (pytest.approx(5 * (0.5 + 1.0)), 0)
    assert planning.estimate_seconds(items, {ids[1]: 10.0, "other": 99.0}) == (pytest.approx(4 * 1.5 + 11.0), 1)

"""The statistics SQL a runner computes over its in-memory samples: the same query ingest runs, so
what a run prints is what the warehouse will hold."""

from __future__ import annotations

import pyarrow as pa
import pytest

from benchdb.harness.sample_stats import Stats

pytestmark = pytest.mark.core


@pytest.fixture(scope="module")
def stats():
    s = Stats()
    yield s
    s.close()


def test_statistics_per_scenario_and_metric(stats):
    values = [float(v) for v in range(1, 10)] + [10.0, 30.0]
    table = pa.table(
        {
            "scenario_id": ["a"] * 9 + ["b"] * 2,
            "metric": ["latency_s"] * 11,
            "unit": ["s"] * 11,
            "value": pa.array(values, type=pa.float64()),
        }
    )
    rows = {r["scenario_id"]: r for r in stats.compute(table)}
    assert sorted(rows) == ["a", "b"]
    assert rows["a"]["median"] == 5.0 and rows["a"]["n"] == 9
    assert rows["b"]["median"] == 20.0


def test_the_order_statistics_interval_holds_the_median_and_needs_enough_values(stats):
    median, low, high = stats.order_statistics_median_ci([float(v) for v in range(1, 101)])
    assert median == 50.5 and low is not None and high is not None
    assert low < median < high and high - low < 30
    assert stats.order_statistics_median_ci([1.0, 2.0])[1:] == (None, None)
    assert stats.order_statistics_median_ci([]) == (None, None, None)

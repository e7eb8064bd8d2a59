"""The report's sections over the timing results (benchdb/reports/sections.py), each built on a small
warehouse written row by row (tests/fixtures_views.py), whose traps a section must not fall into: an
invalid fastest result, a --verify-only check that is not a latency, an OOM."""

from __future__ import annotations

import pytest
from support.fixtures_views import build

from benchdb.reports import sections
from benchdb.reports.document import Filters
from benchdb.warehouse import Warehouse

pytestmark = pytest.mark.core


@pytest.fixture(scope="module")
def con(tmp_path_factory):
    path = tmp_path_factory.mktemp("sections") / "r.duckdb"
    build(path)
    with Warehouse(path).reading() as c:
        yield c


def test_the_matrix_rates_valid_results_and_never_the_invalid_fastest(con):
    s = sections.matrix(con, Filters())
    assert s.name == "compat_matrix" and set(s.keys) >= {"relative_throughput", "rating_label"}
    got = {(r["model_type"], r["hardware_id"], r["backend"]): (r["rating_label"], r["invalid"]) for r in s.rows}
    assert got[("bert", "cpuA", "openvino")] == ("unrated", 1)  # result 11: fastest, invalid
    assert got[("bert", "gpuB", "pytorch")] == ("best", 0)
    assert got[("bert", "gpuB", "onnxruntime")] == ("good", 0)  # result 10: 0.76x, never a second best
    assert got[("bert", "cpuA", "pytorch")] == ("slow", 1)
    assert got[("llama", "gpuB", "pytorch")][0] == "broken"  # the OOM: nothing ran


def test_speedup_counts_its_verdicts_and_says_why_they_are_unconfirmed(con):
    s = sections.speedup(con, Filters())
    by_id = {r["result_id"]: r for r in s.rows}
    assert by_id["3"]["speedup"] == pytest.approx(4.0) and by_id["2"]["speedup_verdict"] == "baseline"
    assert all(r["speedup_ci_label"] is None for r in s.rows)  # no interval without known noise
    assert s.notes[0] == "Of 4 results against the baseline: 0 faster, 0 slower, 0 same, 4 unconfirmed."
    assert s.notes[1].startswith("Unconfirmed: run-to-run noise is unknown for the pair")
    alone = sections.speedup(con, Filters(models=("llama",)))  # its one valid result is the baseline itself
    assert [r["speedup_verdict"] for r in alone.rows] == ["baseline"] and alone.notes == []


def test_scaling_trends_and_memory_keep_to_valid_latest_timings(con):
    scaling = {
        (r["hardware_id"], r["backend"], r["batch_size"]): r for r in sections.batch_scaling(con, Filters()).rows
    }
    assert scaling[("gpuB", "pytorch", 4)]["scaling_efficiency"] == pytest.approx(0.5)
    assert scaling[("cpuA", "pytorch", 4)]["latency_vs_smallest_batch"] == pytest.approx(2.5)
    trends = sections.trends(con, Filters())
    assert [(r["run_id"], r["result_id"]) for r in trends.rows] == [("r1", "1"), ("r2", "2")]  # r3's 9 is invalid
    one = sections.trends(con, Filters(models=("llama",)))
    assert one.rows == [] and one.empty == "No series has two valid timing results yet (1 series with one)."
    memory = {r["result_id"]: r["peak_memory_bytes"] for r in sections.memory(con, Filters()).rows}
    assert memory == {"2": 300 * 2**20, "3": 900 * 2**20, "4": 200 * 2**20}


def test_no_open_change_point_is_an_answer_that_says_how_much_was_searched(con):
    s = sections.regressions(con, Filters())
    assert s.rows == [] and s.answered
    assert s.empty == (
        "No open change points in 7 series (3 runs); 0 of them have the 6 valid runs a change point needs "
        "(3 on each side of it)."
    )
    nothing = sections.regressions(con, Filters(models=("nosuch",)))
    assert not nothing.answered and nothing.empty == "No rows for this section."


def test_speed_accuracy_needs_a_precision_beside_fp32_and_sources_count_benchdbs_own(con):
    s = sections.speed_accuracy(con, Filters())
    assert s.rows == [] and s.empty.startswith("No result that is not fp32 has an fp32 result")
    (src,) = sections.sources(con, Filters()).rows
    assert (src["source"], src["results"], src["runs"], src["round_label"]) == ("benchdb", 13, 3, "")
    assert sections.sources(con, Filters()).notes == []  # nothing published to check

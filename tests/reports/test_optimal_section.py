"""The optimal-hardware section as the report builds it (benchdb/reports/optimal.py's
``optimal_section``), on the small warehouse written row by row (tests/fixtures_views.py): the best and
its runner-up per model and batch size under the objective and budgets. The --per normalisations and
prices are tests/reports/test_optimal.py's."""

from __future__ import annotations

import pytest
from support.fixtures_views import build

from benchdb.reports.document import Filters
from benchdb.reports.optimal import OBJECTIVES, optimal_section
from benchdb.warehouse import Warehouse

pytestmark = pytest.mark.core


@pytest.fixture(scope="module")
def con(tmp_path_factory):
    path = tmp_path_factory.mktemp("optimal") / "r.duckdb"
    build(path)
    with Warehouse(path).reading() as c:
        yield c


def _best(section) -> dict[tuple, tuple]:
    return {
        (r["model_id"], r["batch_size"]): (r["best_result_id"], r["runner_up_result_id"], r["candidates"])
        for r in section.rows
    }


def test_the_best_valid_result_wins_and_the_invalid_fastest_never_does(con):
    s = optimal_section(con, Filters())
    assert (s.name, s.title) == ("optimal_hardware", "Optimal hardware by throughput")
    # result 11 is the fastest bert bs=1 but invalid; 9, the newest CPU pytorch bs=1, is invalid too
    assert _best(s) == {("bert", 1): ("3", "4", 3), ("bert", 4): ("6", "10", 3), ("llama", 1): ("8", None, 1)}
    assert s.notes[0] == "Of 2 winners with a runner-up: 0 win, 0 tie, 2 unconfirmed."
    assert [r["margin_verdict"] for r in s.rows] == ["unconfirmed", "unconfirmed", None]
    assert optimal_section(con, Filters(objective="latency")).title == "Optimal hardware by latency"
    assert "latency" in OBJECTIVES and "throughput" in OBJECTIVES


def test_a_latency_or_memory_budget_leaves_only_what_fits_it(con):
    assert _best(optimal_section(con, Filters(max_latency_ms=3))) == {("bert", 1): ("3", None, 1)}
    # only results that recorded their peak memory can be within a memory budget
    assert _best(optimal_section(con, Filters(max_memory_mb=250))) == {("bert", 1): ("4", None, 1)}
    assert _best(optimal_section(con, Filters(models=("llama",)))) == {("llama", 1): ("8", None, 1)}

"""What a report is (benchdb/reports/document.py): the user's filters as a query's parameters and as
words, and the rows of one section's query with only the parameters its SQL names."""

from __future__ import annotations

import pytest
from support.fixtures_views import build

from benchdb.reports.document import Filters, NothingToReport, generated_now, one_row, section_rows
from benchdb.warehouse import Warehouse

pytestmark = pytest.mark.core


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("document") / "r.duckdb"
    build(path)
    return path


def test_filters_are_parameters_and_words():
    assert Filters().params() == {"models": None, "hardware": None} and Filters().describe() == ""
    f = Filters(
        models=("bert", "llama"), hardware=("Test GPU",), max_latency_ms=2.5, max_memory_mb=512, max_accuracy_drop=0.015
    )
    assert f.params() == {"models": ["bert", "llama"], "hardware": ["Test GPU"]}
    assert f.describe() == (
        "models bert, llama; hardware Test GPU; latency <= 2.5 ms; memory <= 512 MiB; accuracy drop <= 1.5 %"
    )


def test_a_sections_rows_under_the_filters_with_only_the_parameters_its_sql_names(db):
    with Warehouse(db).reading() as con:
        keys, rows = section_rows(con, "scope", {**Filters().params(), "unused": 1})
        assert keys[:2] == ["results", "valid_timing"] and len(rows) == 1
        assert rows[0]["results"] == 13 and rows[0]["verification"] == 2
        only_gpu = one_row(con, "scope", Filters(hardware=("Test GPU",)).params())
        assert only_gpu["results"] == 4 and only_gpu["not_ok"] == 1  # 3, 6, 10 and the OOM of 7
        assert one_row(con, "scope", Filters(models=("nosuch",)).params())["results"] == 0


def test_nothing_to_report_exits_1_and_the_time_is_printed_in_utc():
    assert NothingToReport("x").exit_code == 1
    stamp = generated_now()
    assert stamp.endswith(" UTC") and len(stamp) == len("2026-11-01 10:00 UTC")

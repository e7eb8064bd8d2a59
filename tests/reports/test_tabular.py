"""Rows as a terminal table, CSV or JSON (benchdb/reports/tabular.py): values as stored for
`benchdb query`, and tables for people with one unit per quantity column."""

from __future__ import annotations

import json
from datetime import date, datetime
from decimal import Decimal

import pytest

from benchdb.reports.tabular import AB_SUMMARY, for_people, render, run_summary

pytestmark = pytest.mark.core

COLUMNS = ("name", "small", "big", "when", "tags")
ROWS = [
    ("a\tb\nc", 1.0596e-05, 12345678.5, datetime(2026, 11, 1, 10, 0), ["x", "y"]),
    ("d", None, 2.0, date(2026, 11, 2), []),
]


def test_a_table_aligns_numbers_right_without_exponents_and_counts_its_rows():
    lines = render(COLUMNS, ROWS).splitlines()
    assert lines[0].split() == list(COLUMNS)
    assert set(lines[1].replace(" ", "")) == {"-"}
    assert lines[2].split("  ")[0] == "a\\tb\\nc"  # control characters never break a row
    assert "0.000010596" in lines[2] and "12345678" in lines[2] and "e-" not in lines[2]
    assert "2026-11-01 10:00:00" in lines[2] and "x, y" in lines[2]
    assert lines[3].index(" 2") + 2 == lines[2].index("12345678") + len("12345678")  # right-aligned
    assert lines[-1] == "(2 rows)"
    assert render(("n",), [(1,)]).splitlines()[-1] == "(1 row)"


def test_csv_and_json_keep_the_values_as_stored():
    csv = render(COLUMNS, ROWS, "csv").splitlines()
    assert csv[0] == "name,small,big,when,tags"
    assert csv[-1] == "d,,2.0,2026-11-02,[]"
    got = json.loads(render(("n", "d", "b"), [(Decimal("1.5"), date(2026, 1, 2), b"\x01\xff")], "json"))
    assert got == [{"n": 1.5, "d": "2026-01-02", "b": "01ff"}]


def test_a_table_for_people_shows_each_quantity_in_one_unit():
    rows = [
        {"scenario": "a", "status": "valid", "median_ms": 0.5, "p90_ms": 0.75, "items_per_s": 2000.0, "n": 10},
        {"scenario": "b", "status": "invalid", "median_ms": 1.25, "p90_ms": None, "items_per_s": 800.0, "n": 5},
    ]
    lines = run_summary(rows).splitlines()
    assert lines[0].split() == ["scenario", "status", "median", "p90", "items/s", "n", "note"]
    assert lines[2].split() == ["a", "valid", "0.500", "ms", "750.0", "µs", "2,000.0", "10"]  # a summary's ms
    assert lines[3].split() == ["b", "invalid", "1.250", "ms", "800.0", "5"]  # one unit per column, right-aligned
    assert lines[3].index("ms") == lines[2].index("ms") and lines[-1] == "(2 rows)"
    ab = for_people(AB_SUMMARY, [{"scenario": "s", "base": "ok", "base_median": 1.0, "cand": "ok", "ratio": "1.02x"}])
    assert ab.splitlines()[2].split() == ["s", "ok", "1.000", "ms", "ok", "1.02x"]

"""The library facade (benchdb.warehouse.Warehouse) on a real warehouse file: ingest through a writer,
an analyst's SQL read-only with one-line errors, the series measured since a time and how long each
took, and reading connections that cannot write."""

from __future__ import annotations

from datetime import datetime

import numpy as np
import pytest
from conftest import make_meta, make_run, write_file

from benchdb.errors import BenchdbError
from benchdb.warehouse import Warehouse

pytestmark = pytest.mark.core


@pytest.fixture(scope="module")
def wh(tmp_path_factory):
    """Two runs a day apart: matmul:64 at batch 1 and 2 in the first, batch 1 again in the second."""
    tmp = tmp_path_factory.mktemp("wh")
    old, new = make_run(started_at="2026-11-01T10:00:00+00:00"), make_run(started_at="2026-11-02T10:00:00+00:00")
    for run, bs in ((old, 1), (old, 2), (new, 1)):
        write_file(tmp / "res" / run["run_id"], make_meta(run, batch_size=bs), np.full(40, 2e-3 * bs))
    w = Warehouse(tmp / "w.duckdb")
    summary = w.ingest([tmp / "res"])
    assert (summary.new, summary.rejected) == (3, [])
    return w


def test_an_analysts_sql_reads_and_anything_else_is_one_line(wh):
    cols, rows = wh.query("SELECT batch_size, count(*) AS n FROM results GROUP BY ALL ORDER BY 1")
    assert (cols, rows) == (["batch_size", "n"], [(1, 2), (2, 1)])
    with pytest.raises(BenchdbError, match=r"^benchdb query is read-only"):
        wh.query("DELETE FROM results")
    with pytest.raises(BenchdbError, match=r"^query failed: .*no_such_table") as err:
        wh.query("SELECT * FROM no_such_table")
    assert "\n" not in str(err.value)


def test_fresh_series_and_how_long_each_took(wh):
    with wh.reading() as con:
        series = dict(con.execute("SELECT batch_size, any_value(series_id) FROM results GROUP BY 1").fetchall())
    assert wh.fresh_series(datetime(2026, 11, 2)) == {series[1]}
    assert wh.fresh_series(datetime(2026, 10, 1)) == {series[1], series[2]}
    took = wh.measured_seconds()
    assert took == {series[1]: pytest.approx(40 * 2e-3), series[2]: pytest.approx(40 * 4e-3)}


def test_a_reading_connection_cannot_write(wh):
    with wh.reading() as con, pytest.raises(Exception, match="read-only"):
        con.execute("CREATE TABLE t (a INTEGER)")
    assert repr(wh).startswith("Warehouse(") and str(wh.path) in repr(wh)

"""The newest published snapshot for a long-lived reader (`benchdb serve`): a reading that begins after
a write sees it, while a reading begun before keeps its own snapshot, whole, across compactions.
Real DuckDB files and Parquet; the writers are the real command line in processes of their own."""

from __future__ import annotations

import sys

import pytest
from conftest import benchdb_cmd, make_run, write_suite

from benchdb.errors import BenchdbError
from benchdb.store.latest import Latest

pytestmark = pytest.mark.core
needs_leases = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="leases ask Linux's OFD locks")


def _ingest(db, folder) -> None:
    write_suite(folder, n_files=2, n_values=200, run=make_run())
    benchdb_cmd("ingest", str(folder), "--db", str(db), check=True)


def _counts(con) -> tuple[int, int]:
    return con.execute("SELECT (SELECT count(*) FROM runs), (SELECT count(*) FROM samples)").fetchall()[0]


@needs_leases
def test_a_reading_sees_the_write_before_it_while_an_older_reading_keeps_its_snapshot(tmp_path):
    db = tmp_path / "w.duckdb"
    _ingest(db, tmp_path / "in0")
    latest = Latest(db)
    try:
        with latest.reading() as old:
            assert _counts(old) == (1, 400)
            _ingest(db, tmp_path / "in1")
            with latest.reading() as new:  # the old snapshot is still being read
                assert _counts(new) == (2, 800)
            for _ in range(3):
                benchdb_cmd("db", "compact", "--db", str(db), check=True)
            assert _counts(old) == (1, 400)
        with latest.reading() as again:
            assert _counts(again) == (2, 800)
    finally:
        latest.close()


def test_a_missing_warehouse_is_one_line(tmp_path):
    with pytest.raises(BenchdbError, match=r"^database .*nope\.duckdb does not exist; create it with"):
        with Latest(tmp_path / "nope.duckdb").reading():
            pass

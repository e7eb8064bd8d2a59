"""The newest published snapshot for a long-lived reader (`benchdb dashboard`): a reading that begins after
a write sees it, while a reading begun before keeps its own snapshot, whole, across compactions.
Real DuckDB files and Parquet; the writers are the real command line in processes of their own."""

from __future__ import annotations

import pytest
from conftest import benchdb_cmd, make_run, only_on_linux, write_suite

from benchdb.errors import BenchdbError
from benchdb.store.latest import Latest

pytestmark = pytest.mark.core
needs_leases = only_on_linux("leases ask Linux's OFD locks")


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


@needs_leases
def test_a_warehouse_whose_path_has_a_quote_is_read(tmp_path):
    """The snapshot is attached by its path written as an SQL literal: a quote in a folder name is data."""
    db = tmp_path / "it's here" / "w.duckdb"
    db.parent.mkdir()
    _ingest(db, tmp_path / "in0")
    latest = Latest(db)
    try:
        with latest.reading() as con:
            assert _counts(con) == (1, 400)
    finally:
        latest.close()


def test_a_missing_warehouse_is_one_line(tmp_path):
    with pytest.raises(BenchdbError, match=r"^database .*nope\.duckdb does not exist; create it with"):
        with Latest(tmp_path / "nope.duckdb").reading():
            pass


def test_an_answer_is_kept_with_its_snapshot_until_a_write_publishes(tmp_path, monkeypatch):
    """The same key asked of the same snapshot: its bytes again, nothing run; after an ingest, computed
    anew; an exception is raised each time, never kept; BENCHDB_NO_CACHE=1 computes every time."""
    db = tmp_path / "w.duckdb"
    _ingest(db, tmp_path / "in0")
    latest = Latest(db)
    ran: list[str] = []

    def runs(con) -> bytes:
        ran.append("runs")
        return str(_counts(con)).encode()

    def broken(con) -> bytes:
        ran.append("broken")
        con.execute("SELECT * FROM no_such_table")
        return b""

    try:
        assert latest.answer("runs", runs) == latest.answer("runs", runs) == b"(1, 400)"
        assert ran == ["runs"]
        for _ in range(2):
            with pytest.raises(Exception, match="no_such_table"):
                latest.answer("broken", broken)
        assert ran == ["runs", "broken", "broken"]
        _ingest(db, tmp_path / "in1")
        assert latest.answer("runs", runs) == b"(2, 800)" and ran[-1] == "runs"
        monkeypatch.setenv("BENCHDB_NO_CACHE", "1")
        latest.answer("runs", runs)
        latest.answer("runs", runs)
        assert ran.count("runs") == 4
    finally:
        latest.close()

"""Opening the warehouse file (benchdb.store.database): a file that is not a warehouse, or one that
does not exist, is refused in one line naming what to do; a new warehouse starts as a copy of the blank
catalog this code version caches, the same as one whose migrations run in place. Real DuckDB files."""

from __future__ import annotations

import re

import duckdb
import pytest

from benchdb.errors import BenchdbError
from benchdb.store import database

pytestmark = pytest.mark.core


def test_not_a_database_file(tmp_path):
    bogus = tmp_path / "notes.duckdb"
    bogus.write_text("hello, I am a text file\n" * 100)
    with pytest.raises(
        BenchdbError, match=r"^cannot open database .*notes.duckdb: .*check that it is a benchdb DuckDB file"
    ):
        database.open_writable(bogus)


def test_missing_database_read_only(tmp_path):
    with pytest.raises(BenchdbError, match=r"does not exist; create it with `benchdb ingest"):
        database.open_readonly(tmp_path / "none.duckdb")


def _catalog_of(path):
    from benchdb.store import catalog

    con = duckdb.connect(str(path), read_only=True)
    try:

        def rows(query):
            return con.execute(query).fetchall()

        return (
            catalog.current(con),
            rows("SELECT version, name FROM schema_version ORDER BY version"),
            rows("SELECT key, value FROM benchdb_meta WHERE key <> 'samples_folder' ORDER BY key"),
            rows("SELECT min(applied_at) FROM schema_version")[0][0],
        )
    finally:
        con.close()


def test_a_new_warehouse_from_the_cached_blank_is_the_one_built_in_place(tmp_path, monkeypatch):
    """A new warehouse starts as a copy of a blank catalog cached per code version: the same tables,
    views, macros, migrations and bookkeeping as one whose migrations run in place (no cache), its
    migrations dated when it was made; and the blank is what the next new warehouse copies."""
    import datetime

    from benchdb.store import snapshot

    monkeypatch.setenv("BENCHDB_ANSWERS_DIR", str(tmp_path / "cache"))
    (tmp_path / "cache").mkdir(mode=0o700)
    for name in ("first", "second"):
        with snapshot.write_session(tmp_path / f"{name}.duckdb"):
            pass
    monkeypatch.setenv("BENCHDB_NO_CACHE", "1")
    with snapshot.write_session(tmp_path / "in_place.duckdb"):
        pass
    assert len(list((tmp_path / "cache").glob("blank-*.duckdb"))) == 1
    first, second, in_place = (_catalog_of(tmp_path / f"{n}.duckdb") for n in ("first", "second", "in_place"))
    assert first[:3] == second[:3] == in_place[:3]
    made = second[3].replace(tzinfo=datetime.timezone.utc) if second[3].tzinfo is None else second[3]
    assert abs(datetime.datetime.now(datetime.timezone.utc) - made).total_seconds() < 120
    assert second[3] >= first[3]


def test_a_read_connection_skips_the_row_groups_of_results_it_does_not_ask_for(tmp_path):
    """The gate asks for hundreds of results at a time: DuckDB makes the ids a join asks for a filter
    on the samples scan (which skips other results' row groups) only up to
    ``dynamic_or_filter_threshold`` values, 50 by default; a read connection raises it."""
    from conftest import make_meta, make_run, write_file

    from benchdb import sql
    from benchdb.warehouse import Warehouse

    run, res, db = make_run(), tmp_path / "res", tmp_path / "w.duckdb"
    for bs in range(1, 61):
        write_file(res, make_meta(run, batch_size=bs), values=[1e-3] * 5)
    Warehouse(db).ingest([res])
    con, _ = database.open_readonly(db)
    try:
        assert con.execute("SELECT current_setting('dynamic_or_filter_threshold')").fetchall() == [
            (database.JOIN_FILTER_VALUES,)
        ]
        ids = [r for (r,) in con.execute("SELECT result_id FROM results ORDER BY result_id").fetchall()]
        if int(duckdb.__version__.split(".")[0]) < 2:
            pytest.skip(f"DuckDB {duckdb.__version__}'s EXPLAIN ANALYZE does not list a scan's dynamic filters")
        query = sql.load("queries/samples_for.sql")
        plan = con.execute(f"EXPLAIN ANALYZE {query}", {"ids": ids, "metric": "latency_s"}).fetchall()[0][1]
        pushed = re.sub(r"[\s│]+", " ", plan[plan.index("Dynamic Filters") :])
        # the ids themselves, checked against each row group's range; past the default's 50 values the
        # scan gets a probe of the join's hash table instead (printed as PRF): 2.3-2.8x slower at 1B
        assert re.search(r"optional: \(result_id IN \('[0-9a-f]{32}'", pushed), pushed[:300]
    finally:
        con.close()
    second, _ = database.open_readonly(db)  # the process's configuration is locked by now: still opens
    second.close()

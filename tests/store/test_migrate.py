import duckdb
import pytest

from benchdb.errors import BenchdbError
from benchdb.store import database, migrate
from benchdb.store.database import Migration

pytestmark = pytest.mark.core


def test_migrations_from_empty_database(db_path):
    con, _ = database.open_writable(db_path)
    try:
        assert database.schema_version(con) == database.code_schema_version() == len(database.migrations())
        tables = {r[0] for r in con.execute("select table_name from information_schema.tables").fetchall()}
        assert {
            "schema_version",
            "ingested_files",
            "hardware",
            "architectures",
            "runs",
            "results",
            "result_metrics",
            "samples",
            "results_latest",
        } <= tables
        rows = con.execute("select version, name from schema_version").fetchall()
        assert rows[:5] == [(1, "init"), (2, "change_points"), (3, "identity"), (4, "file_ids"), (5, "repeats")]
        assert rows == [(m.version, m.name) for m in database.migrations()]
        assert {"options", "options_id", "series_id"} <= {
            r[0]
            for r in con.execute(
                "select column_name from information_schema.columns where table_name = 'results'"
            ).fetchall()
        }
    finally:
        con.close()


def test_plain_duckdb_reads_views_read_only(db_path):
    database.open_writable(db_path)[0].close()
    con = duckdb.connect(str(db_path), read_only=True)
    assert con.execute("select count(*) from results_latest").fetchall() == [(0,)]
    # the statistics macros are stored in the file for analysts
    assert con.execute("select bdb_pct_min_n(0.99)").fetchall() == [(100,)]
    con.close()


def test_newer_database_is_refused(db_path):
    con, _ = database.open_writable(db_path)
    future = database.code_schema_version() + 1
    con.execute("insert into schema_version values ($v, 'future', now()::timestamp, '9.9')", {"v": future})
    con.close()
    for opener in (database.open_writable, database.open_readonly):
        with pytest.raises(BenchdbError) as err:
            opener(db_path)
        assert str(err.value) == (
            f"database {db_path} has schema version {future}, but this benchdb (0.2.0) "
            f"supports up to {database.code_schema_version()}; upgrade benchdb to use it"
        )


def test_older_database_needs_explicit_upgrade(db_path):
    base = database.migrations()
    con = duckdb.connect(str(db_path))  # a version-1 warehouse (views are the code's)
    con.execute(migrate._bootstrap_sql())
    migrate._apply(con, base[:1])
    con.close()
    with pytest.raises(
        BenchdbError, match=rf"has schema version 1, this benchdb uses {len(base)}; run `benchdb db upgrade"
    ):
        database.open_writable(db_path)
    con = duckdb.connect(str(db_path))
    applied = database.upgrade(con, db_path)
    assert [m.version for m in applied] == list(range(2, len(base) + 1))
    assert database.schema_version(con) == len(base)
    assert con.execute("select count(*) from change_points").fetchall() == [(0,)]
    con.close()
    newer = base + [Migration(len(base) + 1, "add_notes", "CREATE TABLE notes (note VARCHAR);")]
    con = duckdb.connect(str(db_path))
    assert [m.version for m in database.upgrade(con, db_path, available=newer)] == [len(base) + 1]
    assert con.execute("select count(*) from notes").fetchall() == [(0,)]
    con.close()


def test_failed_migration_rolls_back_whole(db_path):
    base = database.migrations()
    database.open_writable(db_path, available=base)[0].close()
    broken = base + [Migration(len(base) + 1, "broken", "CREATE TABLE half (x INT); SELECT * FROM no_such_table;")]
    con = duckdb.connect(str(db_path))
    with pytest.raises(duckdb.Error):
        database.upgrade(con, db_path, available=broken)
    assert database.schema_version(con) == len(base)
    assert con.execute("select count(*) from information_schema.tables where table_name='half'").fetchall() == [(0,)]
    con.close()


def test_db_path_resolution(monkeypatch, tmp_path):
    monkeypatch.delenv("BENCHDB_DB", raising=False)
    assert str(database.resolve_db(None)) == "benchdb.duckdb"
    monkeypatch.setenv("BENCHDB_DB", str(tmp_path / "env.duckdb"))
    assert database.resolve_db(None) == tmp_path / "env.duckdb"
    assert str(database.resolve_db("x.duckdb")) == "x.duckdb"

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


def test_db_path_resolution(monkeypatch, tmp_path):
    monkeypatch.delenv("BENCHDB_DB", raising=False)
    assert str(database.resolve_db(None)) == "benchdb.duckdb"
    monkeypatch.setenv("BENCHDB_DB", str(tmp_path / "env.duckdb"))
    assert database.resolve_db(None) == tmp_path / "env.duckdb"
    assert str(database.resolve_db("x.duckdb")) == "x.duckdb"


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

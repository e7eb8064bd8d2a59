"""`benchdb query` only reads: every way found to make DuckDB write through it (PREPARE/
EXECUTE, COPY in a WITH clause, in a `;`-chained text, under EXPLAIN ANALYZE or a PIVOT, EXPORT,
macros and temporary tables, table functions with side effects, pragmas, SET/RESET of the
settings that would reopen access, ATTACH, INSTALL/LOAD, COPY FROM DATABASE) is refused in one
line, and the samples' parts, the catalog and the folder around them stay byte for byte as they
were. A real warehouse of two ingests (two generations of parts), the real CLI."""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner
from conftest import benchdb_cmd, make_run, write_suite

from benchdb.cli import main
from benchdb.errors import BenchdbError
from benchdb.store import database

pytestmark = pytest.mark.core

READ_ONLY = "benchdb: error: benchdb query is read-only and reads only the warehouse: "
#: Stand-ins the attacks name, filled in with the warehouse's real paths.
GEN, PART, DB, SCRATCH = "{gen}", "{part}", "{db}", "{scratch}"
_PARTITIONED = f"TO '{GEN}' (FORMAT csv, PARTITION_BY (x), OVERWRITE true)"

#: (name, SQL): each would delete, rewrite or add files (most of them in the samples folder), change
#: the connection's sandbox, or change the catalog's state, were it run.
ATTACKS = [
    # the first way found to write through `query`: a PREPAREd COPY replaces generation 2 by a CSV (its part is deleted)
    ("prepare-execute-copy", f"PREPARE p AS COPY (SELECT 1 AS x, 2 AS y) {_PARTITIONED}; EXECUTE p"),
    (
        "prepare-execute-rewrite-values",
        f"PREPARE p AS COPY (SELECT * REPLACE (value * 1000 AS value) FROM read_parquet('{PART}')) TO '{PART}' "
        "(FORMAT parquet); EXECUTE p",
    ),
    (
        "prepare-with-copy",
        f"PREPARE p AS WITH d AS (COPY (SELECT 1 AS x, 2 AS y) {_PARTITIONED}) SELECT * FROM d; EXECUTE p",
    ),
    ("copy-in-with", f"WITH d AS (COPY (SELECT 1 AS x, 2 AS y) {_PARTITIONED}) SELECT * FROM d"),
    (
        "copy-in-materialized-with",
        f"WITH d AS MATERIALIZED (COPY (SELECT 1 AS x, 2 AS y) TO '{GEN}/m.csv') SELECT * FROM d",
    ),
    ("copy-in-nested-with", f"SELECT * FROM (WITH d AS (COPY (SELECT 1 AS x) TO '{GEN}/n.csv') SELECT * FROM d)"),
    ("copy-after-select", f"SELECT 1; COPY (SELECT 1 AS x, 2 AS y) {_PARTITIONED}"),
    ("copy-before-select", f"COPY (SELECT 1 AS x, 2 AS y) {_PARTITIONED}; SELECT 1"),
    ("copy-with-comment-first", f"/* a read */ COPY results TO '{GEN}/c.csv'"),
    ("copy-of-a-pivot", f"COPY (PIVOT results ON backend USING count(*)) TO '{GEN}/p.csv'"),
    ("explain-analyze-copy", f"EXPLAIN ANALYZE COPY (SELECT 1 AS x, 2 AS y) {_PARTITIONED}"),
    ("explain-options-analyze-copy", f"EXPLAIN (ANALYZE, FORMAT json) COPY results TO '{GEN}/e.csv'"),
    ("explain-analyze-with-copy", f"EXPLAIN ANALYZE WITH d AS (COPY (SELECT 1 AS x) TO '{GEN}/w.csv') SELECT * FROM d"),
    ("export-database", f"EXPORT DATABASE '{GEN}/exported'"),
    ("copy-from-database", "COPY FROM DATABASE w TO memory"),
    ("import-database", f"IMPORT DATABASE '{SCRATCH}'"),
    ("create-macro", "CREATE MACRO twice(x) AS x * 2"),
    ("create-temp-macro", "CREATE TEMP MACRO twice(x) AS x * 2"),
    ("create-temp-table", "CREATE TEMP TABLE t AS SELECT * FROM results"),
    ("create-table-as-pivot", "CREATE TEMP TABLE t AS PIVOT results ON backend USING count(*)"),
    ("delete-in-with", "WITH d AS (DELETE FROM results RETURNING *) SELECT count(*) FROM d"),
    ("delete", "DELETE FROM results"),
    ("checkpoint", "CHECKPOINT"),
    ("force-checkpoint", "FORCE CHECKPOINT"),
    ("checkpoint-table-function", "SELECT * FROM checkpoint()"),
    ("call-checkpoint", "CALL checkpoint()"),
    ("enable-logging-to-a-file", f"CALL enable_logging(storage = 'file', storage_path = '{GEN}/log')"),
    ("enable-logging-in-select", f"SELECT * FROM enable_logging(storage = 'file', storage_path = '{GEN}/log')"),
    ("sql-from-a-string", "SELECT * FROM query('SELECT 1')"),
    ("pragma-profiling", "PRAGMA enable_profiling"),
    ("pragma-profile-output", f"PRAGMA profile_output = '{GEN}/profile.txt'"),
    ("set-profile-output", f"SET profile_output = '{GEN}/profile.txt'"),
    ("set-external-access", "SET enable_external_access = true"),
    ("set-allowed-directories", "SET allowed_directories = ['/']"),
    ("set-allowed-paths", f"SET allowed_paths = ['{SCRATCH}/x.csv']"),
    ("reset-external-access", "RESET enable_external_access"),
    ("set-lock", "SET lock_configuration = false"),
    ("reset-lock", "RESET lock_configuration"),
    ("set-samples-variable", f"SET VARIABLE benchdb_samples = '{SCRATCH}'"),
    ("attach", f"ATTACH '{GEN}/other.duckdb' AS other"),
    ("attach-the-warehouse-writable", f"ATTACH '{DB}' AS again (READ_WRITE)"),
    ("install", "INSTALL httpfs"),
    ("force-install", "FORCE INSTALL httpfs"),
    ("load", "LOAD httpfs"),
    ("update-extensions", "UPDATE EXTENSIONS"),
    ("execute-unprepared", "EXECUTE p"),
    ("begin", "BEGIN TRANSACTION"),
    ("vacuum", "VACUUM"),
]


#: click < 8.2 mixes stderr into output unless told not to (the floors run click 8.1)


def cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


#: Attacks through a table function older DuckDB versions do not have.
NEEDS = {"enable-logging-to-a-file": "enable_logging", "enable-logging-in-select": "enable_logging"}


def _duckdb_knows(name: str, text: str) -> bool:
    """Whether this DuckDB parses ``text`` and has the function the attack calls."""
    con = duckdb.connect()
    try:
        con.extract_statements(text)
        return name not in NEEDS or bool(
            con.execute("SELECT count(*) FROM duckdb_functions() WHERE function_name = $1", [NEEDS[name]]).fetchall()[
                0
            ][0]
        )
    except duckdb.Error:
        return False
    finally:
        con.close()


#: DuckDB 1.3 on keeps a PIVOT with no IN list one statement (MULTI); before, its parts keep no
#: text, and an EXPLAIN or PREPARE of one cannot be checked (so it is refused).
PIVOT_IS_ONE = [
    s.type.name for s in duckdb.connect().extract_statements("PIVOT (SELECT 1 AS a) ON a USING count(*)")
] == ["MULTI"]


@pytest.fixture(scope="module")
def pristine(tmp_path_factory) -> tuple[Path, Path]:
    """A warehouse of two ingests (parts in generations 1 and 2), and a copy of its folder to
    restore it from: each test gets it back at the same path (the catalog records where its
    samples are)."""
    root = tmp_path_factory.mktemp("readonly")
    live = root / "live"
    live.mkdir()
    for batch, started in (("a", "2026-11-01T10:00:00+00:00"), ("b", "2026-11-02T10:00:00+00:00")):
        results = root / "results" / batch
        results.mkdir(parents=True)
        write_suite(results, n_files=2, run=make_run(started_at=started))
        r = cli("ingest", results, "--db", live / "w.duckdb")
        assert r.exit_code == 0, r.output
    saved = root / "saved"
    shutil.copytree(live, saved)
    return live, saved


@pytest.fixture
def warehouse(pristine) -> Path:
    live, saved = pristine
    shutil.rmtree(live)
    shutil.copytree(saved, live)
    db = live / "w.duckdb"
    assert len(_parts(db)) == 2
    return db


def _parts(db: Path) -> list[Path]:
    return sorted(Path(f"{db}.samples").glob("gen=*/*.parquet"))


def _state(db: Path) -> dict[str, bytes | None]:
    """Every file and folder in and beside the warehouse, with its bytes (a folder: None)."""
    return {
        str(p.relative_to(db.parent)): (p.read_bytes() if p.is_file() else None) for p in sorted(db.parent.rglob("*"))
    }


def _samples(db: Path) -> list:
    """Every sample the warehouse answers with, in a fixed order."""
    con = duckdb.connect(str(db), read_only=True)  # the analysts' one line
    try:
        return con.execute("SELECT * FROM samples ORDER BY ALL").fetchall()
    finally:
        con.close()


def _fill(text: str, db: Path, scratch: Path) -> str:
    gen = _parts(db)[-1].parent
    return (
        text.replace(GEN, str(gen))
        .replace(PART, str(_parts(db)[0]))
        .replace(DB, str(db))
        .replace(SCRATCH, str(scratch))
    )


@pytest.mark.parametrize("name, text", ATTACKS, ids=[a[0] for a in ATTACKS])
def test_a_statement_that_could_write_is_refused_in_one_line_and_changes_no_file(warehouse, tmp_path, name, text):
    db, scratch = warehouse, tmp_path / "scratch"
    scratch.mkdir()
    before, samples = _state(db), _samples(db)
    r = cli("query", _fill(text, db, scratch), "--db", db)
    assert _state(db) == before
    assert list(scratch.iterdir()) == []
    assert _samples(db) == samples
    lines = r.stderr.strip().splitlines()
    assert r.exit_code == 2, r.output
    # what this DuckDB cannot parse (a WITH holding COPY before 1.3) or has no function for never runs
    prefix = READ_ONLY if _duckdb_knows(name, text) else "benchdb: error: query failed: "
    assert len(lines) == 1 and lines[0].startswith(prefix), r.stderr
    assert "Traceback" not in r.output and r.stdout == ""


def test_the_command_line_refuses_a_prepared_copy_in_one_line(warehouse):
    """The PREPAREd COPY (the first entry of ATTACKS) through a real `benchdb query` process: exit 2,
    one line, no part lost."""
    before, gen = _state(warehouse), _parts(warehouse)[-1].parent
    proc = benchdb_cmd(
        "query",
        f"PREPARE p AS COPY (SELECT 1 AS x, 2 AS y) TO '{gen}' "
        "(FORMAT csv, PARTITION_BY (x), OVERWRITE true); EXECUTE p",
        "--db",
        str(warehouse),
    )
    assert proc.returncode == 2, proc.stdout
    assert proc.stderr.startswith(READ_ONLY + '"COPY" is not a read statement') and proc.stderr.count("\n") == 1
    assert _state(warehouse) == before


READS = [
    ("select", "SELECT count(*) AS n FROM samples", ["n", "200"]),
    ("with", "WITH s AS (SELECT batch_size FROM results) SELECT max(batch_size) AS m FROM s", ["m", "2"]),
    ("from-first", "FROM results SELECT count(*) AS n", ["n", "4"]),
    ("pivot", "PIVOT results ON backend USING count(*) GROUP BY mode", ["mode,numpy", "eager,4"]),
    (
        "pivot-in-a-select",
        "SELECT * FROM (PIVOT results ON backend USING count(*) GROUP BY mode)",
        ["mode,numpy", "eager,4"],
    ),
    ("pivot-with-in", "PIVOT results ON backend IN ('numpy') USING count(*) GROUP BY mode", ["mode,numpy", "eager,4"]),
    ("unpivot", "UNPIVOT (SELECT 1 AS a, 2 AS b) ON a, b INTO NAME k VALUE v ORDER BY k", ["k,v", "a,1", "b,2"]),
    ("summarize", "SELECT column_name FROM (SUMMARIZE SELECT batch_size FROM results)", ["column_name", "batch_size"]),
    (
        "describe",
        "SELECT column_name FROM (DESCRIBE results) WHERE column_name = 'batch_size'",
        ["column_name", "batch_size"],
    ),
    ("show", "SELECT count(*) > 0 AS any FROM (SHOW TABLES)", ["any", "True"]),
    ("call", "CALL pragma_table_info('runs')", None),
    ("table-function", "SELECT count(*) AS n FROM duckdb_views() WHERE view_name = 'results_latest'", ["n", "1"]),
    ("explain", "EXPLAIN SELECT count(*) FROM samples", None),
    ("explain-analyze", "EXPLAIN ANALYZE SELECT count(*) FROM samples", None),
    ("explain-with-options", "EXPLAIN (FORMAT json) SELECT 1", None),
    ("explain-a-pivot", "EXPLAIN PIVOT results ON backend USING count(*)", None),
    (
        "prepare-execute",
        "PREPARE p AS SELECT count(*) AS n FROM results WHERE batch_size >= $1; EXECUTE p(2)",
        ["n", "2"],
    ),
    (
        "prepare-a-pivot",
        "PREPARE p AS PIVOT results ON backend USING count(*) GROUP BY mode; EXECUTE p",
        ["mode,numpy", "eager,4"],
    ),
    ("words-in-strings-and-quotes", "SELECT 'COPY x TO y' AS \"copy\" -- DELETE", ["copy", "COPY x TO y"]),
    ("several-reads", "SELECT 1 AS a; SELECT 2 AS b", ["b", "2"]),
]


@pytest.mark.parametrize("name, text, expected", READS, ids=[r[0] for r in READS])
def test_reads_still_run_and_change_no_file(warehouse, name, text, expected):
    if name in ("explain-a-pivot", "prepare-a-pivot") and not PIVOT_IS_ONE:
        pytest.skip(f"DuckDB {duckdb.__version__} splits a PIVOT into statements with no text")
    before = _state(warehouse)
    r = cli("query", text, "--db", warehouse, "--format", "csv")
    assert r.exit_code == 0, r.output
    if expected is not None:
        assert r.stdout.splitlines() == expected
    assert _state(warehouse) == before


def test_text_duckdb_cannot_parse_is_its_error_and_none_of_it_runs(warehouse):
    before = _state(warehouse)
    r = cli("query", f"COPY results TO '{warehouse}.csv'; SELEC 1", "--db", warehouse)
    assert r.exit_code == 2
    assert r.stderr.startswith('benchdb: error: query failed: Parser Error: syntax error at or near "SELEC"')
    assert _state(warehouse) == before


def test_a_reading_connection_cannot_reopen_access(warehouse, tmp_path):
    """Below the statement check: every reader's connection (report, check, serve, site, publish,
    export) has its configuration locked, so no SET, RESET, PRAGMA or logging call widens it."""
    outside = tmp_path / "outside.csv"
    outside.write_text("a\n1\n")
    texts = (
        "SET enable_external_access = true",
        "RESET enable_external_access",
        "SET allowed_directories = ['/']",
        f"SET allowed_paths = ['{outside}']",
        "SET lock_configuration = false",
        "RESET lock_configuration",
        f"SET profile_output = '{tmp_path}/p.txt'",
    )
    outcome = {}
    con, _ = database.open_readonly(warehouse)
    try:
        for text in texts:
            try:
                con.execute(text)
                outcome[text] = "ran"
            except duckdb.Error as exc:
                outcome[text] = "locked" if "the configuration has been locked" in str(exc) else str(exc)
        with pytest.raises(duckdb.PermissionException):
            con.execute(f"SELECT * FROM read_csv('{outside}')")
    finally:
        con.close()
    assert outcome == dict.fromkeys(texts, "locked")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["outside.csv"]


def test_the_library_refuses_the_same(warehouse):
    from benchdb.warehouse import Warehouse

    before = _state(warehouse)
    with pytest.raises(BenchdbError, match='^benchdb query is read-only and reads only the warehouse: "COPY"'):
        Warehouse(warehouse).query(f"PREPARE p AS COPY results TO '{_parts(warehouse)[0]}'; EXECUTE p")
    assert _state(warehouse) == before

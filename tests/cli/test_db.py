"""`benchdb ingest`, `db status`/`upgrade`, `query` (:mod:`benchdb.cli.db`): exit codes, the
lines they print, and what a read-only query refuses."""

import json

import duckdb
import pytest
from click.testing import CliRunner
from conftest import write_suite

from benchdb.cli import db as db_commands
from benchdb.cli import main
from benchdb.reports.tabular import TABLE_FORMATS


def invoke(*args, env=None):
    return CliRunner().invoke(main, list(args), env=env)


def _warehouse_with_results(tmp_path):
    res, db = tmp_path / "res", tmp_path / "w.duckdb"
    res.mkdir()
    write_suite(res, n_files=2)
    r = invoke("ingest", str(res), "--db", str(db))
    assert r.exit_code == 0, r.output
    return db


def _assert_refused_as_read_only(r):
    assert r.exit_code != 0
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("benchdb: error: benchdb query is read-only"), r.stderr
    assert "Traceback" not in r.output


def test_ingest_exit_code_reports_rejections(tmp_path):
    res, db = tmp_path / "res", tmp_path / "w.duckdb"
    res.mkdir()
    write_suite(res, n_files=2)
    (res / "junk.parquet").write_text("not parquet")
    r = invoke("ingest", str(res), "--db", str(db))
    assert r.exit_code == 1
    assert r.stdout.startswith("ingested 2 new file(s), skipped 0 already loaded, rejected 1; ")
    assert r.stderr.splitlines()[-1].startswith(
        f"rejected {res.resolve() / 'junk.parquet'}: file: not a readable Parquet file"
    )


def test_ingest_missing_path(tmp_path):
    r = invoke("ingest", str(tmp_path / "nope"), "--db", str(tmp_path / "w.duckdb"))
    assert r.exit_code == 2
    assert r.stderr.strip() == (
        f"benchdb: error: path {tmp_path / 'nope'} does not exist; give a results folder or .parquet file"
    )


def test_query_refuses_writes_and_reports_errors(tmp_path):
    res, db = tmp_path / "res", tmp_path / "w.duckdb"
    res.mkdir()
    write_suite(res, n_files=1)
    invoke("ingest", str(res), "--db", str(db))
    r = invoke("query", "delete from results", "--db", str(db))
    assert r.exit_code == 2
    assert len(r.stderr.strip().splitlines()) == 1
    assert r.stderr.startswith("benchdb: error: benchdb query is read-only and reads only the warehouse: ")
    assert '"DELETE"' in r.stderr
    r = invoke("query", "CREATE MACRO m(x) AS x + 1", "--db", str(db))
    assert r.exit_code == 2 and r.stderr.startswith("benchdb: error: benchdb query is read-only")
    r = invoke("query", " ; -- nothing", "--db", str(db))
    assert r.exit_code == 2
    assert r.stderr.strip() == (
        'benchdb: error: the query is empty; give a SQL statement such as "SELECT * FROM results_latest"'
    )
    r = invoke("query", "select nope from results", "--db", str(db))
    assert r.exit_code == 2
    assert r.stderr.startswith('benchdb: error: query failed: Binder Error: Referenced column "nope" not found')
    assert "Traceback" not in r.stderr
    assert duckdb.connect(str(db), read_only=True).execute("select count(*) from results").fetchall() == [(1,)]


def test_query_export_database_is_refused_and_writes_nothing(tmp_path):
    db, target = _warehouse_with_results(tmp_path), tmp_path / "exported"
    r = invoke("query", f"EXPORT DATABASE '{target}'", "--db", str(db))
    _assert_refused_as_read_only(r)
    assert not target.exists()


def test_query_copy_to_file_is_refused_and_writes_nothing(tmp_path):
    db, target = _warehouse_with_results(tmp_path), tmp_path / "results.csv"
    before = sorted(p.name for p in tmp_path.iterdir())
    r = invoke("query", f"COPY results TO '{target}'", "--db", str(db))
    _assert_refused_as_read_only(r)
    assert not target.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_query_pivot_is_a_read_query(tmp_path):
    db = _warehouse_with_results(tmp_path)
    r = invoke("query", "PIVOT results ON backend USING count(*) GROUP BY mode", "--db", str(db), "--format", "csv")
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines() == ["mode,numpy", "eager,2"]


def test_query_missing_database(tmp_path):
    r = invoke("query", "select 1", "--db", str(tmp_path / "none.duckdb"))
    assert r.exit_code == 2
    assert r.stderr.strip() == (
        f"benchdb: error: database {tmp_path / 'none.duckdb'} does not exist; create it "
        f"with `benchdb ingest RESULTS_DIR --db {tmp_path / 'none.duckdb'}`"
    )


def test_db_env_variable_is_the_default(tmp_path):
    res, db = tmp_path / "res", tmp_path / "env.duckdb"
    res.mkdir()
    write_suite(res, n_files=1)
    r = invoke("ingest", str(res), env={"BENCHDB_DB": str(db)})
    assert r.exit_code == 0 and db.exists()
    r = invoke("query", "select count(*) as n from results", "--format", "csv", env={"BENCHDB_DB": str(db)})
    assert r.stdout.splitlines() == ["n", "1"]


def test_db_status_and_upgrade(tmp_path):
    db = tmp_path / "w.duckdb"
    r = invoke("db", "status", "--db", str(db))
    assert r.stdout.strip() == f"{db}: does not exist (benchdb schema version 10); `benchdb ingest` creates it"
    r = invoke("db", "upgrade", "--db", str(db))
    assert r.exit_code == 0
    assert r.stdout.strip() == (
        f"{db}: applied 0001_init, 0002_change_points, 0003_identity, 0004_file_ids, "
        "0005_repeats, 0006_interop, 0007_calibration, 0008_source_definitions, "
        "0009_sample_parts, 0010_systems; schema version 10"
    )
    r = invoke("db", "upgrade", "--db", str(db))
    assert r.stdout.strip() == f"{db}: already at schema version 10"
    r = invoke("db", "status", "--db", str(db))
    assert r.stdout.splitlines()[0] == f"{db}: schema version 10, benchdb supports 10 (up to date)"
    assert any(line.split()[:2] == ["samples", "0"] for line in r.stdout.splitlines())
    assert r.stdout.splitlines()[-1] == f"  samples folder {tmp_path / 'w.duckdb.samples'}: 0 part(s), 0 bytes"
    con = duckdb.connect(str(db))
    con.execute("insert into schema_version values (99, 'future', now()::timestamp, '9')")
    con.close()
    r = invoke("db", "upgrade", "--db", str(db))
    assert r.exit_code == 2
    assert r.stderr.strip() == (
        f"benchdb: error: database {db} has schema version 99, but this benchdb (0.2.0) "
        "supports up to 10; upgrade benchdb to use it"
    )
    r = invoke("db", "status", "--db", str(db))
    assert "(newer than this benchdb: upgrade benchdb)" in r.stdout


@pytest.mark.parametrize("kind", ["text", "parquet_without_contract", "empty_folder"])
def test_ingest_of_what_holds_no_measurement_file_writes_no_warehouse(kind, tmp_path):
    """A file that is not a measurement file (or a folder with none) is refused in one line naming it,
    before the warehouse is opened: no warehouse file, no .wal, no lock, no samples folder."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    inputs = tmp_path / "in"
    inputs.mkdir()
    if kind == "text":
        given = inputs / "afile"
        given.write_text("model,latency\nbert,0.1\n")
        why = (
            f"benchdb: error: {given} is not a Parquet file; "
            "give a results folder or the .parquet files `benchdb run` wrote"
        )
    elif kind == "parquet_without_contract":
        given = inputs / "data.parquet"
        pq.write_table(pa.table({"x": [1, 2]}), given)
        why = (
            f"benchdb: error: {given} is a Parquet file without benchdb's contract metadata (benchdb.contract): "
            "give the .parquet files `benchdb run` wrote, or convert other results with `benchdb import`"
        )
    else:
        given = inputs
        why = (
            f"benchdb: error: no .parquet files found under {given}; "
            "point ingest at the folder a runner wrote with --out"
        )
    before = sorted(tmp_path.rglob("*"))
    r = invoke("ingest", str(given), "--db", str(tmp_path / "w.duckdb"))
    assert r.exit_code == 2
    assert r.stderr.strip() == why
    assert sorted(tmp_path.rglob("*")) == before  # nothing written: no warehouse, .wal, lock or samples


def test_query_table_prints_no_exponent_while_csv_and_json_stay_raw(tmp_path):
    db = _warehouse_with_results(tmp_path)
    sql = "SELECT 1.0596e-05::DOUBLE AS small, 12345678.5::DOUBLE AS big, 0.25::DOUBLE AS plain"
    r = invoke("query", sql, "--db", str(db))
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines()[2].split() == ["0.000010596", "12345678", "0.25"]
    assert "e-" not in r.stdout and "e+" not in r.stdout
    r = invoke("query", sql, "--db", str(db), "--format", "json")
    assert json.loads(r.stdout) == [{"small": 1.0596e-05, "big": 12345678.5, "plain": 0.25}]
    r = invoke("query", sql, "--db", str(db), "--format", "csv")
    assert r.stdout.splitlines() == ["small,big,plain", "1.0596e-05,12345678.5,0.25"]


def test_query_writes_the_forms_a_table_has():
    """`benchdb query --format` offers exactly the forms the table writer knows."""
    option = next(p for p in db_commands.query.params if p.name == "fmt")
    assert tuple(option.type.choices) == TABLE_FORMATS

"""The command line, through click's CliRunner and real subprocesses: exit codes and exact lines."""

import json
import os
import re
import signal
import subprocess
import sys

import duckdb
import pytest
from click.testing import CliRunner
from conftest import benchdb_cmd, child, write_suite

from benchdb.backends.protocol import BackendInfo
from benchdb.cli import main
from benchdb.harness import hardware

FAST = ["--min-time", "0.05", "--max-time", "2", "--warmup", "1", "--min-iters", "5"]


def invoke(*args, env=None):
    return CliRunner().invoke(main, list(args), env=env)


def test_help_and_import_never_load_heavy_backends():
    code = (
        "import sys, benchdb, benchdb.cli\n"
        "from click.testing import CliRunner\n"
        "r = CliRunner().invoke(benchdb.cli.main, ['--help'])\n"
        "assert r.exit_code == 0 and 'ingest' in r.output, r.output\n"
        "heavy = [m for m in ('torch', 'onnxruntime', 'openvino', 'transformers') if m in sys.modules]\n"
        "print(','.join(heavy) or 'none')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "none"


def test_python_dash_m_and_version():
    proc = benchdb_cmd("--version", check=True)
    assert proc.stdout.strip() == "benchdb, version 0.2.0"


def test_run_numpy_end_to_end_then_ingest_and_query(tmp_path):
    out, db = tmp_path / "res", tmp_path / "w.duckdb"
    r = invoke(
        "run",
        "--backend",
        "numpy",
        "--model",
        "matmul:32",
        "--batch-sizes",
        "1,2",
        "--out",
        str(out),
        "--max-background-cpu",
        "100%",
        *FAST,
    )
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert lines[0].split() == ["scenario", "status", "median", "p90", "items/s", "n", "note"]
    assert re.search(r"\d \S?s\s", lines[2])  # a latency with its unit (µs, ms, s), not median_ms 0.0016
    assert "matmul:32 numpy/cpu eager fp32 bs=1 n=32" in lines[2]
    assert lines[-1].startswith("run ") and lines[-1].endswith(" 2 files in " + str(next(out.iterdir())))
    assert "[2/2] matmul:32 numpy/cpu eager fp32 bs=2 n=32" in r.stderr
    files = sorted(out.rglob("*.parquet"))
    assert len(files) == 2

    r = invoke("ingest", str(out), "--db", str(db))
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith("ingested 2 new file(s), skipped 0 already loaded, rejected 0; ")
    r = invoke("ingest", str(out), "--db", str(db))
    assert r.stdout.startswith("ingested 0 new file(s), skipped 2 already loaded, rejected 0; ")

    r = invoke(
        "query",
        "select model_id, batch_size, status, n > 0 as has_samples from results order by batch_size",
        "--db",
        str(db),
        "--format",
        "csv",
    )
    assert r.exit_code == 0, r.output
    assert r.stdout.splitlines() == [
        "model_id,batch_size,status,has_samples",
        "matmul:32,1,ok,True",
        "matmul:32,2,ok,True",
    ]
    r = invoke(
        "query",
        "select model_id, batch_size from results_latest order by batch_size",
        "--db",
        str(db),
        "--format",
        "json",
    )
    assert json.loads(r.stdout) == [
        {"model_id": "matmul:32", "batch_size": 1},
        {"model_id": "matmul:32", "batch_size": 2},
    ]
    r = invoke("query", "select metric, count(*) as n from result_metrics group by 1 order by 1", "--db", str(db))
    assert r.stdout.splitlines()[2:5] == ["first_call_s  2", "latency_s     2", "load_s        2"]
    assert r.stdout.splitlines()[-1] == "(3 rows)"


def test_run_records_unsupported_combinations_and_goes_on(tmp_path):
    out = tmp_path / "res"
    r = invoke(
        "run",
        "--backend",
        "numpy",
        "--model",
        "matmul:16",
        "--precision",
        "fp32,bf16,int8",
        "--out",
        str(out),
        "--max-background-cpu",
        "100%",
        *FAST,
    )
    assert r.exit_code == 0, r.output
    assert len(list(out.rglob("*.parquet"))) == 3
    statuses = [line.split()[7] for line in r.stdout.splitlines()[2:5]]  # label ends "threads=N"
    assert sorted(statuses) == ["unsupported", "unsupported", "valid"]
    assert "numpy has no bf16 matmul" in r.stdout and "numpy has no int8 matmul" in r.stdout


@pytest.mark.parametrize(
    "args,line",
    [
        (
            ["run", "--backend", "numpy", "--model", "resnet50"],
            "benchdb: error: model 'resnet50' is not a numpy model; use matmul:<N> with 1 <= N <= 16384, "
            "e.g. --model matmul:512",
        ),
        (
            ["run", "--backend", "tensorflow", "--model", "x"],
            "benchdb: error: unknown backend 'tensorflow'; choose one of numpy, onnxruntime, openai, "
            "openvino, ort-web, "
            "pytorch, userbench",
        ),
        (
            ["run", "--backend", "numpy", "--model", "matmul:8", "--min-time", "5", "--max-time", "1"],
            "benchdb: error: stopping rule: max_time_s must be >= min_time_s",
        ),
    ],
)
def test_run_user_errors_are_one_line(args, line, tmp_path):
    r = invoke(*args, "--out", str(tmp_path / "o"))
    assert r.exit_code == 2
    assert r.stderr.strip() == line
    assert not (tmp_path / "o").exists()


def test_bad_option_value_is_a_usage_error():
    r = invoke("run", "--backend", "numpy", "--model", "matmul:8", "--batch-sizes", "1,x")
    assert r.exit_code == 2
    assert "'1,x' is not a comma-separated list of integers" in r.stderr


def test_missing_backend_is_reported_as_unavailable_with_hint():
    info = BackendInfo("ghost", "benchdb-ghost-backend", "benchdb_ghost_backend", "pip install ghost")
    assert hardware.availability(info) == {
        "name": "ghost",
        "status": "unavailable",
        "version": None,
        "hint": "pip install ghost",
    }


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


def test_hardware_command():
    r = invoke("hardware")
    assert r.exit_code == 0
    assert r.stdout.splitlines()[1].startswith("cpu       ")
    assert "backends:" in r.stdout and "  numpy " in r.stdout
    data = json.loads(invoke("hardware", "--json").stdout)
    assert data["cpu"]["cores_logical"] >= 1
    assert {b["name"] for b in data["backends"]} == {
        "numpy",
        "pytorch",
        "onnxruntime",
        "openvino",
        "ort-web",
        "openai",
        "userbench",
    }


def test_hardware_names_what_each_backend_measures_with():
    """openai's version is httpx's and ort-web's is onnxruntime-web's (run by playwright): each is named,
    so neither reads as the backend's own version."""
    from benchdb.backends.ortweb import assets
    from benchdb.harness.hardware import package_version as version

    data = {b["name"]: b for b in json.loads(invoke("hardware", "--format", "json").stdout)["backends"]}
    assert data["openai"]["uses"] == {"httpx": version("httpx")}
    assert data["ort-web"]["uses"] == {"onnxruntime-web": assets.VERSION, "playwright": version("playwright")}
    assert data["numpy"]["uses"] == {"numpy": version("numpy")}
    lines = {ln.split()[0]: ln for ln in invoke("hardware").stdout.splitlines() if ln.startswith("  ")}
    if data["openai"]["status"] == "available":
        assert lines["openai"].split()[1:] == ["httpx", version("httpx")]
    if data["ort-web"]["status"] == "available":
        assert f"onnxruntime-web {assets.VERSION}, playwright {version('playwright')}" in lines["ort-web"]


def test_debug_shows_traceback(tmp_path):
    proc = benchdb_cmd("--debug", "query", "select 1", "--db", str(tmp_path / "none.duckdb"))
    assert proc.returncode != 0 and "Traceback" in proc.stderr
    proc = benchdb_cmd("query", "select 1", "--db", str(tmp_path / "none.duckdb"))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_runner_killed_mid_suite_keeps_completed_scenarios(tmp_path):
    out, db = tmp_path / "res", tmp_path / "w.duckdb"
    argv = [sys.executable, "-m", "benchdb", "run", "--backend", "numpy", "--model", "matmul:64"]
    argv += ["--batch-sizes", "1,2,3,4,5,6,7,8", "--min-time", "0.4", "--max-time", "1", "--target-ci", "0.0001"]
    with child([*argv, "--out", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
        first = proc.stderr.readline()  # "[1/8] ..." once the first file is on disk
        assert first.startswith("[1/8]"), first
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    done = list(out.rglob("*.parquet"))
    assert 1 <= len(done) < 8
    r = invoke("ingest", str(out), "--db", str(db))
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith(f"ingested {len(done)} new file(s), skipped 0 already loaded, rejected 0")


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


def test_impossible_thread_counts_are_refused(tmp_path):
    """More threads than the CPUs this process may run on would time contention, not the backend:
    refused with the machine's count; 0 and negative counts are refused as ever."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    base = ["run", "--backend", "numpy", "--model", "matmul:8", "--out", str(tmp_path / "o")]
    r = invoke(*base, "--threads", str(cpus + 1), "--dry-run")
    assert r.exit_code == 2
    assert r.stderr.strip() == (
        f"benchdb: error: --threads {cpus + 1}: this machine lets benchdb run on {cpus} logical CPU(s); "
        f"give at most {cpus} (more threads than CPUs measures their contention, not the backend)"
    )
    for bad in ("0", "-1"):
        r = invoke(*base, "--threads", bad, "--dry-run")
        assert r.exit_code == 2 and len(r.stderr.strip().splitlines()) == 1 and "--threads" in r.stderr, r.stderr
    r = invoke(*base, "--threads", str(cpus), "--dry-run")
    assert r.exit_code == 0, r.output
    assert not (tmp_path / "o").exists()


def test_hardware_says_how_to_make_an_unavailable_backend_available():
    from benchdb.harness.machine_report import availability_text

    ghost = BackendInfo("ghost", "benchdb-ghost-backend", "benchdb_ghost_backend", "pip install ghost")
    assert availability_text(hardware.availability(ghost)) == "unavailable - to make it available: pip install ghost"
    probed = {"name": "x", "status": "unavailable", "hint": "apt-get install chromium", "reason": "no Chromium"}
    assert availability_text(probed) == "unavailable: no Chromium - to make it available: apt-get install chromium"
    data = {b["name"]: b for b in json.loads(invoke("hardware", "--format", "json").stdout)["backends"]}
    lines = {ln.split()[0]: ln for ln in invoke("hardware").stdout.splitlines() if ln.startswith("  ")}
    assert all(lines[name].split(None, 1)[1] == availability_text(b) for name, b in data.items())


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

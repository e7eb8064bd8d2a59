"""Nothing lost, nothing leaked: file names are data, a bad file costs only itself,
another program's writes are never lost silently, readers run only benchdb's own SQL in a sandbox,
and values from files never drive the terminal. Real contract files, a real DuckDB warehouse, the
real command line."""

from __future__ import annotations

import copy
import json
import os
import pickle
from pathlib import Path

import duckdb
import numpy as np
import pytest
from click.testing import CliRunner
from conftest import HARDWARE, make_meta, make_run, need_module, write_file
from support.contract_files import ingested_warehouse

from benchdb.cli import main
from benchdb.errors import BenchdbError
from benchdb.warehouse import Warehouse

pytestmark = pytest.mark.core


#: click < 8.2 mixes stderr into output unless told not to (the floors run click 8.1)


def invoke(*args, env=None):
    return CliRunner().invoke(main, [str(a) for a in args], env=env)


def _samples(db: Path, scenario_id: str) -> tuple[int, float]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(
            "SELECT count(*), coalesce(max(value), 0) FROM samples WHERE result_id = ?", [scenario_id]
        ).fetchone()
    finally:
        con.close()


# ----------------------------------------------------------------------------- paths are data
def test_a_glob_character_in_a_file_name_reads_that_file_alone(tmp_path):
    """`a*.parquet` beside `ab.parquet`, a file ingest rejects because it claims a scenario already
    loaded: the claimed scenario keeps its samples; `a*.parquet` loads its own rows only."""
    db = tmp_path / "w.duckdb"
    run = make_run()
    good = make_meta(run, batch_size=1)
    write_file(tmp_path / "first", good, np.full(50, 1e-3))
    assert invoke("ingest", tmp_path / "first", "--db", db).exit_code == 0
    before = _samples(db, good["scenario"]["scenario_id"])
    later = tmp_path / "later"
    star = make_meta(run, batch_size=2)
    write_file(later, star, np.full(40, 2e-3), name="a*.parquet")
    write_file(later, good, np.full(500, 1000.0), name="ab.parquet")  # claims the loaded scenario
    write_file(later, make_meta(run, batch_size=3), np.full(30, 3e-3), name="a[b].parquet")
    r = invoke("ingest", later, "--db", db)
    assert r.exit_code == 1 and "rejected" in r.stderr and "ab.parquet" in r.stderr
    assert "ingested 2 new file(s)" in r.stdout
    assert _samples(db, good["scenario"]["scenario_id"]) == before == (50, 1e-3)
    assert _samples(db, star["scenario"]["scenario_id"]) == (40, 2e-3)


# ----------------------------------------------------------------------------- a bad file costs only itself
def _bad(meta: dict, path: tuple[str, ...], value) -> dict:
    meta = copy.deepcopy(meta)
    node = meta
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return meta


def test_a_value_past_its_column_rejects_its_file_alone_and_a_rerun_skips_it(tmp_path):
    db, res = tmp_path / "w.duckdb", tmp_path / "res"
    run = make_run()
    for bs in (1, 2, 3):
        write_file(res, make_meta(run, batch_size=bs))
    meta = make_meta(run, batch_size=4)
    write_file(res, _bad(meta, ("scenario", "threads"), 2**31), name="threads.parquet")
    r = invoke("ingest", res, "--db", db)
    assert r.exit_code == 1, r.output
    assert "ingested 3 new file(s)" in r.stdout
    (line,) = [ln for ln in r.stderr.splitlines() if ln.startswith("rejected")]
    assert "threads.parquet: metadata.scenario.threads: 2147483648 is out of range" in line
    again = invoke("ingest", res, "--db", db)
    assert again.exit_code == 0, again.output  # not the same failure on every rerun
    assert "skipped 3 already loaded and 1 rejected before (unchanged)" in again.stdout
    assert again.stderr.startswith(
        f"skipped {res / 'threads.parquet'}: rejected before, unchanged since: metadata.scenario.threads:"
    )


@pytest.mark.parametrize(
    "path,value,field",
    [
        (("hardware", "memory_bytes"), 2**63, "metadata.hardware.memory_bytes"),
        (("model", "num_parameters"), 10**400, "metadata.model.num_parameters"),
        (("scenario", "status"), "x" * 10_000_000, "metadata.scenario.status"),
    ],
    ids=["memory_bytes-2**63", "num_parameters-401-digits", "status-10MB"],
)
def test_huge_values_give_one_short_line(tmp_path, path, value, field):
    db, res = tmp_path / "w.duckdb", tmp_path / "res"
    run = make_run()
    write_file(res, make_meta(run, batch_size=1))
    meta = make_meta(run, batch_size=2)
    write_file(res, _bad(meta, path, value), name="bad.parquet")
    r = invoke("ingest", res, "--db", db)
    assert r.exit_code == 1 and "ingested 1 new file(s)" in r.stdout, r.output
    (line,) = [ln for ln in r.stderr.splitlines() if ln.startswith("rejected")]
    assert len(line) <= 300 + len(f"rejected {res / 'bad.parquet'}: ") and field in line, line[:400]


# ----------------------------------------------------------------------------- stored SQL
def test_a_redefined_view_is_refused_by_every_reader_until_upgrade(tmp_path):
    db = ingested_warehouse(tmp_path)
    secret = tmp_path / "secret.txt"
    secret.write_text("TOPSECRET-4711")
    con = duckdb.connect(str(db))
    con.execute(
        f"CREATE OR REPLACE VIEW results_latest AS SELECT r.*, t.content FROM results r, read_text('{secret}') t"
    )
    con.close()
    for args in (
        ("report", "--optimal-hardware"),
        ("report", "--all", "--format", "json"),
        ("check", "--baseline", "latest", "--candidate", "latest"),
        ("query", "SELECT 1"),
    ):
        r = invoke(*args, "--db", db)
        assert r.exit_code == 2, (args, r.output)
        assert "TOPSECRET" not in r.output
        assert r.stderr.strip() == (
            f"benchdb: error: database {db}: view results_latest differs from the "
            "definition this benchdb ships; benchdb will not answer from SQL it did not "
            f"write. Run `benchdb db upgrade --db {db}` to restore benchdb's definitions"
        )
    assert invoke("db", "upgrade", "--db", db).exit_code == 0
    r = invoke("report", "--optimal-hardware", "--db", db)
    assert r.exit_code == 0 and "TOPSECRET" not in r.output


def test_readers_are_sandboxed(tmp_path):
    db = ingested_warehouse(tmp_path)
    with Warehouse(db).reading() as con:
        with pytest.raises(duckdb.Error, match="disabled"):
            con.execute(f"SELECT * FROM read_text('{tmp_path / 'res'}/*')").fetchall()


@pytest.mark.parametrize(
    "command",
    [
        ("report", "--all"),
        ("check", "--baseline", "latest~1", "--candidate", "latest", "--allow-inconclusive"),
        ("query", "SELECT count(*) FROM results"),
        ("export", "--format", "hud-v3", "--out", "{out}"),
        ("publish", "--repo", "user/benchmarks", "--dry-run"),
    ],
    ids=lambda c: c[0],
)
def test_every_reading_command_opens_the_warehouse_read_only_and_sandboxed(tmp_path, monkeypatch, command, request):
    """Each DuckDB file connection a reading command opens is read-only and sandboxed: it can read no
    other file (a secret beside the warehouse) and write none; the warehouse file is unchanged.
    (An export writes its own output itself, outside DuckDB; publish --dry-run lists what it would
    upload to a local stand-in for the Hub, tests/support/fakehub.py.)"""
    from benchdb.startup import duckdb as engine  # the module benchdb connects through
    from benchdb.store import database

    env = None
    if command[0] == "publish":
        need_module("huggingface_hub", "benchdb[hub]")  # not among the core floors
        env = request.getfixturevalue("hub_env")

    db = ingested_warehouse(tmp_path)
    write_file(tmp_path / "res2", make_meta(make_run(started_at="2026-11-02T10:00:00+00:00")))
    assert invoke("ingest", tmp_path / "res2", "--db", db).exit_code == 0
    secret = tmp_path / "secret.csv"
    secret.write_text("a\n1\n")
    before = db.read_bytes()
    opened, sandboxed = [], []
    real_connect, real_sandbox = engine.connect, database._sandbox

    def connect(path=":memory:", *args, **kwargs):
        con = real_connect(path, *args, **kwargs)
        if str(path) not in (":memory:", ""):
            opened.append((str(path), kwargs.get("read_only", args[0] if args else False), con))
        return con

    def sandbox(con, path):
        real_sandbox(con, path)
        with pytest.raises(duckdb.Error):
            con.execute("SELECT * FROM read_csv($1)", [str(secret)]).fetchall()
        with pytest.raises(duckdb.Error):
            con.execute(f"COPY (SELECT 1 AS x) TO '{tmp_path / 'leak.csv'}'")
        sandboxed.append(con)

    for module in {engine, duckdb}:
        monkeypatch.setattr(module, "connect", connect)
    monkeypatch.setattr(database, "_sandbox", sandbox)
    args = [a.format(out=tmp_path / "export") for a in command]
    r = invoke(*args, "--db", db, env=env)
    assert r.exit_code == 0, r.output
    assert opened, "the command opened no warehouse connection"
    for path, read_only, con in opened:
        assert path == str(db) and read_only is True, (path, read_only)
        assert any(con is s for s in sandboxed), path
    assert db.read_bytes() == before
    assert not (tmp_path / "leak.csv").exists()


# ----------------------------------------------------------------------------- smaller items
def test_asset_install_never_deletes_a_user_folder(tmp_path, monkeypatch):
    from benchdb.backends.ortweb import assets
    from benchdb.errors import BackendUnavailable

    mine = tmp_path / "my-dist"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine")
    monkeypatch.setenv("BENCHDB_ORTWEB_DIR", str(mine))
    with pytest.raises(BackendUnavailable, match="lacks ort.wasm.min.mjs"):
        assets.install(tarball=tmp_path / "nope.tgz")
    assert (mine / "notes.txt").read_text() == "mine"


def test_escape_bytes_never_reach_the_terminal(tmp_path):
    db = tmp_path / "w.duckdb"
    hw = dict(HARDWARE, device_name="Evil\x1b[2J\x07 CPU", cpu_model="Evil\x1b[2J\x07 CPU")
    write_file(tmp_path / "res", make_meta(make_run(), hardware=hw))
    assert invoke("ingest", tmp_path / "res", "--db", db).exit_code == 0
    for args in (
        ("report", "--optimal-hardware"),
        ("report", "--optimal-hardware", "--wide"),
        ("query", "SELECT device_name FROM hardware"),
    ):
        r = invoke(*args, "--db", db)
        assert r.exit_code == 0, r.output
        assert "\x1b" not in r.output and "\x07" not in r.output
        if args[-1] != "--optimal-hardware":  # the compact table names no hardware when only one
            assert "Evil\\x1b[2J\\x07 CPU" in r.output


def test_ab_env_values_are_recorded_hashed_unless_public():
    from benchdb.ab.process import Side, hashed

    side = Side(
        "cand", "/usr/bin/python3", {"HF_TOKEN": "hf_secret", "BENCH_SCALE": "1.1"}, "0.2.0", frozenset({"BENCH_SCALE"})
    )
    rec = side.record()
    assert rec["env"] == {"HF_TOKEN": hashed("hf_secret"), "BENCH_SCALE": "1.1"}
    assert "hf_secret" not in json.dumps(rec) and hashed("hf_secret") != hashed("hf_secreT")
    r = invoke(
        "run",
        "--backend",
        "numpy",
        "--model",
        "matmul:8",
        "--ab",
        "python3",
        "python3",
        "--ab-env",
        "cand:A=1",
        "--ab-env-public",
        "B",
        "--dry-run",
    )
    assert r.exit_code == 2 and "--ab-env-public B: no --ab-env sets it" in r.stderr


def test_a_query_error_while_fetching_is_one_line(tmp_path):
    db = ingested_warehouse(tmp_path)
    # the first rows are fine: DuckDB returns from execute, and the error comes while fetching
    r = invoke(
        "query",
        "SELECT CASE WHEN i > 500000 THEN CAST(('x' || i) AS INTEGER) ELSE i END AS v FROM range(1000000) t(i)",
        "--db",
        db,
    )
    assert r.exit_code == 2, r.output
    (line,) = r.stderr.splitlines()
    assert line.startswith("benchdb: error: query failed: ") and "internal error" not in line


def test_the_answer_cache_is_read_only_through_a_private_real_folder(tmp_path, monkeypatch):
    db = ingested_warehouse(tmp_path)
    answers = tmp_path / "answers"
    monkeypatch.setenv("BENCHDB_ANSWERS_DIR", str(answers))
    assert invoke("report", "--optimal-hardware", "--db", db).exit_code == 0
    (kept,) = [p for p in answers.iterdir() if p.name.startswith("report-")]
    marker = tmp_path / "ran"

    class Planted:
        def __reduce__(self):
            return (Path.touch, (marker,))

    # the same name in a folder swapped in for the cache (a link): never opened
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    (elsewhere / kept.name).write_bytes(pickle.dumps(Planted()))
    os.chmod(elsewhere / kept.name, 0o600)
    answers.rename(tmp_path / "answers.old")
    answers.symlink_to(elsewhere)
    assert invoke("report", "--optimal-hardware", "--db", db).exit_code == 0
    assert not marker.exists()
    # a file in the real folder that others may write: never opened
    answers.unlink()
    (tmp_path / "answers.old").rename(answers)
    kept.write_bytes(pickle.dumps(Planted()))
    os.chmod(kept, 0o666)
    assert invoke("report", "--optimal-hardware", "--db", db).exit_code == 0
    assert not marker.exists()


def test_a_library_user_holding_a_connection_still_gets_answers(tmp_path):
    """A notebook holds a plain read-only connection: DuckDB shares its database within the process,
    so the reader takes its settings; the catalog check still applies."""
    db = ingested_warehouse(tmp_path)
    mine = duckdb.connect(str(db), read_only=True)
    try:
        r = invoke("report", "--matrix", "--format", "csv", "--db", db)
        assert r.exit_code == 0, r.output
        assert Warehouse(db).query("SELECT count(*) FROM results")[1] == [(1,)]
    finally:
        mine.close()


def test_a_warehouse_open_for_writing_elsewhere_is_waited_for_then_refused(tmp_path):
    """Another process holds a writable DuckDB connection: a write session waits for the copy's shared
    lock, then says so in one line; nothing is published and the warehouse keeps its results. (The
    command line's ingest already stops earlier, at DuckDB's own lock: "in use by another process".)"""
    import subprocess
    import sys

    from conftest import child

    db = ingested_warehouse(tmp_path)
    code = "import duckdb, sys, time; c = duckdb.connect(sys.argv[1]); print('ready', flush=True); time.sleep(60)"
    with child([sys.executable, "-c", code, str(db)], stdout=subprocess.PIPE, text=True) as holder:
        assert holder.stdout.readline().strip() == "ready"
        with pytest.raises(BenchdbError) as err:
            with Warehouse(db, wait_s=0.5).writing() as con:
                con.execute("CREATE TABLE mine AS SELECT 1 AS x")
        assert str(err.value) == (
            f"database {db} is open for writing by another program (a DuckDB "
            "connection that is not read-only); close it and try again"
        )
        r = invoke("ingest", tmp_path / "res", "--db", db, "--wait", "0.5")
        assert (
            r.exit_code == 2
            and r.stderr.startswith(f"benchdb: error: database {db} is in use by another process")
            and len(r.stderr.splitlines()) == 1
        )
    assert not list(tmp_path.glob("*.unpublished-*"))
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT count(*) FROM results").fetchone() == (1,)
    assert con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = 'mine'").fetchone() == (0,)
    con.close()

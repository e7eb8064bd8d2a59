"""The command line says plainly what happened: exit codes, Ctrl-C, option checks, config errors."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner
from conftest import child, interrupt_after_first_file

from benchdb.cli import main

FAST = ["--warmup", "1", "--min-iters", "5", "--min-time", "0.01", "--max-time", "0.05", "--max-background-cpu", "100%"]


def invoke(*args):
    return CliRunner().invoke(main, list(args))


def test_run_exits_3_when_no_scenario_succeeded_and_0_on_partial_failure(tmp_path):
    r = invoke(
        "run", "--backend", "numpy", "--model", "matmul:16", "--precision", "bf16", "--out", str(tmp_path / "a"), *FAST
    )
    assert r.exit_code == 3
    assert r.stderr.strip().splitlines()[-1].startswith("benchdb: error: no scenario succeeded (1 unsupported)")
    assert len(list((tmp_path / "a").rglob("*.parquet"))) == 1  # the failure is still on record
    r = invoke(
        "run",
        "--backend",
        "numpy",
        "--model",
        "matmul:16",
        "--precision",
        "fp32,bf16",
        "--out",
        str(tmp_path / "b"),
        *FAST,
    )
    assert r.exit_code == 0, r.output
    assert "2 files in" in r.stdout


def test_ctrl_c_keeps_finished_files_and_resume_measures_exactly_the_rest(tmp_path):
    """The warehouse already holds the whole plan (an earlier run): the printed resume command still
    measures exactly the scenarios the interrupted run left, into the same run, whatever else exists."""
    from benchdb.warehouse import Warehouse

    db = tmp_path / "w.duckdb"
    args = [
        "run",
        "--backend",
        "numpy",
        "--model",
        "matmul:64",
        "--batch-sizes",
        ",".join(str(b) for b in range(1, 13)),
        "--threads",
        "1",
        "--max-background-cpu",
        "100%",
    ]
    earlier = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchdb",
            *args,
            "--min-time",
            "0.01",
            "--max-time",
            "0.02",
            "--out",
            str(tmp_path / "earlier"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert earlier.returncode == 0, earlier.stderr
    assert invoke("ingest", str(tmp_path / "earlier"), "--db", str(db)).exit_code == 0
    out = tmp_path / "res"
    err = interrupt_after_first_file([*args, "--min-time", "0.3", "--max-time", "0.3", "--out", str(out)], out)
    last = err.strip().splitlines()[-1]
    kept = sorted(out.rglob("*.parquet"))
    (run_dir,) = [p for p in out.iterdir() if p.is_dir()]
    assert last.startswith(f"benchdb: error: interrupted: kept {len(kept)} of 12 scenario file(s) in {run_dir}")
    assert f"resume with: benchdb run --resume {run_dir} && benchdb ingest {run_dir}" in last
    assert "Traceback" not in err and 1 <= len(kept) < 12
    assert not list(out.rglob(".*.tmp"))
    before = {p.name: p.stat().st_mtime_ns for p in kept}
    r = subprocess.run(
        [sys.executable, "-m", "benchdb", "run", "--resume", str(run_dir), "--db", str(db)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    assert f"{12 - len(kept)} of 12 planned scenarios left ({len(kept)} measured before)" in r.stderr
    after = sorted(run_dir.glob("*.parquet"))
    assert len(after) == 12 and all(before[p.name] == p.stat().st_mtime_ns for p in kept)  # kept untouched
    batches = {contract_batch(p) for p in after}
    assert batches == set(range(1, 13))  # each planned scenario once, none twice
    again = subprocess.run(
        [sys.executable, "-m", "benchdb", "run", "--resume", run_dir.name, "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )  # the run id under --out
    assert again.returncode == 0 and "nothing left to measure: all 12 planned scenarios" in again.stdout
    assert invoke("ingest", str(run_dir), "--db", str(db)).exit_code == 0
    with Warehouse(db).reading() as con:
        (runs,) = con.execute("SELECT count(DISTINCT run_id) FROM results WHERE run_id = ?", [run_dir.name]).fetchone()
        (n,) = con.execute("SELECT count(*) FROM results WHERE run_id = ?", [run_dir.name]).fetchone()
    assert (runs, n) == (1, 12)  # one run, whole


def contract_batch(path) -> int:
    from benchdb.schema import contract

    return contract.read_footer(path).scenario["batch_size"]


def test_resume_refuses_plan_options_and_folders_without_a_plan(tmp_path):
    r = invoke("run", "--resume", str(tmp_path), "--backend", "numpy")
    assert r.exit_code == 2 and "leave out --backend" in r.output
    r = invoke("run", "--resume", str(tmp_path))
    assert r.exit_code == 2 and "no plan.json there" in r.output and "Traceback" not in r.output


def test_list_options_refuse_empty_items_and_counts_read_well(tmp_path):
    r = invoke("run", "--backend", "numpy", "--model", "matmul:16", "--batch-sizes", "1,,4", "--dry-run")
    assert r.exit_code == 2 and "'1,,4' has an empty item" in r.output
    r = invoke("run", "--backend", "numpy", "--model", "matmul:16", "--dry-run")
    assert r.exit_code == 0 and r.stdout.splitlines()[-1] == "1 scenario"


def test_help_texts_have_no_literal_percent_escapes_and_document_options():
    text = invoke("run", "--help").output
    assert "%%" not in text
    assert "Timed calls at least" in text
    assert "Required unless --config or --suite" in text


def test_hardware_takes_format_json_like_every_other_command():
    r = invoke("hardware", "--format", "json")
    assert r.exit_code == 0
    data = json.loads(r.output)
    assert {"cpu", "backends", "libraries"} <= set(data)
    assert json.loads(invoke("hardware", "--json").output)["cpu"] == data["cpu"]


def test_yaml_errors_name_the_line_and_unused_excludes_are_reported(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("runs:\n  - backends: numpy\n    models: [matmul:16\n")
    r = invoke("run", "--config", str(bad), "--dry-run")
    assert r.exit_code == 2 and "is not valid YAML: line " in r.stderr
    cfg = tmp_path / "cfg.yaml"
    cfg.write_text("runs:\n  - {backends: numpy, models: matmul:16}\nexclude:\n  - {model: matmul:61}\n")
    r = invoke("run", "--config", str(cfg), "--dry-run")
    assert r.exit_code == 0
    assert "warning: exclude rule {'model': 'matmul:61'} matches no scenario" in r.stderr


def test_ctrl_c_while_a_file_is_written_takes_effect_once_it_is_recorded(ctrl_c_in_this_process):
    """The driver writes a scenario file and records it in one step that Ctrl-C cannot split: a
    SIGINT inside waits for the block's end, then raises KeyboardInterrupt as usual."""
    import os

    from benchdb.ctrl_c import deferred

    done = []
    with pytest.raises(KeyboardInterrupt):
        with deferred():
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)
            done.append("recorded")
    assert done == ["recorded"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_ctrl_c_during_a_query_is_an_interrupt_not_an_internal_error(tmp_path):
    """DuckDB ends a query that Ctrl-C interrupts with its own error (a RuntimeError in duckdb 2.0)
    in place of KeyboardInterrupt: every command reports it as the interrupt it is, in one line,
    exit 130."""
    from conftest import make_meta, make_run, write_file

    from benchdb.ingest import ingest

    (tmp_path / "r").mkdir()
    write_file(tmp_path / "r", make_meta(make_run()))
    warehouse = tmp_path / "w.duckdb"
    ingest([tmp_path / "r"], warehouse)
    argv = [sys.executable, "-m", "benchdb", "query", "--db", str(warehouse)]
    query = "SELECT count(*) FROM range(1000000000000) t(x) WHERE x % 7 = 3"
    with child([*argv, query], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) as proc:
        time.sleep(3)  # well inside the query: it scans for minutes
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert err.strip().splitlines() == [
        "benchdb: interrupted; nothing half-written was kept (warehouse writes are published whole), "
        "run the command again to finish"
    ]

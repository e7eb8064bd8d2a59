"""`benchdb run` through click's CliRunner and real subprocesses: the measured files, one-line
errors, refused thread counts and what a killed run keeps (:mod:`benchdb.cli.run`)."""

import json
import os
import re
import signal
import subprocess
import sys

import pytest
from click.testing import CliRunner
from conftest import child

from benchdb.cli import main
from benchdb.cli import run as run_command

FAST = ["--min-time", "0.05", "--max-time", "2", "--warmup", "1", "--min-iters", "5"]


def invoke(*args, env=None):
    return CliRunner().invoke(main, list(args), env=env)


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


def test_resume_refuses_every_plan_option_by_its_parameter():
    """--resume refuses the options of a plan by their parameter names: a renamed parameter would be
    let through silently."""
    params = {p.name for p in run_command.run.params}
    assert set(run_command.PLAN_OPTIONS) <= params
    r = invoke("run", "--resume", "r1", "--suite", "smoke", "--dry-run")
    assert r.exit_code == 2
    assert r.stderr.strip() == (
        "benchdb: error: --resume finishes the plan the interrupted run recorded; leave out --dry-run, --suite"
    )

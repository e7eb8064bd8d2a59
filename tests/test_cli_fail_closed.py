"""The command line says plainly what happened: exit codes, Ctrl-C, option checks, config errors."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner

from benchdb.cli import main

FAST = ["--warmup", "1", "--min-iters", "5", "--min-time", "0.01", "--max-time", "0.05",
        "--max-background-cpu", "100"]


def invoke(*args):
    return CliRunner().invoke(main, list(args))


def test_run_exits_3_when_no_scenario_succeeded_and_0_on_partial_failure(tmp_path):
    r = invoke("run", "--backend", "numpy", "--model", "matmul:16", "--mode", "compile", "--out",
               str(tmp_path / "a"), *FAST)
    assert r.exit_code == 3
    assert r.stderr.strip().splitlines()[-1].startswith("benchdb: error: no scenario succeeded (1 unsupported)")
    assert len(list((tmp_path / "a").rglob("*.parquet"))) == 1           # the failure is still on record
    r = invoke("run", "--backend", "numpy", "--model", "matmul:16", "--mode", "eager,compile", "--out",
               str(tmp_path / "b"), *FAST)
    assert r.exit_code == 0, r.output
    assert "2 files in" in r.stdout


def test_ctrl_c_keeps_finished_files_and_says_how_to_resume(tmp_path):
    out = tmp_path / "res"
    proc = subprocess.Popen([sys.executable, "-m", "benchdb", "run", "--backend", "numpy", "--model", "matmul:64",
                             "--batch-sizes", ",".join(str(b) for b in range(1, 41)), "--min-time", "0.3",
                             "--max-time", "0.3", "--max-background-cpu", "100", "--out", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not list(out.rglob("*.parquet")) and time.monotonic() < deadline:
        time.sleep(0.1)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    last = err.strip().splitlines()[-1]
    kept = len(list(out.rglob("*.parquet")))
    assert last.startswith(f"benchdb: error: interrupted: kept {kept} of 40 scenario file(s) in {out}")
    assert "resume with: benchdb ingest" in last and "--skip-fresh 1d" in last
    assert "Traceback" not in err and 1 <= kept < 40
    assert not list(out.rglob(".*.tmp"))


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


def test_ctrl_c_while_a_file_is_written_takes_effect_once_it_is_recorded():
    """The driver writes a scenario file and records it in one step that Ctrl-C cannot split: a
    SIGINT inside waits for the block's end, then raises KeyboardInterrupt as usual."""
    import os

    from benchdb.plan.driver import _ctrl_c_deferred

    done = []
    with pytest.raises(KeyboardInterrupt):
        with _ctrl_c_deferred():
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)
            done.append("recorded")
    assert done == ["recorded"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler

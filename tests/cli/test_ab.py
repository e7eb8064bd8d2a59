"""Interleaved A/B runs (`benchdb run ... --ab BASE CAND`): real side processes, real files, the
real gate on the tags the command prints."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from conftest import REPO, benchdb_cmd

from benchdb.ab.process import SIDES
from benchdb.schema import contract

SHORT = ["--warmup", "1", "--min-iters", "5", "--min-time", "0.05", "--max-time", "0.2", "--max-background-cpu", "100%"]
PY = sys.executable  # the same interpreter on both sides: an A/A run

SLOW_BENCH = """\
import os

from benchdb import bench


@bench.params(n=[4_000, 8_000])
def bench_loop(n):                  # AB_SLOWDOWN is not declared in ENV: not part of the identity
    total = 0
    for i in range(int(n * float(os.environ.get("AB_SLOWDOWN", "1")))):
        total += i * i
    return total
"""


def _ab(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return benchdb_cmd("run", *args, "--out", "out", "--db", "w.duckdb", cwd=tmp_path, timeout=300)


def _check_command(proc: subprocess.CompletedProcess) -> str:
    (line,) = [ln for ln in proc.stdout.splitlines() if ln.startswith("check with: ")]
    return line.removeprefix("check with: ")


def _run_printed(command: str, cwd: Path) -> subprocess.CompletedProcess:
    """The printed command as a user would paste it (the `benchdb` of this interpreter's environment)."""
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    if command.split("&&")[-1].strip().startswith("benchdb check") and "--format" not in command:
        command += " --wide"  # every column whole: the tests read the verdict per row
    return subprocess.run(command, shell=True, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def _files(tmp_path: Path, tag: str) -> list[Path]:
    return [
        p
        for p in sorted((tmp_path / "out").rglob("*.parquet"))
        if tag in contract.read_footer(p).metadata["run"]["tags"]
    ]


FLIP_BENCH = '''\
import os

_SLOW = None


def bench_flip():
    """Every second process (in run order, counted in a file) does 10x the work (1.5x, then 3x, let
    this VM's noise during a long test session make two processes of one side look alike, and the
    verdict closed early)."""
    global _SLOW
    if _SLOW is None:
        path = os.environ["AB_COUNTER"]
        n = int(open(path).read()) if os.path.exists(path) else 0
        with open(path, "w") as f:
            f.write(str(n + 1))
        _SLOW = n % 2 == 1
    total = 0
    for i in range(40_000 if _SLOW else 4_000):
        total += i * i
    return total
'''


@pytest.mark.slow
def test_ab_max_trials_adds_trials_while_the_verdict_is_open(tmp_path):
    """Process k of the run is slow when k is odd; a side goes first in half the trials, so each
    side has as many slow as fast processes and the interval stays wide: the run goes on to
    --ab-max-trials, two trials at a time, and the files and the gate see all of them."""
    bench = tmp_path / "bench_flip.py"
    bench.write_text(FLIP_BENCH)
    counter = tmp_path / "counter"
    proc = _ab(
        tmp_path,
        "--bench",
        str(bench),
        "--ab",
        PY,
        PY,
        "--repeats",
        "2",
        "--ab-max-trials",
        "4",
        "--ab-env",
        f"base:AB_COUNTER={counter}",
        "--ab-env",
        f"cand:AB_COUNTER={counter}",
        *SHORT,
        # an invalid side closes the verdict (more trials would not mend it): under CI's load a
        # process of 15 samples could end "noisy" against the 2 % default and stop the run at trial 2
        "--target-ci",
        "50%",
    )
    assert proc.returncode == 0, proc.stderr
    assert "up to 8 while verdicts are open" in proc.stderr
    lines = re.findall(r"\] trial (\d)/4 (base|cand) ", proc.stderr)
    assert [int(t) for t, _ in lines] == [1, 1, 2, 2, 3, 3, 4, 4] and int(counter.read_text()) == 8, proc.stderr
    command = _check_command(proc)
    ab_id = re.search(r"tag:ab-([0-9a-f]+)-base", command).group(1)
    for side in SIDES:
        (path,) = _files(tmp_path, f"ab-{ab_id}-{side}")
        meta = contract.read_footer(path).metadata
        ab = meta["run"]["config"]["ab"]
        assert ab["trials"] == 4 and ab["max_trials"] == 4 and len(ab["sequence"]) == 4
        assert meta["scenario"]["repeats"] == 4
        assert Counter(o.split(",")[0] for o in meta["scenario"]["extra"]["ab_order"]) == {"base": 2, "cand": 2}
        assert sorted(set(pq.read_table(path, columns=["repeat"]).column("repeat").to_pylist())) == [0, 1, 2, 3]
    check = _run_printed(command, tmp_path)
    assert "inconclusive" in check.stdout and "4 vs 4" not in check.stderr, check.stdout + check.stderr


def test_ab_max_trials_needs_ab(tmp_path):
    proc = benchdb_cmd("run", "--backend", "numpy", "--model", "matmul:8", "--ab-max-trials", "6", cwd=tmp_path)
    assert proc.returncode == 2 and "--ab-max-trials extends the trials of --ab" in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.slow
def test_aa_run_of_numpy_passes_the_gate_and_records_the_order(tmp_path):
    proc = _ab(tmp_path, "--backend", "numpy", "--model", "matmul:32", "--ab", PY, PY, "--repeats", "3", *SHORT)
    assert proc.returncode == 0, proc.stderr
    # the processes: per trial, both sides once, back to back
    lines = re.findall(r"\] trial (\d)/3 (base|cand) matmul:32", proc.stderr)
    assert [int(t) for t, _ in lines] == [1, 1, 2, 2, 3, 3]
    assert all({lines[i][1], lines[i + 1][1]} == set(SIDES) for i in range(0, 6, 2))
    run_order = [lines[i][1] + "," + lines[i + 1][1] for i in range(0, 6, 2)]
    command = _check_command(proc)
    ab_id = re.search(r"tag:ab-([0-9a-f]+)-base", command).group(1)
    for side in SIDES:
        (path,) = _files(tmp_path, f"ab-{ab_id}-{side}")
        meta = contract.read_footer(path).metadata
        ab = meta["run"]["config"]["ab"]
        assert ab["side"] == side and ab["python"] == PY and ab["trials"] == 3 and ab["benchdb_version"]
        assert ab["order"][0]["first"] == [o.split(",")[0] for o in run_order]  # recorded as run
        assert meta["scenario"]["extra"]["ab_order"] == run_order
        assert meta["scenario"]["repeats"] == 3 and meta["run"]["tags"] == [f"ab-{ab_id}", f"ab-{ab_id}-{side}"]
        assert sorted(set(pq.read_table(path, columns=["repeat"]).column("repeat").to_pylist())) == [0, 1, 2]
    check = _run_printed(command, tmp_path)
    verdict = re.search(r"^\| \**(\w+)\** \| matmul:32 ", check.stdout, re.M)
    assert verdict, check.stdout + check.stderr
    verdict = verdict.group(1)
    assert verdict in ("unchanged", "inconclusive")  # one interpreter on both sides: never a difference
    assert check.returncode == (3 if verdict == "inconclusive" else 0), check.stdout + check.stderr
    assert (
        "hierarchical"
        in benchdb_cmd(
            "query", "SELECT DISTINCT ci_method FROM results", "--db", "w.duckdb", cwd=tmp_path, check=True
        ).stdout
    )


@pytest.mark.slow
def test_undeclared_env_slowdown_on_the_candidate_is_regressed(tmp_path):
    bench = tmp_path / "bench_slow.py"
    bench.write_text(SLOW_BENCH)
    # 10x the work: on this 2-vCPU machine a busy sibling thread makes whole processes about 2x
    # slower at random (both sides alike), and the interval of 3 processes a side is the Student-t
    # one (hierarchy.small_sample_factor): with two CPU hogs beside it, 3x came out at +137 %, 95 %
    # CI [-10 %, +323 %] (inconclusive) at n=8000.
    proc = _ab(
        tmp_path,
        "--bench",
        str(bench),
        "--ab",
        PY,
        PY,
        "--ab-env",
        "cand:AB_SLOWDOWN=10",
        "--ab-env-public",
        "AB_SLOWDOWN",
        "--repeats",
        "3",
        *SHORT,
        "--max-time",
        "0.5",
        "--target-ci",
        "0.05",
    )  # converge on a busy machine
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.count("] trial ") == 6  # one process per side and trial runs both n values
    command = _check_command(proc)
    ab_id = re.search(r"tag:ab-([0-9a-f]+)-cand", command).group(1)
    (cand,) = {
        contract.read_footer(p).metadata["run"]["config"]["ab"]["env"].get("AB_SLOWDOWN")
        for p in _files(tmp_path, f"ab-{ab_id}-cand")
    }
    assert cand == "10"
    check = _run_printed(command, tmp_path)
    assert check.returncode == 1, check.stdout + check.stderr
    verdicts = re.findall(r"^\| \**(\w+)\** \| bench_slow::bench_loop ", check.stdout, re.M)
    assert verdicts == ["regressed", "regressed"], check.stdout


@pytest.mark.slow
def test_a_declared_env_variable_makes_the_sides_different_series(tmp_path):
    """bench_example declares BENCH_SCALE in ENV: another value is another series, never a slowdown."""
    spec = f"{REPO / 'examples' / 'benches' / 'bench_example.py'}::bench_python_loop"
    proc = _ab(tmp_path, "--bench", spec, "--ab", PY, PY, "--ab-env", "cand:BENCH_SCALE=2", "--repeats", "2", *SHORT)
    assert proc.returncode == 0, proc.stderr
    envs = {
        contract.read_footer(p).metadata["scenario"]["options"]["env"] for p in (tmp_path / "out").rglob("*.parquet")
    }
    assert envs == {'{"BENCH_SCALE":null}', '{"BENCH_SCALE":"2"}'}
    assert (
        "warning: --ab-env BENCH_SCALE: the bench declares it in ENV, so it is part of the scenario's "
        "identity and base and cand become different series"
    ) in proc.stderr  # said before measuring
    check = _run_printed(_check_command(proc), tmp_path)
    assert check.returncode == 2 and "nothing to compare" in check.stderr
    assert "measured with different options: env (BENCH_SCALE)" in check.stderr  # check names the split


def test_side_errors_are_one_line(tmp_path):
    missing = tmp_path / "nowhere" / "bin" / "python"
    proc = _ab(tmp_path, "--backend", "numpy", "--model", "matmul:8", "--ab", str(missing), PY)
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        f"benchdb: error: --ab base interpreter {missing} does not exist; give the path "
        "of a Python with benchdb installed, e.g. .venv-main/bin/python"
    )
    bare = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True, timeout=120)
    python = bare / "bin" / "python"
    proc = _ab(tmp_path, "--backend", "numpy", "--model", "matmul:8", "--ab", PY, str(python))
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1
    assert proc.stderr.startswith(f"benchdb: error: --ab cand interpreter {python} has no benchdb installed")
    assert f"{python} -m pip install benchdb" in proc.stderr
    for args, says in [
        (["--ab", PY, PY, "--ab-env", "BENCH_SCALE=2"], "write base:NAME=VALUE or cand:NAME=VALUE"),
        (["--ab-env", "cand:X=1"], "--ab-env sets a variable for one side of --ab"),
        (["--ab", PY, PY, "--repeats", "1"], "--ab needs at least 2 trials per scenario"),
    ]:
        proc = _ab(tmp_path, "--backend", "numpy", "--model", "matmul:8", *args)
        assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
        assert says in proc.stderr
    assert not (tmp_path / "out").exists()

"""The gate judges a serving load point over its steady-state window where both sides found one
(benchdb.analysis.gate_window), says so, and names a side that found none.

End to end: the real serving client (`benchdb run --backend openai`, its own process) against stub
servers with known timing (a slower TTFT, a scripted drift), ingested into one real warehouse shared by
the tests, judged by the real `benchdb check`. The series history (the gate's noise) is checked on
contract files written through the project's writer, whose medians are chosen."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import HARDWARE, benchdb_cmd, make_run, need_module

from benchdb.analysis import gate_window
from benchdb.cli import main
from benchdb.schema import contract
from benchdb.warehouse import Warehouse

need_module("httpx", "benchdb[serving]")

H200 = Path(__file__).parents[1] / "fixtures" / "systems" / "8xh200.yaml"
#: One request at a time, 8 tokens at 5 ms: TPOT (which finds the window) well above the machine's jitter;
#: 48 requests: 12 buckets of 4 (steady_state.MIN_BUCKET), twice the 6 a window needs.
LOAD = (
    "--warmup 2 --min-iters 48 --min-time 0.1 --max-time 20 --target-ci 0.5 --max-background-cpu 100% "
    "--seq-lens 8 --gen-tokens 8 --concurrency 1"
).split()


def check(db: Path, *args: str) -> tuple[int, str]:
    r = CliRunner().invoke(main, ["check", *args, "--db", str(db)])
    return r.exit_code, r.output


def comparisons(db: Path, *args: str) -> list[dict]:
    code, out = check(db, *args, "--format", "json")
    assert code in (0, 1, 3), out
    return json.loads(out)["comparisons"]


def _run(*args: str) -> str:
    proc = benchdb_cmd("run", "--backend", "openai", "--model", "stub", *args, *LOAD, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """One warehouse: an interleaved A/B of a stub against one whose TTFT is 15 ms longer (2 processes
    a side), and a run of a stub against a run of one whose streams slow by 5 % a request."""
    from benchdb.testing.stub import StubConfig, StubServer

    tmp = tmp_path_factory.mktemp("served")
    out, db = tmp / "res", tmp / "w.duckdb"
    with StubServer(StubConfig(ttft_ms=5, itl_ms=5)) as fast, StubServer(StubConfig(ttft_ms=20, itl_ms=5)) as slow:
        printed = _run(
            "--ab-url", fast.url, slow.url, "--hardware-file", str(H200), "--repeats", "2", "--out", str(out)
        )
    (line,) = [ln for ln in printed.splitlines() if ln.startswith("check with: ")]
    slower = shlex.split(line.split(" && ", 1)[1])[2:6]  # --baseline tag:..-base --candidate tag:..-cand
    with StubServer(StubConfig(ttft_ms=5, itl_ms=5)) as plain:
        _run("--url", plain.url, "--hardware-file", str(H200), "--tag", "plain", "--out", str(out))
    with StubServer(StubConfig(ttft_ms=5, itl_ms=2, shape="drift:0.05")) as drifting:
        _run("--url", drifting.url, "--hardware-file", str(H200), "--tag", "drifting", "--out", str(out))
    benchdb_cmd("ingest", str(out), "--db", str(db), check=True)
    return db, slower


@pytest.mark.slow
def test_a_slower_server_regresses_over_both_sides_steady_state_windows_and_the_output_says_so(served):
    db, slower = served
    (c,) = comparisons(db, *slower)
    assert (c["metric"], c["window"], c["steady_state"]) == ("steady_ttft_s", "steady state", None), c
    assert c["verdict"] == "regressed", c
    assert c["cand_median"] - c["base_median"] == pytest.approx(0.015, abs=0.005)  # the stubs differ by 15 ms
    assert c["processes"] == [2, 2]
    code, text = check(db, *slower, "--wide")
    assert code == 1, text
    (row,) = [ln for ln in text.splitlines() if ln.startswith("| **regressed**")]
    assert f"% {gate_window.MARK} |" in row  # the change is marked as a steady-state one
    assert (
        f"{gate_window.MARK} TTFT over each side's steady-state window (1 series, judged on steady_ttft_s); "
        "whole window where a side found none (0 series)." in text
    )
    # an explicit --metric ttft_s is the whole window, and still a regression
    (whole,) = comparisons(db, *slower, "--metric", "ttft_s")
    assert (whole["metric"], whole["window"], whole["verdict"]) == ("ttft_s", "whole window", "regressed")
    code, text = check(db, *slower, "--metric", "ttft_s", "--wide")
    assert gate_window.MARK not in text and "ttft_s over the whole window (1 series): --metric was given" in text


@pytest.mark.slow
def test_a_drifting_candidate_is_judged_over_the_whole_window_and_named(served):
    db, _ = served
    (c,) = comparisons(db, "--baseline", "tag:plain", "--candidate", "tag:drifting")
    assert (c["metric"], c["window"]) == ("ttft_s", "whole window"), c
    assert "none on candidate: drifting up: the server slowed throughout" in c["steady_state"], c
    _, text = check(db, "--baseline", "tag:plain", "--candidate", "tag:drifting", "--wide")
    assert "steady state: none on candidate: drifting up" in text
    assert "ttft_s over the whole window (1 series): no series found a steady state on both sides." in text


# ----------------------------------------------------------------------------- written files
def _serving(run: dict, shape: str, steady_state: dict | None, ttft_ms: float, steady_ms: float | None, seed: int):
    """A serving load point of 3 processes: 40 TTFT samples each around ``ttft_ms``, and, where a
    steady state was found, 30 steady-state ones around ``steady_ms``."""
    scenario = {
        "model_id": "stub",
        "backend": "openai",
        "device": "remote:stub",
        "mode": "completions",
        "precision": "fp32",
        "batch_size": 1,
        "input_shape": shape,
        "status": "ok",
        "error": None,
        "validity": "valid",
        "validity_reasons": [],
        "primary_metric": "ttft_s",
        "timing_method": "host_clock",
        "threads": 1,
        "options": {"threads": 1},
        "repeats": 3,
        "extra": {} if steady_state is None else {"steady_state": steady_state},
    }
    meta = contract.build_metadata(
        run=run, hardware=HARDWARE, model={"model_id": "stub", "family": "synthetic"}, scenario=scenario
    )
    rng = np.random.default_rng(seed)
    rows = []
    for repeat in range(3):
        for i, v in enumerate(rng.lognormal(np.log(ttft_ms / 1e3), 0.01, 40)):
            rows.append(("ttft_s", "s", i, i * 0.01, float(v), repeat))
        if steady_ms is not None:
            for i, v in enumerate(rng.lognormal(np.log(steady_ms / 1e3), 0.01, 30)):
                rows.append(("steady_ttft_s", "s", i + 5, (i + 5) * 0.01, float(v), repeat))
    return meta, rows


FOUND = {"found": True, "method": "test", "buckets": 16, "start_s": 0.05, "end_s": 0.35, "requests": 30}
DRIFT = {"found": False, "method": "test", "buckets": 16, "reason": "drifting up: the server slowed throughout"}


@pytest.fixture(scope="module")
def history(tmp_path_factory):
    """Ten runs of three serving series, the last the candidate. Whole-window TTFT moves by up to 40 %
    from run to run (a warm-up that varies), the steady-state TTFT by 0.2 %. Series ``steady`` found a
    steady state on every run; ``drifting`` did too, but for the candidate; ``imported`` has no test."""
    tmp = tmp_path_factory.mktemp("history")
    res, db = tmp / "res", tmp / "w.duckdb"
    rng = np.random.default_rng(3)
    for i in range(10):
        run = make_run(started_at=f"2026-10-{i + 1:02d}T10:00:00+00:00", tags=[f"night-{i}"])
        whole, steady = 10.0 * (1 + 0.4 * rng.random()), 8.0 * (1 + 0.002 * rng.standard_normal())
        last = i == 9
        for n, (shape, test) in enumerate(
            (("steady", FOUND), ("drifting", DRIFT if last else FOUND), ("imported", None))
        ):
            meta, rows = _serving(run, shape, test, whole, steady if test and test["found"] else None, 10 * i + n)
            contract.write_scenario(res / f"r{i}-{shape}.parquet", meta, contract.samples_table(meta, rows))
    summary = Warehouse(db).ingest([res])
    assert summary.new == 30 and not summary.rejected
    return db


def test_the_gates_noise_comes_from_the_history_of_the_metric_it_judges(history):
    by = {
        c["scenario"]["input_shape"]: c
        for c in comparisons(history, "--baseline", "tag:night-8", "--candidate", "tag:night-9")
    }
    steady, drifting, imported = by["steady"], by["drifting"], by["imported"]
    assert (steady["metric"], steady["window"], steady["steady_state"]) == ("steady_ttft_s", "steady state", None)
    # the steady-state medians' history: a 0.2 % noise that leaves the 5 % threshold as it is
    assert steady["noise"] < 0.01 and steady["threshold"] == 0.05 and steady["verdict"] == "unchanged", steady
    assert steady["base_median"] == pytest.approx(8e-3, rel=0.01)
    # judged on the whole window: its 40 % run-to-run moves raise the threshold
    assert (drifting["metric"], drifting["window"]) == ("ttft_s", "whole window")
    assert drifting["steady_state"] == "none on candidate: drifting up: the server slowed throughout"
    assert drifting["noise"] > 0.05 and drifting["threshold"] > 0.15, drifting
    # no steady-state test on either side: as before, no window named
    assert (imported["metric"], imported["window"], imported["steady_state"]) == ("ttft_s", None, None)
    _, text = check(history, "--baseline", "tag:night-8", "--candidate", "tag:night-9", "--wide")
    assert (
        f"{gate_window.MARK} TTFT over each side's steady-state window (1 series, judged on steady_ttft_s); "
        "whole window where a side found none (1 series). 1 series name a side with no steady state in their row."
        in text
    )
    # --metric ttft_s: every series over the whole window, on that metric's noise
    explicit = {
        c["scenario"]["input_shape"]: c
        for c in comparisons(history, "--baseline", "tag:night-8", "--candidate", "tag:night-9", "--metric", "ttft_s")
    }
    assert explicit["steady"]["window"] == "whole window" and explicit["steady"]["noise"] > 0.05

"""Honest answers: one rule for uncertainty in the optimal-hardware table and in `check`, Markdown
that never leaks into HTML (terminal tables that fit: tests/reports/test_fit.py). Real contract files, a real
DuckDB warehouse, the real command line."""

from __future__ import annotations

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import make_meta, make_run, write_file

from benchdb.cli import main

pytestmark = pytest.mark.core


#: click < 8.2 mixes stderr into output unless told not to (the floors run click 8.1)


def invoke(*args):
    return CliRunner().invoke(main, list(args))


def _pair(folder, run, *, repeats: int, slower: float = 1.25, seed: int = 0, n: int = 600, spread=1e-6):
    """numpy (fast) and 'slowpy' (``slower`` x) on one model, in one run, each with ``repeats`` processes."""
    rng = np.random.default_rng(seed)
    for backend, scale in (("numpy", 1.0), ("slowpy", slower)):
        meta = make_meta(run, backend=backend)
        write_file(folder, meta, rng.normal(1e-3 * scale, spread, n), repeats=repeats)


def _optimal(db):
    r = invoke("report", "--optimal-hardware", "--format", "json", "--db", str(db))
    assert r.exit_code == 0, r.output
    import json

    (row,) = json.loads(r.stdout)
    return row


def test_a_single_process_pair_with_a_tight_within_process_ci_is_never_a_win(tmp_path):
    _pair(tmp_path / "r", make_run(), repeats=1, slower=1.01)  # +1 %, a very tight within-process CI
    db = tmp_path / "w.duckdb"
    assert invoke("ingest", str(tmp_path / "r"), "--db", str(db)).exit_code == 0
    row = _optimal(db)
    assert row["best_backend"] == "numpy" and 0.005 < row["margin"] < 0.02
    assert row["margin_verdict"] == "unconfirmed" and row["margin_basis"] is None
    assert row["margin_ci_low"] is None and row["margin_processes"] == 1
    md = invoke("report", "--optimal-hardware", "--db", str(db)).stdout
    assert "| unconfirmed |" in md and "| win |" not in md
    prose = " ".join(line.lstrip("> ") for line in md.splitlines())
    assert "winner within run-to-run noise is unknown" in prose and "`--repeats 3`" in prose


def test_interleaved_processes_give_a_win_only_beyond_the_threshold(tmp_path):
    db = tmp_path / "w.duckdb"
    _pair(tmp_path / "a", make_run(started_at="2026-11-01T10:00:00+00:00"), repeats=3, slower=1.5, spread=2e-5)
    assert invoke("ingest", str(tmp_path / "a"), "--db", str(db)).exit_code == 0
    row = _optimal(db)
    assert row["margin_basis"] == "processes" and row["margin_processes"] == 3
    assert row["margin_verdict"] == "win" and row["margin_ci_low"] > 0.05
    # +1 % with 3 processes each: an interval, but inside 5 %: a tie, never a win
    db2 = tmp_path / "w2.duckdb"
    _pair(tmp_path / "b", make_run(), repeats=3, slower=1.01, spread=2e-5)
    assert invoke("ingest", str(tmp_path / "b"), "--db", str(db2)).exit_code == 0
    assert _optimal(db2)["margin_verdict"] == "tie"


def test_results_from_separate_runs_without_history_are_unconfirmed(tmp_path):
    """Each backend measured in its own invocation with 3 processes: the processes of one invocation
    share its moment of the machine, so without history the winner is unconfirmed."""
    db = tmp_path / "w.duckdb"
    rng = np.random.default_rng(3)
    for backend, scale, start in (("numpy", 1.0, "10:00"), ("slowpy", 1.5, "11:00")):
        run = make_run(started_at=f"2026-11-01T{start}:00+00:00")
        write_file(tmp_path / "r", make_meta(run, backend=backend), rng.normal(1e-3 * scale, 2e-5, 600), repeats=3)
    assert invoke("ingest", str(tmp_path / "r"), "--db", str(db)).exit_code == 0
    row = _optimal(db)
    assert row["margin_verdict"] == "unconfirmed" and row["margin_basis"] is None


def test_history_gives_the_run_to_run_noise(tmp_path):
    """Both series with 10 runs (3 % run-to-run noise): single processes get an interval that
    includes that noise, and 1.5x is a win."""
    db = tmp_path / "w.duckdb"
    rng = np.random.default_rng(5)
    for day in range(10):
        run = make_run(started_at=f"2026-11-{day + 1:02d}T10:00:00+00:00")
        drift = float(np.exp(rng.normal(0, 0.03)))
        for backend, scale in (("numpy", 1.0), ("slowpy", 1.5)):
            write_file(tmp_path / "r", make_meta(run, backend=backend), rng.normal(1e-3 * scale * drift, 1e-6, 200))
    assert invoke("ingest", str(tmp_path / "r"), "--db", str(db)).exit_code == 0
    row = _optimal(db)
    assert row["margin_basis"] == "history" and row["best_runs"] == 10 and row["runner_up_runs"] == 10
    assert row["margin_verdict"] == "win"
    width = row["margin_ci_high"] - row["margin_ci_low"]
    assert width > 0.02  # the run-to-run noise is in it: one process's iterations alone give ~0.0002


def _two_separate_runs(tmp_path):
    db = tmp_path / "w.duckdb"
    rng = np.random.default_rng(9)
    for start in ("10:00", "11:00"):
        run = make_run(started_at=f"2026-11-01T{start}:00+00:00")
        for bs in (1, 2):
            write_file(tmp_path / "r", make_meta(run, batch_size=bs), rng.normal(1e-3 * bs, 1e-5, 100))
    assert invoke("ingest", str(tmp_path / "r"), "--db", str(db)).exit_code == 0
    return db


def test_check_whose_verdicts_are_all_inconclusive_is_undecided_exit_3(tmp_path):
    db = _two_separate_runs(tmp_path)
    r = invoke("check", "--baseline", "latest~1", "--candidate", "latest", "--db", str(db))
    assert r.exit_code == 3, r.output
    assert r.stdout.splitlines()[0] == "# benchdb check: undecided: 2 of 2 inconclusive"
    assert "pass" not in r.stdout.splitlines()[0]
    assert "Exit 3: undecided" in r.stdout
    assert max(len(line) for line in r.stdout.splitlines()) <= 120
    import json

    js = json.loads(
        invoke("check", "--baseline", "latest~1", "--candidate", "latest", "--db", str(db), "--format", "json").stdout
    )
    assert (js["outcome"], js["exit_code"], js["undecided"]) == ("undecided", 3, True)
    ok = invoke("check", "--baseline", "latest~1", "--candidate", "latest", "--db", str(db), "--allow-inconclusive")
    assert ok.exit_code == 0 and "(allowed: pass)" in ok.stdout.splitlines()[0]
    wide = invoke("check", "--baseline", "latest~1", "--candidate", "latest", "--db", str(db), "--wide")
    assert wide.exit_code == 3 and max(len(line) for line in wide.stdout.splitlines()) > 120  # every column


def test_html_showscode_spans_as_code_never_backticks():
    from benchdb.reports.render import code_spans

    assert (
        str(code_spans("acknowledge with `benchdb ack ID` <now>"))
        == "acknowledge with <code>benchdb ack ID</code> &lt;now&gt;"
    )
    assert str(code_spans("an odd ` tick")) == "an odd ` tick"


def _speedup_rows(db):
    r = invoke("report", "--speedup", "--format", "json", "--db", str(db))
    assert r.exit_code == 0, r.output
    import json

    return {row["backend"]: row for row in json.loads(r.stdout)}


def test_speedups_follow_the_same_rule(tmp_path):
    """onnxruntime 2x faster than the PyTorch eager baseline: one process each -> unconfirmed;
    3 interleaved processes each -> faster, with its interval."""
    for repeats, verdict in ((1, "unconfirmed"), (3, "faster")):
        db = tmp_path / f"w{repeats}.duckdb"
        run = make_run()
        rng = np.random.default_rng(repeats)
        for backend, scale in (("pytorch", 2.0), ("onnxruntime", 1.0)):
            write_file(
                tmp_path / f"r{repeats}",
                make_meta(run, backend=backend),
                rng.normal(1e-3 * scale, 2e-5, 600),
                repeats=repeats,
            )
        assert invoke("ingest", str(tmp_path / f"r{repeats}"), "--db", str(db)).exit_code == 0
        rows = _speedup_rows(db)
        assert rows["pytorch"]["speedup_verdict"] == "baseline"
        ort = rows["onnxruntime"]
        assert 1.9 < ort["speedup"] < 2.1 and ort["speedup_verdict"] == verdict
        assert (ort["speedup_ci_low"] is None) == (repeats == 1) and ort["speedup_basis"] == (
            None if repeats == 1 else "processes"
        )

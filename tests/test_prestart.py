"""Time to a result (issue 19): the first child starts ahead of its work, and a command that
imported torch skips the interpreter's teardown. Real processes, real numpy / PyTorch runs."""

from __future__ import annotations

import re

import pyarrow.parquet as pq
import pytest

from benchdb.backends import numpy as numpy_backend
from benchdb.backends.base import RunOptions
from benchdb.harness import isolation
from benchdb.harness.timing import StopRule

from conftest import benchdb_cmd

MODULE = "benchdb.backends.numpy"
RULE = StopRule(warmup_iters=1, warmup_s=0.0, min_iters=5, min_time_s=0.02, max_time_s=0.2)


def _opts(tmp_path) -> RunOptions:
    return RunOptions(backend="numpy", models=("matmul:16",), threads=1, rule=RULE, out=tmp_path)


def _outcomes(opts):
    ((model, scenarios),) = numpy_backend.plan(opts)
    return list(isolation.run_isolated(MODULE, model, scenarios, opts, numpy_backend.model_info(model)))


@pytest.mark.core
def test_the_first_run_takes_the_child_started_ahead(tmp_path):
    opts = _opts(tmp_path)
    isolation.prestart(MODULE)
    proc = isolation._WARM[MODULE][0]
    assert proc.is_alive()
    outcomes = _outcomes(opts)
    assert MODULE not in isolation._WARM              # taken, not left behind
    assert [o.status for o in outcomes] == ["ok"] and len(outcomes[0].rows) >= 5
    proc.join(10)
    assert not proc.is_alive()                       # it measured and was ended with its run
    again = _outcomes(opts)                          # later models get a child of their own
    assert [o.status for o in again] == ["ok"]


@pytest.mark.core
def test_a_dead_or_unused_child_started_ahead_is_replaced_or_ended(tmp_path):
    opts = _opts(tmp_path)
    isolation.prestart(MODULE)
    isolation._WARM[MODULE][0].kill()        # e.g. killed for memory while importing
    assert [o.status for o in _outcomes(opts)] == ["ok"]     # a fresh child measured instead
    isolation.prestart(MODULE)
    proc = isolation._WARM[MODULE][0]
    isolation.discard()                                      # a dry run, a plan that failed
    assert not isolation._WARM and not proc.is_alive()


@pytest.mark.slow          # needs torch: not a core test (the floors have no torch)
def test_run_with_torch_exits_fast_with_its_file_and_exit_code(tmp_path):
    out = tmp_path / "out"
    proc = benchdb_cmd("run", "--backend", "pytorch", "--model", "tiny:bert", "--seq-lens", "8",
                       "--threads", "1", "--warmup", "1", "--min-iters", "5", "--min-time", "0.05",
                       "--max-time", "0.3", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    assert "leaked" not in proc.stderr and "Traceback" not in proc.stderr   # atexit clean-up ran
    assert re.search(r"run \S+: 1 file in ", proc.stdout)                   # the output was flushed
    (path,) = list(out.rglob("*.parquet"))
    assert pq.read_table(path).num_rows >= 5                                 # the file is whole
    bad = benchdb_cmd("run", "--backend", "pytorch", "--model", "tiny:bert", "--device", "cuda",
                      "--out", str(out))      # refused after torch was imported: its exit code kept
    assert bad.returncode == 2, bad.stderr
    assert bad.stderr.startswith("benchdb: error: device cuda is not available") and \
        len(bad.stderr.strip().splitlines()) == 1

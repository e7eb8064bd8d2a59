"""`benchdb run` as calls of the Python API (:mod:`benchdb.plan.measure`): a dry run's plan and its
count, what is refused before anything is measured, and the command that finishes a run."""

from __future__ import annotations

import pytest

from benchdb.errors import BenchdbError
from benchdb.plan import measure
from benchdb.plan.config import runs_from

pytestmark = pytest.mark.core


def _runs(**more):
    runs, _exclude, _source = runs_from({"backend": "numpy", "models": ("matmul:8",), "batch_sizes": (1, 4), **more})
    return runs


def test_a_dry_run_plans_and_counts_without_measuring(tmp_path):
    notes: list[str] = []
    done = measure.run(_runs(out=str(tmp_path / "o")), [{"batch_size": 16}], dry_run=True, note=notes.append)
    assert [sc.batch_size for item in done.items for sc in item.scenarios] == [1, 4] and done.report is None
    assert measure.plan_total(done.items) == "2 scenarios"
    assert notes == [
        "warning: exclude rule {'batch_size': 16} matches no scenario of the plan; check its keys and values"
    ]
    assert not (tmp_path / "o").exists()


def test_what_is_refused_before_measuring(tmp_path):
    with pytest.raises(BenchdbError, match=r"--skip-fresh needs --db FILE"):
        measure.run(_runs(), skip_fresh="1h", dry_run=True)
    with pytest.raises(BenchdbError, match=r"--shard '5/4' must be i/n"):
        measure.run(_runs(), shard="5/4", dry_run=True)
    with pytest.raises(BenchdbError, match="drop --no-isolation"):
        measure.workers(_runs(no_isolate=True), "2")


def test_the_options_of_the_command_line_are_one_call(tmp_path):
    """What `benchdb run` passes through: the options by parameter name, those given on purpose, and one
    call that plans (here dry) and refuses what does not go together before measuring."""
    values = {"backend": "numpy", "models": ("matmul:8",), "batch_sizes": (1, 4), "out": str(tmp_path / "o")}
    done = measure.from_options({**values, "dry_run": True}, {"batch_sizes", "out"})
    assert [sc.batch_size for item in done.items for sc in item.scenarios] == [1, 4] and done.report is None
    assert not (tmp_path / "o").exists()
    with pytest.raises(BenchdbError, match=r"--parallel 0: give auto or a number"):
        measure.from_options({**values, "parallel": "0", "dry_run": True})
    with pytest.raises(BenchdbError, match=r"--duet runs the two sides of --ab"):
        measure.from_options({**values, "duet": True, "dry_run": True})
    with pytest.raises(BenchdbError, match=r"--ab-max-trials extends the trials of --ab"):
        measure.from_options({**values, "ab_max_trials": 9, "dry_run": True})
    with pytest.raises(BenchdbError, match=r"benchdb.ab.compare.from_options"):
        measure.from_options({**values, "ab": ("python3", "python3"), "dry_run": True})


def test_the_resume_command_finishes_a_local_run_and_ingests_a_remote_one(tmp_path):
    db = tmp_path / "w.duckdb"
    assert measure.resume_command(tmp_path / "r 1", db) == (
        f"benchdb run --resume '{tmp_path}/r 1' && benchdb ingest '{tmp_path}/r 1' --db {db}"
    )
    assert measure.resume_command("s3://bucket/r1", db) == f"benchdb ingest s3://bucket/r1 --db {db}"

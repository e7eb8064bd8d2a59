"""The files a run writes (benchdb/plan/files.py): one contract file per outcome, named by its
scenario, in the run's folder; a folder or a write the machine refuses as one line naming it."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest
from conftest import make_run, need_module

from benchdb.errors import BenchdbError
from benchdb.harness.scenario import Outcome, RunOptions, Scenario
from benchdb.plan.files import Sink, Writer, refused_as_one_line
from benchdb.schema import contract

pytestmark = pytest.mark.core


def _outcome(batch_size: int, values: list[float]) -> Outcome:
    sc = Scenario("matmul:8", "numpy", "cpu", "eager", "fp32", batch_size, "n=8", {"threads": 1}, {"dtype": "f32"})
    rows = [("latency_s", "s", i, i * 1e-3, v) for i, v in enumerate(values)]
    return Outcome(sc, {"model_id": "matmul:8", "family": "synthetic"}, rows=rows, stop_reason="min_time")


def test_each_outcome_is_one_contract_file_in_the_runs_folder(tmp_path):
    run = make_run()
    writer = Writer(run, Sink(str(tmp_path / "out"), run["run_id"]))
    opts = RunOptions("numpy", ("matmul:8",), threads=1, repeats=1)
    writer.write(_outcome(1, [1e-3, 2e-3, 3e-3]), opts)
    writer.write(_outcome(4, [4e-3, 5e-3]), opts)
    report = writer.report
    assert report.run_id == run["run_id"] and report.out_dir == tmp_path / "out" / run["run_id"]
    assert [p.parent for p in report.files] == [report.out_dir] * 2
    assert [p.name.split("-")[0] for p in report.files] == ["matmul", "matmul"]
    assert "__bs1__n=8-" in report.files[0].name and "__bs4__n=8-" in report.files[1].name
    for path, batch, n in zip(report.files, (1, 4), (3, 2), strict=True):
        footer = contract.read_footer(path)
        sc = footer.scenario
        assert (sc["batch_size"], sc["threads"], sc["stop_reason"], sc["repeats"]) == (batch, 1, "min_time", 1)
        assert sc["settings"] == {"dtype": "f32", "background_cpu_pct": None}
        assert footer.metadata["run"]["run_id"] == run["run_id"]
        assert footer.metadata["hardware"]["kind"] == "cpu"  # the numpy backend's own device
        assert path.name.endswith(f"-{sc['scenario_id'][:8]}.parquet")
        assert report.tables[[1, 4].index(batch)].num_rows == n
    assert [o.scenario.batch_size for o in report.outcomes] == [1, 4]


def test_a_folder_that_cannot_be_made_is_one_line_before_anything_runs(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with pytest.raises(BenchdbError, match="cannot create the folder .*; give --out a folder you can write"):
        Sink(str(blocker), "run-1")


def test_a_refused_write_names_the_path_and_other_errors_pass_through(tmp_path):
    target = tmp_path / "x.parquet"
    with pytest.raises(BenchdbError) as caught, refused_as_one_line(target):
        raise OSError(errno.ENOSPC, "No space left on device", str(target))
    assert str(caught.value) == (
        f"cannot write {target} ({target}: No space left on device); make room there or give --out another folder"
    )
    with pytest.raises(ValueError, match="not a refusal"), refused_as_one_line(target):
        raise ValueError("not a refusal")


def test_a_url_is_written_here_then_uploaded(tmp_path):
    need_module("fsspec", "benchdb[spark]")
    run = make_run()
    sink = Sink(f"file://{tmp_path / 'remote'}", run["run_id"])
    writer = Writer(run, sink)
    writer.write(_outcome(1, [1e-3]), RunOptions("numpy", ("matmul:8",), threads=1))
    (target,) = writer.report.files
    assert isinstance(target, str) and target.startswith(str(tmp_path / "remote" / run["run_id"]))
    assert contract.read_footer(Path(target)).scenario["batch_size"] == 1
    assert writer.report.out_dir == f"file://{tmp_path / 'remote'}/{run['run_id']}"
    assert not list(sink.local.glob("*.parquet"))  # the local copy is gone once uploaded

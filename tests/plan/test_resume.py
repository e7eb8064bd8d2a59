"""`benchdb run --resume` (benchdb/plan/resume.py): the plan a run records beside its files, and what
of it is left once some scenarios have their file."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from conftest import make_run

from benchdb.errors import BenchdbError
from benchdb.harness.scenario import Outcome, RunOptions
from benchdb.plan.files import Sink, Writer
from benchdb.plan.planning import build_plan
from benchdb.plan.resume import PLAN_FILE, resume_plan, write_plan

pytestmark = pytest.mark.core


def _planned(tmp_path):
    opts = RunOptions("numpy", ("matmul:8", "matmul:16"), batch_sizes=(1, 2), threads=1, out=tmp_path)
    run = {**make_run(), "config": {"source": "test"}, "tags": ["nightly"]}
    return opts, run, build_plan([opts])


def test_a_resumed_plan_is_what_has_no_file_of_the_run_yet(tmp_path):
    opts, run, items = _planned(tmp_path)
    folder = tmp_path / run["run_id"]
    write_plan(folder, run, 7, items)
    recorded = json.loads((folder / PLAN_FILE).read_text())
    assert recorded["run_id"] == run["run_id"] and len(recorded["planned"]) == 4
    writer = Writer(run, Sink(str(tmp_path), run["run_id"]))
    done = items[0].scenarios[1]  # matmul:8 at batch size 2 has its file
    writer.write(Outcome(done, {"model_id": "matmul:8"}, rows=[("latency_s", "s", 0, 0.0, 1e-3)]), opts)
    other = make_run()  # a file of another run in the folder measures nothing of this one
    Writer(other, Sink(str(tmp_path), run["run_id"])).write(
        Outcome(items[1].scenarios[0], {"model_id": "matmul:16"}, rows=[("latency_s", "s", 0, 0.0, 1e-3)]), opts
    )
    (folder / "broken.parquet").write_bytes(b"not parquet")  # a damaged file counts as not measured
    left = resume_plan(folder)
    assert (left.run_id, left.started_at, left.seed) == (run["run_id"], run["started_at"], 7)
    assert (left.config, left.tags, left.folder) == ({"source": "test"}, ("nightly",), folder)
    assert (left.planned, left.done) == (4, 1)
    assert [(i.model, [sc.batch_size for sc in i.scenarios]) for i in left.items] == [
        ("matmul:8", [1]),
        ("matmul:16", [1, 2]),
    ]
    assert left.items[0].opts == replace(opts, out=tmp_path)  # the options as the run recorded them


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (lambda f: None, "no such folder; give the run folder the interrupted run printed"),
        (lambda f: f.mkdir(), f"no {PLAN_FILE} there; only a folder that `benchdb run` wrote"),
        (lambda f: (f.mkdir(), (f / PLAN_FILE).write_text("{}")), f"{PLAN_FILE} is not a plan benchdb wrote"),
    ],
)
def test_a_folder_without_a_plan_is_refused_in_one_line(tmp_path, make, says):
    folder = tmp_path / "run"
    make(folder)
    with pytest.raises(BenchdbError, match="^--resume ") as caught:
        resume_plan(folder)
    assert says in str(caught.value) and "\n" not in str(caught.value)

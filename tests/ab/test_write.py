"""Writing an A/B run's files (benchdb/ab/write.py): one run per side, each scenario's trials merged into
one file per side (a trial a ``repeat``), under the key both sides' processes reported."""

from __future__ import annotations

import sys
from dataclasses import replace

import pyarrow.parquet as pq
import pytest
from conftest import make_meta, make_run

from benchdb.ab.plan import Step
from benchdb.ab.process import SIDES, Group, Measured, Side
from benchdb.ab.write import SideWriter, write_group
from benchdb.harness.scenario import Outcome, RunOptions, Scenario
from benchdb.schema import contract

pytestmark = pytest.mark.core

PLANNED = Scenario("matmul:8", "numpy", "cpu", "eager", "fp32", 1, "n=8", {"threads": 1}, {})
#: What both sides' processes reported: the key with an option learned while measuring.
REPORTED = replace(PLANNED, options={"threads": 1, "co_runners": 2}, settings={"seen": "at run time"})


def _trial(side: str, trial: int, scenario: Scenario, meta: dict | None) -> list[Measured]:
    value = (1.0 if side == "base" else 1.1) * 1e-3 * (1 + trial / 100)
    rows = [("latency_s", "s", i, i * 1e-3, value) for i in range(5)]
    return [Measured(Outcome(scenario, {"model_id": "matmul:8", "family": "synthetic"}, rows=rows), meta)]


def _writers(tmp_path, metas: dict[str, dict]) -> dict[str, SideWriter]:
    writers = {}
    for s in SIDES:
        side = Side(s, sys.executable, {}, "0.9.0")
        config = {"source": f"--ab https://user:secret@example.com/{s}", "ab": {"side": s}}
        writers[s] = SideWriter(side, f"run-{s}", "2026-11-01T10:00:00+00:00", tmp_path, ["ab-x", f"ab-x-{s}"], config)
        writers[s].note(metas[s])
    return writers


def test_each_side_is_one_run_whose_file_holds_every_trial_under_the_reported_key(tmp_path):
    metas = {
        s: make_meta(make_run(git_commit=f"{s}-commit", software={"numpy": "2.0", s: "1"}), model_id="matmul:8")
        for s in SIDES
    }
    writers = _writers(tmp_path, metas)
    group = Group(RunOptions("numpy", ("matmul:8",), repeats=2), "matmul:8", {}, {s: [PLANNED] for s in SIDES})
    steps = [Step(0, 0, ("base", "cand")), Step(1, 0, ("cand", "base"))]
    got = {(0, s): [_trial(s, t, REPORTED, metas[s]) for t in range(2)] for s in SIDES}
    write_group(group, 0, steps, got, writers)
    assert got == {}  # the group's trials are let go once written
    for s in SIDES:
        report = writers[s].report
        (path,) = report.files
        meta = contract.read_footer(path).metadata
        run, sc = meta["run"], meta["scenario"]
        assert (run["run_id"], run["tags"], run["git_commit"]) == (f"run-{s}", ["ab-x", f"ab-x-{s}"], f"{s}-commit")
        assert run["benchdb_version"] == "0.1.0"  # what the side's processes recorded, not the probe's
        assert run["software"]["numpy"] == "2.0" and run["software"][s] == "1" and "python" in run["software"]
        assert "secret" not in run["config"]["source"]  # a published config keeps no password
        assert sc["options"] == {"threads": 1, "co_runners": 2}  # the key both sides reported
        assert sc["settings"]["seen"] == "at run time" and sc["repeats"] == 2
        assert sc["extra"]["ab_side"] == s and sc["extra"]["ab_order"] == ["base,cand", "cand,base"]
        table = pq.read_table(path, columns=["repeat", "value"])
        assert table.column("repeat").to_pylist() == [0] * 5 + [1] * 5
        base = 1.0 if s == "base" else 1.1
        assert table.column("value").to_pylist() == pytest.approx([base * 1e-3] * 5 + [base * 1.01e-3] * 5)


def test_sides_that_report_different_keys_keep_their_planned_ones(tmp_path):
    metas = {s: make_meta(make_run(), model_id="matmul:8") for s in SIDES}
    writers = _writers(tmp_path, metas)
    group = Group(RunOptions("numpy", ("matmul:8",), repeats=2), "matmul:8", {}, {s: [PLANNED] for s in SIDES})
    steps = [Step(0, 0, ("base", "cand")), Step(1, 0, ("base", "cand"))]
    other = replace(REPORTED, options={"threads": 1, "co_runners": 3})
    got = {(0, "base"): [_trial("base", t, REPORTED, metas["base"]) for t in range(2)]}
    got[(0, "cand")] = [_trial("cand", t, other, metas["cand"]) for t in range(2)]
    write_group(group, 0, steps, got, writers)
    for s in SIDES:
        (path,) = writers[s].report.files
        sc = contract.read_footer(path).scenario
        assert sc["options"] == {"threads": 1} and sc["settings"]["seen"] == "at run time"

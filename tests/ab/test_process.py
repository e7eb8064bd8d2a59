"""One side of an A/B run (benchdb.ab.process) before anything is measured: its --ab-env values, its
interpreter probed for benchdb (a real one, and ones that cannot be), the environment its processes
get, the import folders and variables that hold only while its scenarios are planned, and the line
of a failed process's output that says why."""

from __future__ import annotations

import os
import sys

import pytest

from benchdb.ab import process
from benchdb.errors import BenchdbError

pytestmark = pytest.mark.core


def test_ab_env_values_go_to_their_side_and_malformed_ones_are_refused():
    got = process.parse_env(["cand:BENCH_SCALE=1.1", "base:A=x=y", "cand:EMPTY="])
    assert got == {"base": {"A": "x=y"}, "cand": {"BENCH_SCALE": "1.1", "EMPTY": ""}}
    assert process.parse_env(None) == {"base": {}, "cand": {}}
    for bad in ("other:A=1", "A=1", "cand:A", "cand:1A=2", "cand:A-B=1"):
        with pytest.raises(BenchdbError, match="write base:NAME=VALUE or cand:NAME=VALUE"):
            process.parse_env([bad])


def test_a_failed_process_is_told_by_its_last_benchdb_error_line_clipped():
    out = "Traceback\nbenchdb: error: first\n  noise\nbenchdb: error: the one\nlast words\n"
    assert process.last_line(out) == "benchdb: error: the one"
    assert process.last_line("one\n\n  two  \n\n") == "two"
    assert process.last_line("") == "" and process.last_line(None) == ""  # type: ignore[arg-type]
    assert process.last_line("x" * 500, n=10) == "x" * 9 + "…"


def test_a_real_interpreter_is_probed_for_its_benchdb_and_bad_ones_are_one_line_errors(tmp_path):
    side = process.probe("cand", sys.executable, {"BENCH_SCALE": "1"}, frozenset({"BENCH_SCALE"}))
    assert side.name == "cand" and os.path.isabs(side.python) and side.version and " " not in side.version
    assert side.record()["env"] == {"BENCH_SCALE": "1"}
    with pytest.raises(BenchdbError, match="does not exist"):
        process.probe("base", str(tmp_path / "nope" / "python"), {})
    with pytest.raises(BenchdbError, match="is not an executable file"):
        process.probe("base", str(tmp_path), {})
    script = tmp_path / "python"
    script.write_text("#!/bin/sh\necho 'benchdb: error: broken here' >&2\nexit 1\n", encoding="utf-8")
    script.chmod(0o755)
    with pytest.raises(BenchdbError, match=r"cannot run benchdb: benchdb: error: broken here$"):
        process.probe("base", str(script), {})


def test_a_sides_variables_reach_its_processes_and_hold_only_while_it_plans(monkeypatch):
    side = process.Side("cand", sys.executable, {"BENCHDB_AB_PROBE": "1"}, "x")
    monkeypatch.delenv("BENCHDB_AB_PROBE", raising=False)
    monkeypatch.delenv("PYTHONSAFEPATH", raising=False)
    env = process.child_env(side)
    assert env["BENCHDB_AB_PROBE"] == "1" and env["PYTHONSAFEPATH"] == "1"
    monkeypatch.setenv("HOME_OF_TEST", "kept")
    with process.side_environ({"BENCHDB_AB_PROBE": "2", "HOME_OF_TEST": "changed"}):
        assert os.environ["BENCHDB_AB_PROBE"] == "2" and os.environ["HOME_OF_TEST"] == "changed"
    assert "BENCHDB_AB_PROBE" not in os.environ and os.environ["HOME_OF_TEST"] == "kept"


def test_a_sides_import_folders_come_first_while_it_plans_and_their_modules_are_forgotten(tmp_path):
    (tmp_path / "ab_side_probe_mod.py").write_text("WHERE = 'side'\n", encoding="utf-8")
    with process.side_imports((str(tmp_path),)):
        import ab_side_probe_mod  # type: ignore[import-not-found]

        assert ab_side_probe_mod.WHERE == "side"
    assert "ab_side_probe_mod" not in sys.modules and str(tmp_path) not in sys.path
    with process.side_imports(()):
        pass  # no folders: nothing changes

"""The suite's own scheduling aid (tests/support/durations.py): xdist hands out the longest work
first, from estimates that only order the work and never decide an outcome."""

from __future__ import annotations

import os
import subprocess
import sys

from conftest import REPO
from support import durations


def test_the_longest_unit_goes_first_and_unknown_tests_count_the_default():
    seconds = {"a.py::slow": 90.0, "b.py::x": 1.0, "b.py::y": 2.0}
    units = {"b.py": ["b.py::x", "b.py::y"], "a.py::slow": ["a.py::slow"], "c.py": ["c.py::new"] * 20}
    # c.py: 20 tests no run has timed, at the default each, cost 6 s: more than b.py's 3 s
    assert durations.longest_first(units, seconds) == ["a.py::slow", "c.py", "b.py"]
    assert durations.cost(["c.py::new"], seconds) == durations.DEFAULT_S


def test_the_file_round_trips_and_a_malformed_line_is_skipped(tmp_path):
    path = tmp_path / "durations.txt"
    durations.write(path, {"t.py::b": 0.25, "t.py::a": 12.5})
    assert path.read_text().splitlines() == ["12.5000 t.py::a", "0.2500 t.py::b"]
    path.write_text(path.read_text() + "not-a-number t.py::c\n")
    assert durations.read(path) == {"t.py::a": 12.5, "t.py::b": 0.25}
    assert durations.read(tmp_path / "missing.txt") == {}


def test_the_committed_estimates_parse_and_a_run_can_write_them(tmp_path):
    assert durations.read(), "tests/durations.txt is missing or empty"
    out = tmp_path / "written.txt"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-n",
            "2",
            "-k",
            "round_trips",
            "tests/guarantees/test_test_order.py",
        ],
        cwd=REPO,
        env={**os.environ, "BENCHDB_WRITE_DURATIONS": str(out)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    written = durations.read(out)
    assert list(written) == [
        "tests/guarantees/test_test_order.py::test_the_file_round_trips_and_a_malformed_line_is_skipped"
    ]
    assert all(s > 0 for s in written.values())

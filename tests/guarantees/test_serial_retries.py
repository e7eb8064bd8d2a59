"""tests/support/serial_lock.py's retries, on a suite of its own in a fresh pytest: a serial test that
fails once and then passes is a pass that says so (its own fixtures made again, its module's kept),
one that fails every time fails after three attempts, and an ordinary test runs once."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]

CONFTEST = f"""
import sys
sys.path.insert(0, {str(TESTS)!r})
from support import serial_lock

def pytest_configure(config):
    config.pluginmanager.register(serial_lock.Retries(), "retries")
"""

SUITE = """
import pathlib
import pytest

HERE = pathlib.Path(__file__).parent

def bump(name):
    f = HERE / name
    n = int(f.read_text()) if f.exists() else 0
    f.write_text(str(n + 1))
    return n

@pytest.fixture(scope="module")
def kept():
    bump("module-setups")
    return object()

@pytest.fixture
def made(kept):
    bump("fixture-setups")
    return object()

@pytest.mark.serial
def test_disturbed_once(made):
    assert bump("disturbed") >= 1, "the first measurement was disturbed"

@pytest.mark.serial
def test_broken():
    bump("broken")
    assert False, "broken every time"

def test_ordinary():
    bump("ordinary")
    assert False, "not retried"
"""


def test_serial_tests_run_again_where_their_measurement_failed_and_others_do_not(tmp_path):
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n    serial: alone\n")
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_suite.py").write_text(SUITE)
    # a module after them: its test starts on a setup state the retries left whole
    (tmp_path / "test_zafter.py").write_text("def test_after():\n    pass\n")
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rA", "-W", "default", str(tmp_path)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    out = proc.stdout + proc.stderr
    files = ("disturbed", "broken", "ordinary", "fixture-setups", "module-setups")
    count = {f: int((tmp_path / f).read_text()) for f in files}
    assert count == {"disturbed": 2, "broken": 3, "ordinary": 1, "fixture-setups": 2, "module-setups": 1}, (count, out)
    assert "PASSED test_suite.py::test_disturbed_once" in out, out
    assert "FAILED test_suite.py::test_broken" in out and "FAILED test_suite.py::test_ordinary" in out, out
    assert "PASSED test_zafter.py::test_after" in out and "2 failed, 2 passed" in out, out
    assert "serial test passed on attempt 2 of 3; attempt 1: call: AssertionError: the first measurement" in out, out

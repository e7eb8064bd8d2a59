"""The background CPU window (harness/background.py): a measuring child opens it as it starts, so
the model's load serves as the window before its first scenario instead of an idle wait, and its
own CPU in that window is still left out."""

from __future__ import annotations

import sys
import threading
import time

import psutil
import pytest
from conftest import child

from benchdb.harness import background
from benchdb.harness.hardware import ROOT_ENV

pytestmark = pytest.mark.core


def _spin(cpu_s: float) -> None:
    """Use ``cpu_s`` seconds of this process's CPU (a model load, say)."""
    end = time.process_time() + cpu_s
    while time.process_time() < end:
        pass


@pytest.fixture
def sleeps(monkeypatch):
    """The waits background_cpu_pct takes (each still taken). ``background.time`` is the time module
    itself, so only this thread's sleeps are counted: a thread another test left in this worker
    (a dashboard's warm-up poll, say) sleeps through the same function."""
    taken: list[float] = []
    real = time.sleep
    mine = threading.get_ident()

    def sleep(s: float) -> None:
        if threading.get_ident() == mine:
            taken.append(s)
        real(s)

    monkeypatch.setattr(background.time, "sleep", sleep)
    monkeypatch.setattr(background, "_LAST_SAMPLE", None)
    return taken


@pytest.mark.serial  # its window is timed: beside another test (xdist) it slept once
def test_a_window_the_process_filled_with_its_own_work_needs_no_wait(sleeps):
    one_core = 100.0 / (psutil.cpu_count() or 1)
    background.open_window()
    t0 = time.monotonic()
    sys0 = psutil.cpu_times()
    _spin(0.3)
    reported = background.background_cpu_pct(0.2)
    elapsed = time.monotonic() - t0
    busy = psutil.cpu_times()
    machine = 100.0 * ((sum(busy) - busy.idle - sum(sys0) + sys0.idle) / max(sum(busy) - sum(sys0), 1e-9))
    own = 100.0 * 0.3 / (elapsed * (psutil.cpu_count() or 1))
    assert sleeps == []
    assert own > 0.1 * one_core
    # this process's spin is benchdb's own work: whatever else runs, at least half of it is left out
    assert reported <= machine - own / 2, (reported, machine, own)


@pytest.mark.serial  # its figures rest on a quiet machine: beside another test (xdist) it failed
def test_a_young_window_waits_only_for_the_rest_of_its_interval(sleeps):
    background.open_window()
    _spin(0.05)
    background.background_cpu_pct(0.5)
    assert len(sleeps) == 1 and 0 < sleeps[0] < 0.5
    # the next sample's window starts where this one ended, at least an interval ago
    _spin(0.01)
    background.background_cpu_pct(0.005)
    assert len(sleeps) == 1


def test_without_an_open_window_a_sample_waits_a_whole_interval(sleeps):
    background.background_cpu_pct(0.05)
    assert sleeps == [0.05]


HOG = "import time\nend = time.monotonic() + 30\nwhile time.monotonic() < end:\n    pass\n"


def test_a_process_benchdb_starts_inside_the_window_is_its_own_work(sleeps, monkeypatch):
    """A measuring child opens the window as it starts, then may start a process of its own (a
    server it measures): all of that process's CPU was spent inside the window, and none of it is
    background load."""
    monkeypatch.delenv(ROOT_ENV, raising=False)  # this process is the root of the family
    background.open_window()
    t0, sys0 = time.monotonic(), psutil.cpu_times()
    with child([sys.executable, "-c", HOG]) as hog:
        time.sleep(0.5)
        reported = background.background_cpu_pct(0.2)
        cpu = psutil.Process(hog.pid).cpu_times()
    elapsed, sys1 = time.monotonic() - t0, psutil.cpu_times()
    machine = 100.0 * (sum(sys1) - sys1.idle - sum(sys0) + sys0.idle) / max(sum(sys1) - sum(sys0), 1e-9)
    share = 100.0 * (cpu.user + cpu.system) / (elapsed * (psutil.cpu_count() or 1))
    assert share > 0.1 * 100.0 / (psutil.cpu_count() or 1), f"the loop hardly ran ({share:.1f}%)"
    assert reported <= machine - share / 2, (reported, machine, share)

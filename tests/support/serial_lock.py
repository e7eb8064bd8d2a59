"""Tests that run alone, even when pytest-xdist runs the others two at a time.

The suite runs on pytest-xdist (pyproject's addopts). Most tests do not care what else the machine
is doing, but a test whose verdict rests on a measurement (a result judged valid, a regression
found, a bench whose speed is compared) is spoiled by a sibling worker using the other core: benchdb
itself calls such a machine busy. Those tests are marked ``serial``; each worker holds this lock
around every test it runs (setup, call and teardown, module fixtures included): shared for an
ordinary test, exclusive for a serial one. A serial test therefore waits for the tests running on
the other workers to end, and no other test starts until it has ended.

Two ``flock`` files make the lock fair to the serial tests: each test passes a turnstile first, and
a serial test keeps the turnstile while it waits for the shared holders to leave, so a stream of
ordinary tests cannot keep it waiting. Outside xdist (one process) the lock is never contended.

Under xdist each worker also runs its ordinary tests pinned to a CPU of its own (:func:`pinned`), and a
serial test, or one marked ``all_cpus``, on every CPU.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


def _folder() -> Path | None:
    """The lock files' folder for this test run, shared by its workers; None outside xdist."""
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    if not run or not os.environ.get("PYTEST_XDIST_WORKER"):
        return None
    folder = Path(tempfile.gettempdir()) / f"benchdb-pytest-{run}"
    folder.mkdir(exist_ok=True)
    return folder


@contextmanager
def held(serial: bool) -> Iterator[None]:
    """This worker's share of the machine for one test: all of it when ``serial``."""
    folder = _folder()
    if folder is None:
        yield
        return
    with open(folder / "turnstile", "a") as gate, open(folder / "machine", "a") as machine:
        fcntl.flock(gate, fcntl.LOCK_EX)
        try:
            fcntl.flock(machine, fcntl.LOCK_EX if serial else fcntl.LOCK_SH)
        finally:
            if not serial:
                fcntl.flock(gate, fcntl.LOCK_UN)
        try:
            yield
        finally:
            fcntl.flock(machine, fcntl.LOCK_UN)
            if serial:
                fcntl.flock(gate, fcntl.LOCK_UN)


#: The CPUs this test run may use, read once before any pinning.
_ALL_CPUS = frozenset(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else frozenset()


def _own_cpu() -> set[int] | None:
    """This xdist worker's one CPU (worker N takes the N-th CPU, wrapping round), or None outside
    xdist, where there is one CPU, or where BENCHDB_TEST_PIN=0 (to compare)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    if not worker.startswith("gw") or len(_ALL_CPUS) < 2 or os.environ.get("BENCHDB_TEST_PIN") == "0":
        return None
    cpus = sorted(_ALL_CPUS)
    return {cpus[int(worker[2:]) % len(cpus)]}


@contextmanager
def pinned(pin: bool) -> Iterator[None]:
    """While a test runs, this worker and every process it starts run on the worker's own CPU
    (``pin``), or on every CPU of the run (a serial test, which has the machine to itself).

    Two workers on two cores each start runners whose default thread count is the cores they may
    use (benchdb.harness.hardware.default_threads): unpinned, two runners of two threads each share
    two cores, and a thread pool whose threads wait on each other at every operator runs far slower
    than one thread alone. Pinned, each runner measures with one thread on a core of its own."""
    own = _own_cpu()
    if own is None:
        yield
        return
    os.sched_setaffinity(0, own if pin else _ALL_CPUS)
    try:
        yield
    finally:
        os.sched_setaffinity(0, own)


#: How many times a serial test runs before its failure stands.
ATTEMPTS = 3


class Retries:
    """The plugin that runs serial tests through :func:`run_measured` (registered by tests/conftest.py)."""

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item, nextitem):
        if item.get_closest_marker("serial") is None:
            return None
        return run_measured(item, nextitem)


def run_measured(item, nextitem) -> bool:
    """Run a serial test (``pytest_runtest_protocol``) up to :data:`ATTEMPTS` times, reporting the
    first attempt that passes, else the last; a pass after a failure says so in a warning.

    A serial test's verdict rests on a measurement, and the serial lock keeps only the suite's own
    tests away from it: this VM's other tenants and the processes a test left behind still slow it
    at times (CI runs failed on an open-loop gap of 2.6 ms for 25 and on a steady state found two
    buckets late, each passing alone). A broken feature fails every attempt; a disturbed measurement
    rarely fails three in a row. Ordinary tests run once."""
    from _pytest.runner import call_and_report

    item.ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
    failed: list[str] = []
    for attempt in range(1, ATTEMPTS + 1):
        # as _pytest.runner.runtestprotocol, but the teardown's next item is known after the call
        if hasattr(item, "_request") and not item._request:
            item._initrequest()
        try:
            reports = [call_and_report(item, "setup", False)]
            if reports[0].passed and not item.config.getoption("setuponly", False):
                reports.append(call_and_report(item, "call", False))
            bad = [r for r in reports if r.failed]
            stopping = bool(item.session.shouldfail or item.session.shouldstop)
            again = bool(bad) and attempt < ATTEMPTS and not stopping
            # before another attempt only the test's own fixtures go (as if a sibling came next); a
            # session about to stop tears everything down, as runtestprotocol does
            after = item.parent if again else None if stopping else nextitem
            reports.append(call_and_report(item, "teardown", False, nextitem=after))
        finally:
            if hasattr(item, "_request"):
                item._request = False
                item.funcargs = None
        if not again:
            break
        failed.append(f"attempt {attempt}: {bad[0].when}: {_first_line(bad[0])}")
    if failed and not bad:
        item.warn(pytest.PytestWarning(f"serial test passed on attempt {attempt} of {ATTEMPTS}; " + "; ".join(failed)))
    for report in reports:
        item.ihook.pytest_runtest_logreport(report=report)
    item.ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
    return True


def _first_line(report) -> str:
    crash = getattr(report.longrepr, "reprcrash", None)
    text = crash.message if crash is not None else str(report.longrepr)
    return (text.splitlines() or [""])[0][:200]

"""Ctrl-C, taken as the user meant it: never lost, never splitting a step that must be whole.

The command line installs :func:`remember` as the process's SIGINT handler (Python's own, which
also notes that Ctrl-C came). DuckDB 2.0's Python client runs that handler as a call into it starts
and can then drop the KeyboardInterrupt and go on (50 of 150 signals sent 0.05-0.065 s into a
query were lost; one sent while a read-only connection was being set up was lost too, and the
analyst's query after it scanned on). :func:`stops` makes a Ctrl-C inside its block, or one
dropped before it, end the connection's query every time.
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import duckdb

#: One entry per Ctrl-C noted. A list, not a threading.Event: Event.set takes a lock, and a second
#: Ctrl-C whose handler ran inside the first one's set() would wait for that lock forever.
_noted: list[int] = []


def remember(signum: int, frame: Any) -> None:
    """Python's SIGINT handler (raise KeyboardInterrupt) that also notes the Ctrl-C."""
    _noted.append(signum)
    signal.default_int_handler(signum, frame)


def install() -> None:
    """Make :func:`remember` the SIGINT handler where Python's default is (an ignored SIGINT stays
    ignored); the main thread only, as Python requires. A KeyboardInterrupt that Python cannot
    raise where it landed (a weak reference's callback during an import) printed four lines of
    "Exception ignored" and went nowhere: it is noted (:func:`stops` raises it) and not printed."""
    if _main_thread() and signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, remember)
        sys.unraisablehook = _quiet_about_ctrl_c(sys.unraisablehook)


def _quiet_about_ctrl_c(hook: Callable[[Any], object]) -> Callable[[Any], object]:
    def unraisable(info: Any) -> object:
        if info.exc_type is not None and issubclass(info.exc_type, KeyboardInterrupt):
            _noted.append(signal.SIGINT)
            return None
        return hook(info)

    return unraisable


@contextmanager
def stops(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """Ctrl-C inside the block stops ``con``'s query for certain (the handler also tells the
    connection: 150 of 150 signals ended the query), and a Ctrl-C that a call into DuckDB dropped
    before the block is raised as it starts, or inside it as it ends (a dropped Ctrl-C during a
    write session's last statement must not let the session publish)."""
    previous = signal.getsignal(signal.SIGINT)
    if not _main_thread() or not callable(previous):
        yield
        return
    if _noted:
        raise KeyboardInterrupt

    def on_ctrl_c(signum: int, frame: Any) -> None:
        try:
            con.interrupt()
        except Exception:  # a connection closed already: the KeyboardInterrupt below still stops
            pass
        previous(signum, frame)

    signal.signal(signal.SIGINT, on_ctrl_c)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if _noted:
        raise KeyboardInterrupt


@contextmanager
def deferred() -> Iterator[None]:
    """Ctrl-C inside the block takes effect when it ends. Without this, a Ctrl-C between a scenario
    file's rename into place and its entry in the run report left a file that the interrupted run's
    "kept N of M" did not count (tests/guarantees/test_cli_fail_closed.py: "kept 1" with 2 files on disk)."""
    if not _main_thread():
        yield
        return
    got: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: got.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if got and callable(previous):
            previous(signal.SIGINT, None)


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()

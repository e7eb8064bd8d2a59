"""Ctrl-C is never lost in DuckDB and never splits a step (benchdb/ctrl_c.py), with real signals."""

from __future__ import annotations

import os
import signal
import sys
import textwrap
import threading
import time
from subprocess import PIPE

from conftest import child

from benchdb import ctrl_c
from benchdb.startup import duckdb

LONG = "SELECT count(*) FROM range(1000000000000) t(x) WHERE x % 7 = 3"


def test_a_ctrl_c_as_a_query_starts_stops_it_every_time(ctrl_c_in_this_process):
    """Without ``stops``, DuckDB 2.0 dropped about one in three of these signals (each sent a few
    milliseconds apart, around the query's start) and scanned on until the watchdog stopped it."""
    con = duckdb.connect()
    lost = []
    for i in range(40):
        delay = 0.005 + i * 0.0003
        sender = threading.Timer(delay, os.kill, (os.getpid(), signal.SIGINT))
        watchdog = threading.Timer(5, con.interrupt)
        try:
            watchdog.start()
            sender.start()
            started = time.monotonic()
            with ctrl_c.stops(con):
                con.execute(LONG).fetchall()
        except (KeyboardInterrupt, RuntimeError):
            pass
        finally:
            watchdog.cancel()
            sender.join()
        if time.monotonic() - started > 4:
            lost.append(delay)
    con.close()
    assert lost == [], f"Ctrl-C lost at {lost}"


def after_a_dropped_ctrl_c(dropping: str) -> tuple[str, str]:
    """Standard output and error of a Python (SIGINT at its default) that installs benchdb's
    handler, runs ``dropping`` (where a Ctrl-C goes nowhere), then a long query under ``stops``."""
    code = textwrap.dedent(
        """
        from benchdb import ctrl_c
        from benchdb.startup import duckdb
        ctrl_c.install()
        """
    )
    code += textwrap.dedent(dropping)
    code += textwrap.dedent(
        f"""
        con = duckdb.connect()
        try:
            with ctrl_c.stops(con):
                con.execute({LONG!r}).fetchall()
        except KeyboardInterrupt:
            print("stopped before the query")
        """
    )
    return run_program(code)


def run_program(code: str) -> tuple[str, str]:
    """Standard output and error of ``code`` run by a Python with SIGINT at its default."""
    with child([sys.executable, "-c", textwrap.dedent(code)], stdout=PIPE, stderr=PIPE, text=True) as proc:
        return proc.communicate(timeout=120)


def test_a_ctrl_c_dropped_before_a_query_stops_it_as_it_starts():
    out, err = after_a_dropped_ctrl_c(
        """
        import os, signal, time
        try:  # as a call into DuckDB drops it: the handler ran, its KeyboardInterrupt went nowhere
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(1)
        except KeyboardInterrupt:
            pass
        """
    )
    assert out.strip() == "stopped before the query", err


def test_a_ctrl_c_python_could_not_raise_where_it_landed_is_quiet_and_stops_the_next_query():
    out, err = after_a_dropped_ctrl_c(
        """
        import weakref
        class Thing: pass
        def callback(ref):  # where Python cannot raise: a weak reference's callback
            raise KeyboardInterrupt
        thing = Thing()
        ref = weakref.ref(thing, callback)
        del thing
        """
    )
    assert out.strip() == "stopped before the query", err
    assert err == ""


def test_a_ctrl_c_dropped_inside_the_block_is_raised_as_it_ends():
    """A Ctrl-C DuckDB dropped during a write session's last statement must not let it publish."""
    out, err = run_program(
        """
        import os, signal, time
        from benchdb import ctrl_c
        from benchdb.startup import duckdb
        ctrl_c.install()
        con = duckdb.connect()
        try:
            with ctrl_c.stops(con):
                try:
                    os.kill(os.getpid(), signal.SIGINT)
                    time.sleep(1)
                except KeyboardInterrupt:
                    pass  # as a call into DuckDB drops it
                print("the block ran to its end")
        except KeyboardInterrupt:
            print("raised as it ended")
        """
    )
    assert out.split("\n")[:2] == ["the block ran to its end", "raised as it ended"], err

"""benchdb's two start-up tricks, in one place: DuckDB's engine without its Python layer, and an
end without the interpreter's teardown of the ML libraries. The rest of the code imports DuckDB
the ordinary way; benchdb's third speed-up, answers kept per state of the warehouse, is
:mod:`benchdb.store.memo`. ``python benchmarks/startup_tricks.py`` measures what each saves, in one run.

**The engine alone.** ``import duckdb`` costs ~60 ms more than its engine on a small machine
(medians of 15 interleaved runs here: 91 ms against 30 ms; a `benchdb query` takes ~150 ms in all).
Most of it is the package's Python layer: the relation API (``con.sql``), the set-up that lets
DuckDB scan Python Arrow objects, and ``importlib.metadata`` for its version string. The engine
itself is the C++ extension ``_duckdb``, which the package re-exports unchanged (``duckdb.connect
is _duckdb.connect``). The reading commands -- ``report``, ``query``, ``check`` -- run SQL and
fetch rows, nothing else, so the modules on their path (opening a warehouse, the gate, the report
banner, the read-only sandbox) take the engine from here. Code that scans a Python Arrow table
(``con.register``) or uses the relation API imports the ``duckdb`` package itself; importing it
finishes setting up the very same module, so connections opened before work too. Writable
connections do it always (:func:`full`, from :func:`benchdb.store.database.connect`).

**The end without teardown.** After a command that imported torch and transformers, the
interpreter's teardown of those modules takes ~0.75 s (775 ms against 25 ms here); after a ``run``
or ``quickstart``, whose parent leaves torch to its children's fork servers, the teardown of what
it did import still takes ~0.1 s. That is time a user waits for nothing, since every file the
command wrote is closed (contract files and warehouse copies are written whole and renamed into
place) and its children have ended.
:func:`exit_now` runs the atexit handlers (multiprocessing's and tempfile's clean-up, logging),
flushes the output and ends the process there. A backend's fork server, which holds the same
libraries and computes nothing, ends the same way (:mod:`benchdb.harness.server_exit`).
"""

from __future__ import annotations

import os
import sys

from benchdb import ctrl_c

# Ctrl-C while DuckDB's extension module initialises aborts the process (SIGABRT, "Critical nanobind
# error"): the import is one step that Ctrl-C waits for.
with ctrl_c.deferred():
    try:
        import _duckdb as duckdb
    except ImportError:  # a duckdb build without the separate extension module: the package it is
        import duckdb  # type: ignore[no-redef]  # the same engine, re-exported by the package

__all__ = ["duckdb", "exit_now", "full"]


def full():
    """The whole ``duckdb`` package (Arrow scans and the relation API set up)."""
    import duckdb as package

    return package


def exit_now(code: int | None) -> None:
    """End the process now: atexit handlers run and output is flushed, module teardown is skipped."""
    import atexit

    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code or 0)

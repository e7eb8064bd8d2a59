"""Start the measuring children's fork servers as early as a command knows its runs: their imports
(torch and transformers' model code: seconds on a small machine) are the longest wait of a short
run, so this module imports little (not the driver, nor the contract and pyarrow it needs): what
the parent still imports then runs beside the servers' imports."""

from __future__ import annotations

import os
from collections.abc import Iterable

from benchdb.backends import registry
from benchdb.errors import BenchdbError
from benchdb.harness import hardware, isolation
from benchdb.harness.scenario import RunOptions


def isolated_modules(runs: Iterable[RunOptions]) -> list[str]:
    """The backend modules whose measuring children these runs fork (each once, in order)."""
    modules = []
    for opts in runs:
        if not opts.isolate:
            continue
        try:
            modules.append(registry.info(opts.backend).implementation)
        except BenchdbError:
            continue  # an unknown backend: planning says so
    return [m for m in dict.fromkeys(modules) if m]


def mark_root() -> None:
    """Name this process the root of benchdb's own process tree for the children (and the fork
    server) it starts, so their CPU use is never counted as background load."""
    os.environ.setdefault(hardware.ROOT_ENV, str(os.getpid()))


def prestart(runs: list[RunOptions]) -> None:
    """Start the fork servers of the measuring children for these runs' backends now, so that
    their imports overlap the planning (the driver waits for them before it measures)."""
    mark_root()
    isolation.prestart(isolated_modules(runs))

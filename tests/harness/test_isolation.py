"""Time to a result (benchdb.harness.isolation): measuring children fork from a server that imported
the backend ahead of the work, and a server that died is replaced. Real processes, real numpy runs."""

from __future__ import annotations

import pytest

from benchdb.backends.numpy import backend as numpy_backend
from benchdb.harness import isolation
from benchdb.harness.scenario import RunOptions
from benchdb.harness.timing import StopRule

MODULE = "benchdb.backends.numpy.backend"
RULE = StopRule(warmup_iters=1, warmup_s=0.0, min_iters=5, min_time_s=0.02, max_time_s=0.2)


def _opts(tmp_path) -> RunOptions:
    return RunOptions(backend="numpy", models=("matmul:16",), threads=1, rule=RULE, out=tmp_path)


def _outcomes(opts):
    ((model, scenarios),) = numpy_backend.plan(opts)
    return list(isolation.run_isolated(MODULE, model, scenarios, opts, numpy_backend.model_info(model)))


def _server_pid():
    return isolation.server_pid(MODULE)


def _alive(pid) -> bool:
    import os

    try:
        os.kill(pid, 0)
    except (ProcessLookupError, TypeError):
        return False
    return True


@pytest.mark.core
def test_children_fork_from_a_server_that_imported_the_backend_ahead(tmp_path):
    opts = _opts(tmp_path)
    assert isolation.preload_modules(MODULE)[0] == MODULE
    assert isolation.preload_modules("benchdb.backends.nosuch") == []  # planning reports it, not this
    isolation.prestart(MODULE)
    pid = _server_pid()
    assert _alive(pid)  # started before any work was sent
    first, second = _outcomes(opts), _outcomes(opts)  # each model gets a fresh child of the one server
    assert [o.status for o in first + second] == ["ok", "ok"] and len(first[0].rows) >= 5
    assert _server_pid() == pid and _alive(pid)


@pytest.mark.core
def test_a_fork_server_that_died_is_replaced(tmp_path):
    import os
    import signal
    import time

    opts = _opts(tmp_path)
    isolation.prestart(MODULE)
    pid = _server_pid()
    os.kill(pid, signal.SIGKILL)  # e.g. killed for memory
    for _ in range(100):
        if not _alive(pid):
            break
        time.sleep(0.05)
    assert [o.status for o in _outcomes(opts)] == ["ok"]  # a new server forked the child
    assert _server_pid() != pid and _alive(_server_pid())

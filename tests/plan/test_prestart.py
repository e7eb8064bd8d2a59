"""benchdb.plan.prestart: the fork servers start as soon as a command knows its runs, from a module
light enough that the parent has not yet imported the driver, the contract or pyarrow."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace

import pytest

from benchdb.harness.scenario import RunOptions
from benchdb.plan import prestart

MODULE = "benchdb.backends.numpy.backend"


@pytest.mark.core
def test_the_isolated_runs_name_their_backend_modules_once():
    numpy_run = RunOptions(backend="numpy", models=("matmul:16",))
    runs = [numpy_run, replace(numpy_run, models=("matmul:32",)), replace(numpy_run, backend="nosuch")]
    assert prestart.isolated_modules(runs) == [MODULE]  # an unknown backend is planning's to report
    assert prestart.isolated_modules([replace(numpy_run, isolate=False)]) == []


@pytest.mark.core
def test_the_fork_server_starts_before_the_parent_imports_the_driver():
    code = (
        "import json, os, sys\n"
        "from benchdb.harness import isolation\n"
        "from benchdb.harness.scenario import RunOptions\n"
        "from benchdb.plan.prestart import prestart\n"
        "prestart([RunOptions(backend='numpy', models=('matmul:16',))])\n"
        f"pid = isolation.server_pid({MODULE!r})\n"
        "os.kill(pid, 0)\n"  # alive
        "print(json.dumps([pid, sorted(m for m in ('benchdb.plan.driver', 'benchdb.schema.contract', 'pyarrow')"
        " if m in sys.modules), os.environ.get('BENCHDB_ROOT_PID') == str(os.getpid())]))\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "BENCHDB_ROOT_PID"}  # (a test before may have set it)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env).stdout
    pid, imported, root = json.loads(out)
    assert pid and imported == [] and root


@pytest.mark.core
def test_a_command_that_ends_while_its_fork_server_imports_returns_at_once(tmp_path):
    """A run refused while planning ends its fork servers as it exits: a server left to finish its
    imports (here one that would take a minute) held the command's output pipes, so whoever read them
    (this test's subprocess.run) waited for imports nothing would use."""
    importing = tmp_path / "importing"
    (tmp_path / "slowbackend.py").write_text("PRELOAD = ('slowlibrary',)\n")
    (tmp_path / "slowlibrary.py").write_text(
        f"import pathlib, time\npathlib.Path({str(importing)!r}).touch()\ntime.sleep(60)\n"
    )
    code = (
        "import pathlib, sys, time\n"
        "from benchdb.harness import isolation\n"
        "isolation.prestart('slowbackend')\n"
        f"marker = pathlib.Path({str(importing)!r})\n"
        "for _ in range(300):\n"  # the command ends once the server is inside its imports
        "    if marker.exists():\n"
        "        sys.exit(2)\n"
        "    time.sleep(0.1)\n"
        "sys.exit(3)\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=45)
    assert proc.returncode == 2, proc.stderr  # 3: the server never reached its imports

"""A fork server ends without tearing down what it imported (benchdb.harness.server_exit): once the
module is imported, the process's exit flushes its output and leaves before any exit handler
registered earlier runs. Run in a child process, since importing it ends its importer that way."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytestmark = pytest.mark.core

CODE = """
import atexit, sys
atexit.register(lambda: print("teardown ran", flush=True))
import benchdb.harness.server_exit
print("buffered output", end="")
sys.stderr.write("buffered error")
sys.exit(3)
"""


def test_the_exit_flushes_and_leaves_before_the_earlier_exit_handlers():
    proc = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, timeout=60)
    assert (proc.stdout, proc.stderr) == ("buffered output", "buffered error")
    assert proc.returncode == 0  # os._exit(0): what the server leaves behind is not an error

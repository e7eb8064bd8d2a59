"""Imported last by a backend's fork server (:func:`benchdb.harness.isolation.preload_modules`): the
server ends without tearing down what it imported.

A fork server holds torch and transformers (or another backend's libraries) and computes nothing.
When the run ends it gets end-of-file on its pipe and exits; Python's teardown of those libraries
then took ~0.5 s, during which the server still held the run's output pipes (a shell's ``$(...)``
or a CI log waited for it). Its last exit handler (the first to run) flushes and leaves at once.
"""

from __future__ import annotations

import atexit
import os
import sys


def _leave() -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError, AttributeError):
            pass
    os._exit(0)


atexit.register(_leave)

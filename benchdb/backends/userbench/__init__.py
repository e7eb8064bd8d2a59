"""The userbench backend: Your own bench_* functions (benchdb run --bench PATH).

This module is what the ``benchdb.backends`` entry point loads; it imports nothing heavy.
The implementation is :mod:`benchdb.backends.userbench.backend`.
"""

from __future__ import annotations

from benchdb.backends.protocol import BackendInfo
from benchdb.backends.userbench.options import UserbenchOptions

BACKEND = BackendInfo(
    "userbench",
    "benchdb",
    "benchdb.bench",
    "reinstall benchdb",
    "benchdb.backends.userbench.backend",
    devices=("cpu",),
    modes=("eager",),
    option_set=UserbenchOptions,
    summary="Your own bench_* functions (benchdb run --bench PATH)",
)

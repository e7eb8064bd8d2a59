"""The numpy backend: Float matrix products (matmul:N), no ML library needed.

This module is what the ``benchdb.backends`` entry point loads; it imports nothing heavy.
The implementation is :mod:`benchdb.backends.numpy.backend`.
"""

from __future__ import annotations

from benchdb.backends.numpy.options import NumpyOptions
from benchdb.backends.protocol import BackendInfo

BACKEND = BackendInfo(
    "numpy",
    "numpy",
    "numpy",
    "pip install numpy",
    "benchdb.backends.numpy.backend",
    devices=("cpu",),
    modes=("eager",),
    option_set=NumpyOptions,
    summary="Float matrix products (matmul:N), no ML library needed",
)

"""The numpy backend's typed option set: part of every scenario's identity."""

from __future__ import annotations

from dataclasses import dataclass

from benchdb.backends.protocol import BackendOptions


@dataclass(frozen=True)
class NumpyOptions(BackendOptions):
    pass

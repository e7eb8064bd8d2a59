"""The userbench backend's typed option set: part of every scenario's identity."""

from __future__ import annotations

from dataclasses import dataclass

from benchdb.backends.protocol import BackendOptions


@dataclass(frozen=True)
class UserbenchOptions(BackendOptions):
    #: The environment variables a user bench declares (module-level ``ENV = [...]``) with their
    #: values, as canonical JSON text: names sorted, null when unset (``{"BENCH_SCALE":"2"}``).
    #: None (left out) when it declares none. Another value is another scenario.
    env: str | None = None

"""What ``benchdb hardware`` says about this machine: its CPU, memory, devices, energy counters,
topology and how ``--parallel`` would split it, the installed backends and libraries; or this
machine as a system in the form of a hardware file."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from benchdb.harness import energy, hardware, topology
from benchdb.schema import system


def report(backends: Iterable[Any]) -> dict[str, Any]:
    """This machine, the given backends (the registry's) and libraries, CPU energy and topology
    (JSON-plain). The caller passes the backends: the harness knows no backend by name."""
    rep = hardware.report(backends)
    probe = energy.probe()
    rep["cpu_energy"] = {"status": "available" if probe.available else "unavailable", "detail": probe.detail}
    topo = topology.read()
    auto = topology.split(topo, topology.auto_workers(topo, None))
    rep["topology"] = {**topo.as_dict(), "parallel_auto": [s.record() for s in auto]}
    return rep


def check_threads(runs: Iterable[Any]) -> None:
    """Refuse runs (RunOptions) whose --threads this machine cannot give (hardware.check_threads)."""
    for opts in runs:
        if opts.threads:
            hardware.check_threads(opts.threads)


def as_hardware_file() -> str:
    """This machine as a system, in YAML (``--hardware-file`` of ``run --url`` and ``import``)."""
    import yaml

    return yaml.safe_dump(system.describe(hardware.this_system()), sort_keys=False).rstrip()

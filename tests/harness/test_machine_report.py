"""benchdb.harness.machine_report: what `benchdb hardware` says of this machine (its facts, CPU energy,
topology and the --parallel auto split, the backends it is given), --threads refused past this
machine's CPUs, and this machine as a hardware file whose system has the machine's own id. The
command's printing is tests/cli/test_cli.py's."""

from __future__ import annotations

import os

import pytest

from benchdb.backends import registry
from benchdb.errors import BenchdbError
from benchdb.harness import hardware, machine_report, topology
from benchdb.harness.scenario import RunOptions
from benchdb.schema import identity, system


@pytest.mark.core
def test_this_machine_printed_as_a_hardware_file_keeps_its_own_id(tmp_path):
    (tmp_path / "me.yaml").write_text(machine_report.as_hardware_file())
    rec = system.load(tmp_path / "me.yaml")
    native = hardware.device_fingerprint("cpu")
    assert rec["cpu_model"] == native["cpu_model"] and rec["accelerators_per_node"] == 0
    assert identity.hardware_id(rec) == identity.hardware_id(native)


def test_the_report_adds_energy_and_topology_to_the_machines_facts():
    backends = [registry.info("numpy")]
    rep = machine_report.report(backends)
    assert [b["name"] for b in rep["backends"]] == ["numpy"] and rep["backends"][0]["status"] == "available"
    assert rep["cpu"]["cores_logical"] >= 1 and rep["cpu_energy"]["status"] in ("available", "unavailable")
    assert rep["cpu_energy"]["detail"]
    topo = topology.read()
    assert rep["topology"]["logical_cpus"] == len(topo.cpus) == len(os.sched_getaffinity(0))
    auto = rep["topology"]["parallel_auto"]
    assert len(auto) == topology.auto_workers(topo, None) and all(set(w) >= {"cpus", "physical_cores"} for w in auto)


@pytest.mark.core
def test_threads_beyond_this_machines_cpus_are_refused():
    cpus = len(os.sched_getaffinity(0))
    machine_report.check_threads([RunOptions("numpy", (), threads=cpus), RunOptions("numpy", ())])
    with pytest.raises(BenchdbError, match=rf"^--threads {cpus + 1}: this machine lets benchdb run on {cpus} "):
        machine_report.check_threads([RunOptions("numpy", (), threads=1), RunOptions("numpy", (), threads=cpus + 1)])

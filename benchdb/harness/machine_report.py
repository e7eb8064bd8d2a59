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


def as_text(rep: dict[str, Any]) -> str:
    """:func:`report` for a person (`benchdb hardware`): host, CPU, memory, topology and how
    --parallel splits it, devices, energy counters, load, and each backend's and library's version
    or how to make it available."""
    out: list[str] = []
    cpu = rep["cpu"]
    out.append(f"host      {rep['host']} (Python {rep['python']}, {cpu['os']}, {cpu['arch']})")
    out.append(
        f"cpu       {cpu['cpu_model']} ({cpu['cores_physical']} physical / "
        f"{cpu['cores_logical']} logical cores; {', '.join(cpu['flags']) or 'no'} extensions)"
    )
    out.append(f"memory    {cpu['memory_bytes'] / 2**30:.1f} GiB")
    t = rep["topology"]
    nodes = "; ".join(f"node {n}: cpus {c}" for n, c in t["numa_nodes"].items()) or "no NUMA information"
    out.append(f"topology  cpus {t['cpus']} ({t['physical_cores']} physical cores); {nodes}")
    out.append(
        f"parallel  auto: {len(t['parallel_auto'])} worker(s) on cores "
        f"{', '.join(s['cpus'] for s in t['parallel_auto'])}; --threads T: as many T-core workers as fit "
        f"(--parallel {t['physical_cores']} --threads 1 at most here)"
    )
    if rep["accelerators"]:
        for acc in rep["accelerators"]:
            mem = f", {acc['memory_bytes'] / 2**30:.0f} GiB" if acc["memory_bytes"] else ""
            out.append(f"device    {acc['device']}: {acc['name']} ({acc['kind']}{mem})")
    else:
        out.append("device    cpu only (no CUDA, ROCm, MPS or XPU device visible to PyTorch)")
    tel = rep["nvidia_telemetry"]
    out.append(f"nvidia    telemetry {tel['status']}: {tel['detail']}")
    out.append(f"energy    cpu {rep['cpu_energy']['status']}: {rep['cpu_energy']['detail']}")
    if rep["load_avg_1m"] is not None:
        out.append(f"load      {rep['load_avg_1m']:.2f} (1-min average)")
    for title, items in (("backends", rep["backends"]), ("libraries", rep["libraries"])):
        out.append(f"{title}:")
        for b in items:
            out.append(f"  {b['name']:<16} {availability_text(b)}")
    return "\n".join(out)


def availability_text(b: dict) -> str:
    """A backend's or library's line of `benchdb hardware`: its version, or that it is unavailable
    (and why, when a probe said) and the command that makes it available."""
    if b["status"] != "available":
        why = f": {b['reason']}" if b.get("reason") else ""
        return f"unavailable{why} - to make it available: {b['hint']}"
    if "uses" in b:  # named: openai's version is httpx's, ort-web's is onnxruntime-web's
        return ", ".join(f"{name} {version or '(not installed)'}" for name, version in b["uses"].items())
    return b["version"]

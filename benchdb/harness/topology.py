"""This machine's cores, NUMA nodes and devices, and how `benchdb run --parallel` splits them.

Concurrency is only safe on disjoint resources: two scenarios on the same core (or on two hardware
threads of one core) slow each other down. A CPU worker therefore gets whole physical cores (every
hardware thread of them), taken node by node so a worker stays inside one NUMA node whenever the
split allows; a GPU worker gets one device. Two core sets are *equivalent* when they have as many
physical cores and hardware threads, span as many nodes, and their cores run at the same maximum
frequencies: a result measured on one is the same scenario as one measured on the other. Each
result records its set, its nodes and that equivalence class.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path

from benchdb.errors import BenchdbError


def cpu_list(text: str) -> list[int]:
    """Linux's cpulist format ("0-3,8,10-11") as numbers."""
    out: list[int] = []
    for part in text.strip().split(","):
        if not part:
            continue
        lo, _, hi = part.partition("-")
        out += list(range(int(lo), int(hi or lo) + 1))
    return out


def cpu_text(cpus) -> str:
    """Numbers as a cpulist ("0-3,8")."""
    cpus = sorted(cpus)
    parts, i = [], 0
    while i < len(cpus):
        j = i
        while j + 1 < len(cpus) and cpus[j + 1] == cpus[j] + 1:
            j += 1
        parts.append(str(cpus[i]) if i == j else f"{cpus[i]}-{cpus[j]}")
        i = j + 1
    return ",".join(parts)


@dataclass(frozen=True)
class Core:
    """One physical core: its hardware threads (logical CPUs), node and maximum frequency."""

    cpus: tuple[int, ...]
    node: int
    max_khz: int | None


@dataclass
class Topology:
    cores: list[Core]  # the cores this process may run on, node by node
    nodes: dict[int, list[int]] = field(default_factory=dict)  # node -> its allowed logical CPUs

    @property
    def cpus(self) -> list[int]:
        return sorted(c for core in self.cores for c in core.cpus)

    def as_dict(self) -> dict:
        return {
            "cpus": cpu_text(self.cpus),
            "physical_cores": len(self.cores),
            "logical_cpus": len(self.cpus),
            "numa_nodes": {str(n): cpu_text(c) for n, c in sorted(self.nodes.items())},
        }


def read(sys_root: str | os.PathLike = "/sys", allowed: set[int] | None = None) -> Topology:
    """The cores this process may run on (its affinity), grouped by physical core and NUMA node."""
    root = Path(sys_root)
    if allowed is None:
        allowed = set(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else set(range(os.cpu_count() or 1))
    node_of: dict[int, int] = {}
    for node_dir in sorted((root / "devices/system/node").glob("node[0-9]*")):
        try:
            for c in cpu_list((node_dir / "cpulist").read_text()):
                node_of[c] = int(node_dir.name[4:])
        except (OSError, ValueError):
            continue
    seen: set[int] = set()
    cores: list[Core] = []
    for cpu in sorted(allowed):
        if cpu in seen:
            continue
        cpu_dir = root / f"devices/system/cpu/cpu{cpu}"
        try:
            siblings = cpu_list((cpu_dir / "topology/thread_siblings_list").read_text())
        except (OSError, ValueError):
            siblings = [cpu]
        group = tuple(c for c in siblings if c in allowed) or (cpu,)
        seen.update(group)
        try:
            khz: int | None = int((cpu_dir / "cpufreq/cpuinfo_max_freq").read_text())
        except (OSError, ValueError):
            khz = None
        cores.append(Core(group, node_of.get(cpu, 0), khz))
    cores.sort(key=lambda c: (c.node, c.cpus))
    nodes: dict[int, list[int]] = {}
    for core in cores:
        nodes.setdefault(core.node, []).extend(core.cpus)
    return Topology(cores, nodes)


@dataclass(frozen=True)
class CpuSet:
    """The cores one worker runs on."""

    cpus: tuple[int, ...]
    cores: int  # physical cores
    nodes: tuple[int, ...]
    max_khz: tuple[int | None, ...]  # per core, sorted

    @property
    def text(self) -> str:
        return cpu_text(self.cpus)

    @property
    def equivalence(self) -> str:
        """Equal for sets a scenario measures alike on: same core and thread counts, node count and
        core frequencies (a big core and a small one are not equivalent)."""
        sig = f"{self.cores}|{len(self.cpus)}|{len(self.nodes)}|{','.join(str(k) for k in self.max_khz)}"
        return hashlib.sha256(sig.encode()).hexdigest()[:12]

    def record(self) -> dict:
        return {
            "cpus": self.text,
            "physical_cores": self.cores,
            "numa_nodes": list(self.nodes),
            "equivalence": self.equivalence,
        }


def split(topo: Topology, workers: int, per: int | None = None) -> list[CpuSet]:
    """``workers`` disjoint sets of whole physical cores, ``per`` cores each (default: all of them
    shared out evenly), taken node by node (a set stays within one node when the split allows).
    One line when the cores are too few."""
    if workers < 1:
        raise BenchdbError(f"--parallel {workers}: give at least 1 worker")
    if per is not None and workers * per > len(topo.cores):
        raise BenchdbError(
            f"--parallel {workers} --threads {per}: {workers} workers of {per} physical core(s) "
            f"need {workers * per}; this process may run on {len(topo.cores)} "
            f"({topo.as_dict()['cpus']}), so they would share cores; give fewer workers or threads"
        )
    per = per or len(topo.cores) // workers
    if per < 1:
        raise BenchdbError(
            f"--parallel {workers}: this process may run on {len(topo.cores)} physical core(s) "
            f"({topo.as_dict()['cpus']}), so {workers} workers would share cores; give at most "
            f"{len(topo.cores)}"
        )
    out = []
    for w in range(workers):
        chunk = topo.cores[w * per : (w + 1) * per]
        out.append(
            CpuSet(
                tuple(sorted(c for core in chunk for c in core.cpus)),
                len(chunk),
                tuple(sorted({core.node for core in chunk})),
                tuple(sorted((core.max_khz for core in chunk), key=lambda k: (k is None, k or 0))),
            )
        )
    return out


def auto_workers(topo: Topology, threads: int | None) -> int:
    """`--parallel auto`: with --threads T, as many workers of T cores as fit; else one per NUMA node."""
    if threads:
        return max(1, len(topo.cores) // threads)
    return max(1, len(topo.nodes))


#: The variable that gives a worker its one device, per device kind.
DEVICE_ENV = {"cuda": "CUDA_VISIBLE_DEVICES", "rocm": "HIP_VISIBLE_DEVICES", "xpu": "ZE_AFFINITY_MASK"}


def device_workers(kind: str, indices: list[int], workers: int | None) -> list[dict[str, str]]:
    """One worker per device: the environment that shows it only that device (its index 0 then)."""
    var = DEVICE_ENV.get(kind)
    if var is None:
        raise BenchdbError(
            f"--parallel on device {kind!r}: parallel workers need disjoint devices "
            f"({', '.join(DEVICE_ENV)}) or CPU cores"
        )
    if not indices:
        raise BenchdbError(f"--parallel: no {kind} device is visible")
    n = len(indices) if workers is None else workers
    if n > len(indices):
        raise BenchdbError(
            f"--parallel {n}: {len(indices)} {kind} device(s) visible; two workers would share "
            f"one; give at most {len(indices)}"
        )
    return [{var: str(i)} for i in indices[:n]]

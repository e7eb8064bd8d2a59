"""What this machine has: CPU fingerprint, memory, installed backends and their versions.

Backend presence is read from package metadata, so this module imports no backend.
"""

from __future__ import annotations

import importlib.metadata as md
import importlib.util
import os
import platform
import socket
import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Protocol

import psutil

from benchdb.errors import BenchdbError
from benchdb.harness.cpuinfo import fingerprint_from, mac_brand_string, read_cpuinfo


class Installable(Protocol):
    """Something a package provides: a backend (:class:`benchdb.backends.protocol.BackendInfo`) or a
    :class:`Library`."""

    @property
    def name(self) -> str: ...
    @property
    def package(self) -> str: ...  # the distribution it needs
    @property
    def module(self) -> str: ...  # the module it imports
    @property
    def hint(self) -> str: ...  # how to install it
    @property
    def probe(self) -> str: ...  # "module:function" checking what the package alone does not tell, or ""


@dataclass(frozen=True)
class Library:
    name: str
    package: str
    module: str
    hint: str
    probe: str = ""


#: PyTorch as the probe of accelerators (the pytorch backend's metadata is its own).
_TORCH = Library("torch", "torch", "torch", "pip install torch")
#: Other libraries benchdb uses when present.
LIBRARIES: dict[str, Library] = {
    "transformers": Library("transformers", "transformers", "transformers", "pip install 'benchdb[torch]'"),
    "nvidia-ml-py": Library("nvidia-ml-py", "nvidia-ml-py", "pynvml", "pip install 'benchdb[nvidia]'"),
    "huggingface_hub": Library("huggingface_hub", "huggingface_hub", "huggingface_hub", "pip install 'benchdb[hub]'"),
    "matplotlib": Library("matplotlib", "matplotlib", "matplotlib", "pip install 'benchdb[plots]'"),
}


def package_version(package: str) -> str | None:
    try:
        return md.version(package)
    except md.PackageNotFoundError:
        return None


def availability(info: Installable, install: bool = False) -> dict:
    """installed / unavailable with version or install hint, without importing the module.
    ``install``: let the backend's probe fetch what it can fetch itself (``benchdb run``)."""
    version = package_version(info.package)
    if version is None or importlib.util.find_spec(info.module) is None:
        return {"name": info.name, "status": "unavailable", "version": None, "hint": info.hint}
    if info.probe:
        module, _, function = info.probe.partition(":")
        lack = getattr(importlib.import_module(module), function)(install)
        if lack:
            return {"name": info.name, "status": "unavailable", "version": version, "hint": lack[1], "reason": lack[0]}
    return {"name": info.name, "status": "available", "version": version, "hint": None}


@lru_cache(maxsize=1)
def cpu_fingerprint() -> dict:
    """The hardware fingerprint of this machine's CPU (contract metadata.hardware). Also records
    the CPUs this process may use (affinity, cgroup quota): not part of the hardware's identity."""
    system = platform.system()
    fp = fingerprint_from(
        read_cpuinfo() if system == "Linux" else {},
        system=system,
        machine=platform.machine(),
        release=platform.release(),
        mac_brand=mac_brand_string() if system == "Darwin" else None,
    )
    fp.update(
        {
            "cores_physical": psutil.cpu_count(logical=False),
            "cores_logical": psutil.cpu_count(logical=True),
            "memory_bytes": psutil.virtual_memory().total,
            "cpu_affinity": len(_affinity()),
            "cgroup_cpu_quota": cgroup_cpu_quota(),
        }
    )
    # the host as a system describes it (benchdb hardware --format yaml): recorded, not identity
    fp.update({"cpu_sockets": _sockets(), "host_memory_bytes": fp["memory_bytes"]})
    return fp


def _affinity() -> set[int]:
    try:
        return os.sched_getaffinity(0)
    except (AttributeError, OSError):
        return set(range(os.cpu_count() or 1))


def check_threads(threads: int, cpus: int | None = None) -> None:
    """Refuse a thread count above the logical CPUs this process may run on: its threads would take
    turns on the cores, and the result would time that contention under the backend's name.
    ``cpus`` overrides what is read from this machine."""
    cpus = cpus or len(_affinity())
    if threads > cpus:
        raise BenchdbError(
            f"--threads {threads}: this machine lets benchdb run on {cpus} logical CPU(s); give at most {cpus} "
            "(more threads than CPUs measures their contention, not the backend)"
        )


def cgroup_cpu_quota(root: str = "/sys/fs/cgroup") -> float | None:
    """CPUs this process's cgroup may use (cgroup v2 ``cpu.max``, else v1 ``cfs_quota/period``);
    None when unlimited or unknown."""
    try:
        with open(os.path.join(root, "cpu.max"), encoding="ascii") as fh:
            quota, _, period = fh.read().strip().partition(" ")
        if quota != "max":
            return int(quota) / int(period or 100000)
        return None
    except (OSError, ValueError):
        pass
    try:
        with open(os.path.join(root, "cpu", "cpu.cfs_quota_us"), encoding="ascii") as fh:
            quota_us = int(fh.read().strip())
        with open(os.path.join(root, "cpu", "cpu.cfs_period_us"), encoding="ascii") as fh:
            period_us = int(fh.read().strip())
        return quota_us / period_us if quota_us > 0 and period_us > 0 else None
    except (OSError, ValueError):
        return None


def default_threads(*, physical: int | None = None, affinity: int | None = None, quota: float | None = None) -> int:
    """The thread count runners fix and record when none is given: physical cores (logical when
    unknown), but never more than the CPUs this process may run on (affinity) or its cgroup's CPU
    quota (rounded down, at least 1). Arguments override what is read from this machine."""
    physical = physical or psutil.cpu_count(logical=False) or os.cpu_count() or 1
    affinity = affinity or len(_affinity())
    quota = quota if quota is not None else cgroup_cpu_quota()
    limit = min(physical, affinity)
    if quota:
        limit = min(limit, max(1, int(quota)))
    return max(1, limit)


def device_fingerprint(device: str) -> dict:
    """The hardware fingerprint of a device in canonical form (benchdb.schema.identity):
    cpu; cuda:N / rocm:N / mps / xpu:N read through PyTorch; other accelerators that only an
    engine can address (dml, coreml, npu, gpu) get a fingerprint naming their family, with the
    host CPU beside it, so they are never filed under the CPU's name."""
    cpu = cpu_fingerprint()
    family, _, index_text = device.partition(":")
    if family == "cpu":
        return cpu
    index = int(index_text) if index_text.isdigit() else 0
    common = {
        k: cpu[k]
        for k in ("cpu_model", "cpu_sockets", "cores_logical", "cores_physical", "host_memory_bytes", "arch", "os")
    }
    if family in ("cuda", "rocm", "mps", "xpu") and availability(_TORCH)["status"] == "available":
        import torch

        if family in ("cuda", "rocm") and torch.cuda.is_available():
            props = torch.cuda.get_device_properties(index)
            from benchdb.harness.monitors import nvml_status

            ok, text = nvml_status()
            driver = text.rsplit("driver ", 1)[-1] if ok else None
            rocm = family == "rocm"
            return {
                "kind": family,
                "vendor": "AMD" if rocm else "NVIDIA",
                "device_name": props.name,
                "memory_bytes": int(props.total_memory),
                "compute_capability": getattr(props, "gcnArchName", None) if rocm else f"{props.major}.{props.minor}",
                "driver": driver or (torch.version.hip if rocm else torch.version.cuda),
                **common,
            }
        if family == "mps":
            return {
                "kind": "mps",
                "vendor": "Apple",
                "device_name": f"Apple GPU ({platform.machine()})",
                "memory_bytes": cpu["memory_bytes"],
                "driver": platform.mac_ver()[0] or None,
                **common,
            }
        if family == "xpu" and hasattr(torch, "xpu") and torch.xpu.is_available():
            return {
                "kind": "xpu",
                "vendor": "Intel",
                "device_name": torch.xpu.get_device_name(index),
                "memory_bytes": None,
                "driver": None,
                **common,
            }
    names = {
        "dml": ("gpu", None, "DirectML GPU"),
        "coreml": ("npu", "Apple", "Apple Neural Engine (CoreML)"),
        "npu": ("npu", None, "NPU"),
        "gpu": ("gpu", None, "GPU"),
    }
    kind, vendor, name = names.get(family, (family, None, family.upper()))
    return {
        "kind": kind,
        "vendor": vendor,
        "device_name": f"{name} {index}" if index_text else name,
        "memory_bytes": None,
        "driver": None,
        **common,
    }


def declared(name: str) -> dict:
    """The fingerprint of hardware known only by the name a user gave it (a server at ``--url``,
    an imported result's ``--hardware``): one name, one hardware id, on every machine."""
    return {
        "kind": "remote",
        "vendor": None,
        "device_name": name.strip().lower(),
        "memory_bytes": None,
        "driver": None,
        "declared": True,
    }


def host() -> str:
    return socket.gethostname()


def git_commit(cwd: str | None = None) -> str | None:
    """HEAD of the git repository around ``cwd`` (with ``-dirty`` when modified), else None."""
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True, timeout=5)
        if head.returncode != 0:
            return None
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"], cwd=cwd, capture_output=True, text=True, timeout=5
        )
        return head.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return None


#: The process whose tree is benchdb's own (set by the command line for its children); else this process.
ROOT_ENV = "BENCHDB_ROOT_PID"


def accelerators() -> list[dict]:
    """Devices PyTorch can use here (imports torch only when it is installed)."""
    if availability(_TORCH)["status"] != "available":
        return []
    import torch

    out = []
    if torch.cuda.is_available():
        kind = "rocm" if getattr(torch.version, "hip", None) else "cuda"
        for i in range(torch.cuda.device_count()):
            props = torch.cuda.get_device_properties(i)
            out.append(
                {
                    "device": f"cuda:{i}",
                    "kind": kind,
                    "name": props.name,
                    "memory_bytes": int(props.total_memory),
                    "fingerprint": device_fingerprint(f"{kind}:{i}"),
                }
            )
    if hasattr(torch.backends, "mps") and torch.backends.mps.is_available():
        out.append({"device": "mps", "kind": "mps", "name": "Apple GPU", "memory_bytes": None})
    if hasattr(torch, "xpu") and torch.xpu.is_available():
        for i in range(torch.xpu.device_count()):
            out.append(
                {"device": f"xpu:{i}", "kind": "xpu", "name": torch.xpu.get_device_name(i), "memory_bytes": None}
            )
    return out


def _sockets(text: str | None = None) -> int | None:
    """Distinct ``physical id`` values of /proc/cpuinfo (or of ``text``): the CPU sockets."""
    if text is None:
        try:
            with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
                text = fh.read()
        except OSError:
            return None
    ids = {line.split(":", 1)[1].strip() for line in text.splitlines() if line.startswith("physical id")}
    return len(ids) or None


def this_system(accels: list[dict] | None = None) -> dict:
    """This machine as a system (benchdb.schema.system): its first accelerator and how many of that
    model it has, else its CPU; the host CPU, sockets and memory."""
    cpu = cpu_fingerprint()
    accels = accelerators() if accels is None else accels
    host = {
        **{
            k: cpu[k]
            for k in ("cpu_model", "cpu_sockets", "cores_physical", "cores_logical", "host_memory_bytes", "arch", "os")
        },
        "nodes": 1,
    }
    if not accels:
        return {k: v for k, v in {**cpu, **host, "accelerators_per_node": 0}.items() if v is not None}
    first = accels[0]
    same = [a for a in accels if a.get("name") == first.get("name")]
    fp = first.get("fingerprint") or {
        "kind": first.get("kind"),
        "device_name": first.get("name"),
        "memory_bytes": first.get("memory_bytes"),
    }
    return {k: v for k, v in {**fp, **host, "accelerators_per_node": len(same)}.items() if v is not None}


def report(backends: Iterable[Installable]) -> dict:
    """Everything ``benchdb hardware`` prints, with the availability of the given backends."""
    import sys

    from benchdb.harness.monitors import nvml_status

    ok, why = nvml_status()
    return {
        "accelerators": accelerators(),
        "nvidia_telemetry": {"status": "available" if ok else "unavailable", "detail": why},
        "host": host(),
        "python": sys.version.split()[0],
        "cpu": cpu_fingerprint(),
        "load_avg_1m": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
        "backends": [{**availability(b), "uses": uses(b)} for b in backends],
        "libraries": [availability(b) for b in LIBRARIES.values()],
    }


def uses(info: Installable) -> dict[str, str | None]:
    """What a backend measures with, by name, with versions: its own ``uses`` function where it has
    one (ort-web: onnxruntime-web, run by playwright), else the package it needs (openai: httpx)."""
    function = getattr(info, "uses", "")
    if function:
        module, _, name = function.partition(":")
        return dict(getattr(importlib.import_module(module), name)())
    return {info.package: package_version(info.package)}

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
from dataclasses import dataclass
from functools import lru_cache

import psutil


@dataclass(frozen=True)
class BackendInfo:
    name: str            # benchdb's backend name
    package: str         # the distribution it needs
    module: str          # the module it imports
    hint: str            # how to install it


BACKENDS: dict[str, BackendInfo] = {
    "numpy": BackendInfo("numpy", "numpy", "numpy", "pip install numpy"),
    "pytorch": BackendInfo("pytorch", "torch", "torch", "pip install 'benchdb[torch]' torch==2.13.0"),
    "onnxruntime": BackendInfo("onnxruntime", "onnxruntime", "onnxruntime", "pip install 'benchdb[onnx]'"),
    "openvino": BackendInfo("openvino", "openvino", "openvino", "pip install 'benchdb[openvino]'"),
}
#: Other libraries benchdb uses when present.
LIBRARIES: dict[str, BackendInfo] = {
    "transformers": BackendInfo("transformers", "transformers", "transformers", "pip install 'benchdb[torch]'"),
    "nvidia-ml-py": BackendInfo("nvidia-ml-py", "nvidia-ml-py", "pynvml", "pip install 'benchdb[nvidia]'"),
    "huggingface_hub": BackendInfo("huggingface_hub", "huggingface_hub", "huggingface_hub",
                                   "pip install 'benchdb[hub]'"),
    "matplotlib": BackendInfo("matplotlib", "matplotlib", "matplotlib", "pip install 'benchdb[plots]'"),
}


def package_version(package: str) -> str | None:
    try:
        return md.version(package)
    except md.PackageNotFoundError:
        return None


def availability(info: BackendInfo) -> dict:
    """installed / unavailable with version or install hint, without importing the module."""
    version = package_version(info.package)
    if version is None or importlib.util.find_spec(info.module) is None:
        return {"name": info.name, "status": "unavailable", "version": None, "hint": info.hint}
    return {"name": info.name, "status": "available", "version": version, "hint": None}


def _cpuinfo() -> dict[str, str]:
    out: dict[str, str] = {}
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if ":" in line:
                    k, v = line.split(":", 1)
                    out.setdefault(k.strip(), v.strip())
    except OSError:
        pass
    return out


@lru_cache(maxsize=1)
def cpu_fingerprint() -> dict:
    """The hardware fingerprint of this machine's CPU (contract metadata.hardware)."""
    info = _cpuinfo()
    model = info.get("model name") or info.get("Processor") or platform.processor() or platform.machine()
    vendor = info.get("vendor_id") or info.get("CPU implementer") or None
    return {
        "kind": "cpu",
        "vendor": vendor,
        "device_name": model,
        "cpu_model": model,
        "cores_physical": psutil.cpu_count(logical=False),
        "cores_logical": psutil.cpu_count(logical=True),
        "memory_bytes": psutil.virtual_memory().total,
        "arch": platform.machine(),
        "os": f"{platform.system()} {platform.release()}",
        "flags": sorted(set(info.get("flags", "").split()) & {"avx2", "avx512f", "amx_tile", "amx_bf16",
                                                               "avx512_bf16", "avx512_vnni", "fma"}),
        "driver": None,
    }


def default_threads() -> int:
    """Physical cores (or logical when unknown): the thread count runners fix and record."""
    return psutil.cpu_count(logical=False) or os.cpu_count() or 1


def host() -> str:
    return socket.gethostname()


def git_commit(cwd: str | None = None) -> str | None:
    """HEAD of the git repository around ``cwd`` (with ``-dirty`` when modified), else None."""
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=cwd, capture_output=True, text=True,
                              timeout=5)
        if head.returncode != 0:
            return None
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=cwd,
                               capture_output=True, text=True, timeout=5)
        return head.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return None


def background_cpu_pct(interval_s: float = 0.2) -> float:
    """CPU use by everything else while this process idles for ``interval_s`` (0-100, all cores).

    A 1-minute load average also counts this process's own previous scenarios; this does not.
    """
    return float(psutil.cpu_percent(interval=interval_s))


def accelerators() -> list[dict]:
    """Devices PyTorch can use here (imports torch only when it is installed)."""
    if availability(BACKENDS["pytorch"])["status"] != "available":
        return []
    import torch

    out = []
    if torch.cuda.is_available():
        kind = "rocm" if getattr(torch.version, "hip", None) else "cuda"
        for i in range(torch.cuda.device_count()):
            props = torch.cuda.get_device_properties(i)
            out.append({"device": f"cuda:{i}", "kind": kind, "name": props.name,
                        "memory_bytes": int(props.total_memory)})
    if hasattr(torch.backends, "mps") and torch.backends.mps.is_available():
        out.append({"device": "mps", "kind": "mps", "name": "Apple GPU", "memory_bytes": None})
    if hasattr(torch, "xpu") and torch.xpu.is_available():
        for i in range(torch.xpu.device_count()):
            out.append({"device": f"xpu:{i}", "kind": "xpu", "name": torch.xpu.get_device_name(i),
                        "memory_bytes": None})
    return out


def report() -> dict:
    """Everything ``benchdb hardware`` prints."""
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
        "backends": [availability(b) for b in BACKENDS.values()],
        "libraries": [availability(b) for b in LIBRARIES.values()],
    }

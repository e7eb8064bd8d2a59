"""PyTorch's devices as the pytorch backend sees them: torch imported only when needed (its build
read without importing it), a precision's dtype, the device kinds and their checks, and how a call
on each is synchronised and timed."""

from __future__ import annotations

import time
from collections.abc import Callable

from benchdb.errors import BenchdbError
from benchdb.harness.timing import HostTimer


def import_torch():
    import torch

    return torch


def dtype_of(precision: str):
    torch = import_torch()
    # int8 keeps fp32 activations: dynamic quantization quantizes them inside each Linear
    return {
        "fp32": torch.float32,
        "fp16": torch.float16,
        "bf16": torch.bfloat16,
        "int8": torch.float32,
        "int4": torch.float32,
    }[precision]


def torch_build() -> dict[str, str | None]:
    """``__version__``, ``cuda`` and ``hip`` of the installed torch, read from its ``version.py``
    without importing torch: the planning process never measures, and importing torch there cost
    ~1 s of CPU beside the fork server's own import and ~0.5 s more at exit. ImportError when torch
    is not installed or its build record cannot be read."""
    import ast
    import importlib.util
    from pathlib import Path

    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("No module named 'torch'")
    try:
        tree = ast.parse((Path(next(iter(spec.submodule_search_locations))) / "version.py").read_text("utf-8"))
    except (OSError, SyntaxError, ValueError) as exc:
        raise ImportError(f"torch's version.py cannot be read ({exc})") from None
    found: dict[str, str | None] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign):
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            target, value = node.target, node.value
        else:
            continue
        if isinstance(target, ast.Name) and target.id in ("__version__", "cuda", "hip"):
            try:
                found[target.id] = ast.literal_eval(value)
            except ValueError:
                pass
    if "__version__" not in found:
        raise ImportError("torch's version.py names no __version__")
    return found


def device_kind(device: str) -> str:
    """cpu / cuda / rocm / mps / xpu: ROCm builds use torch's cuda device but are recorded as rocm."""
    base = device.split(":")[0]
    if base == "cuda" and getattr(import_torch().version, "hip", None):
        return "rocm"
    return base


def check_device(device: str) -> None:
    base = device.split(":")[0]
    if base == "cpu":  # (no torch import in the planning process for the CPU)
        return
    torch = import_torch()
    ok = {
        "cpu": lambda: True,
        "cuda": torch.cuda.is_available,
        "mps": lambda: hasattr(torch.backends, "mps") and torch.backends.mps.is_available(),
        "xpu": lambda: hasattr(torch, "xpu") and torch.xpu.is_available(),
    }.get(base)
    if ok is None:
        raise BenchdbError(f"device {device!r} is not one PyTorch knows; use cpu, cuda[:i], mps or xpu")
    if not ok():
        raise BenchdbError(
            f"device {device} is not available on this machine (torch {torch.__version__}); "
            "see `benchdb hardware`, or use --device cpu"
        )
    if base in ("cuda", "xpu") and ":" in device:
        count = torch.cuda.device_count() if base == "cuda" else torch.xpu.device_count()
        if int(device.split(":")[1]) >= count:
            raise BenchdbError(f"device {device} does not exist: this machine has {count} {base} device(s)")


def sync_for(device) -> Callable[[], object] | None:
    """The synchronisation of an asynchronous device (None for the CPU)."""
    torch = import_torch()
    if device.type == "cuda":
        return lambda: torch.cuda.synchronize(device)
    if device.type == "mps":
        return torch.mps.synchronize
    if device.type == "xpu":
        return lambda: torch.xpu.synchronize(device)
    return None


class CudaEventTimer:
    """Times each call with a pair of CUDA events on the current stream."""

    method = "cuda_events"

    def __init__(self, device) -> None:
        torch = import_torch()
        self.e0 = torch.cuda.Event(enable_timing=True)
        self.e1 = torch.cuda.Event(enable_timing=True)
        self.clock = time.perf_counter

    def start(self) -> float:
        t = self.clock()
        self.e0.record()
        return t

    def stop(self) -> float:
        self.e1.record()
        self.e1.synchronize()
        return self.e0.elapsed_time(self.e1) / 1e3


def timer_for(device):
    """CUDA events on CUDA/ROCm; host clock with the device's synchronisation elsewhere."""
    if device.type == "cuda":
        return CudaEventTimer(device)
    return HostTimer(sync=sync_for(device), device=device.type)

"""The pytorch backend: Hugging Face models in PyTorch, eager, torch.compile or kernelized.

This module is what the ``benchdb.backends`` entry point loads; it imports nothing heavy.
The implementation is :mod:`benchdb.backends.pytorch.backend`.
"""

from __future__ import annotations

from benchdb.backends.protocol import BackendInfo
from benchdb.backends.pytorch.options import OPTIONS, PytorchOptions

#: torch.compile modes (``--mode compile:<mode>``, ``--mode kernels+compile:<mode>``).
COMPILE_MODES = ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")

#: Layers swapped for Hub kernels (the ``kernels`` library), optionally compiled on top.
KERNEL_MODES = ("kernels", "kernels+compile", *(f"kernels+compile:{m}" for m in COMPILE_MODES))

BACKEND = BackendInfo(
    "pytorch",
    "torch",
    "torch",
    "pip install 'benchdb[torch]' torch==2.13.0",
    "benchdb.backends.pytorch.backend",
    devices=("cpu", "cuda", "rocm", "mps", "xpu"),
    option_set=PytorchOptions,
    options=OPTIONS,
    modes=("eager", "compile", *(f"compile:{m}" for m in COMPILE_MODES), *KERNEL_MODES),
    summary="Hugging Face models in PyTorch, eager, torch.compile or kernelized (Hub kernels)",
)

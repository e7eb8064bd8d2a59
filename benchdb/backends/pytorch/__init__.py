"""The pytorch backend: Hugging Face models in PyTorch, eager or torch.compile.

This module is what the ``benchdb.backends`` entry point loads; it imports nothing heavy.
The implementation is :mod:`benchdb.backends.pytorch.backend`.
"""

from __future__ import annotations

from benchdb.backends.api import BackendInfo
from benchdb.backends.pytorch.options import PytorchOptions

#: torch.compile modes (``--mode compile:<mode>``).
COMPILE_MODES = ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")

BACKEND = BackendInfo("pytorch", "torch", "torch", "pip install 'benchdb[torch]' torch==2.13.0",
                      "benchdb.backends.pytorch.backend",
                      devices=('cpu', 'cuda', 'rocm', 'mps', 'xpu'), option_set=PytorchOptions,
                      modes=("eager", "compile", *(f"compile:{m}" for m in COMPILE_MODES)),
                      summary="Hugging Face models in PyTorch, eager or torch.compile")

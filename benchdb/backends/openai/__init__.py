"""The openai backend: OpenAI-compatible LLM endpoints under load (TTFT, ITL, throughput, goodput).

This module is what the ``benchdb.backends`` entry point loads; it imports nothing heavy.
The implementation is :mod:`benchdb.backends.openai.backend`; the load generator, the server
manager and the metric vocabulary are :mod:`benchdb.schema.serving`.
"""

from __future__ import annotations

from benchdb.backends.openai.options import OPTIONS, OpenaiOptions
from benchdb.backends.protocol import BackendInfo

BACKEND = BackendInfo(
    "openai",
    "httpx",
    "httpx",
    "pip install 'benchdb[serving]'",
    "benchdb.backends.openai.backend",
    devices=("cpu", "cuda", "rocm", "remote"),
    modes=("completions", "chat"),
    options=OPTIONS,
    option_set=OpenaiOptions,
    summary="OpenAI-compatible LLM endpoints under load (TTFT, ITL, throughput, goodput)",
)

"""The ort-web backend (:mod:`benchdb.backends.ortweb.backend`) and its browser side: onnxruntime-web files,
the local server, the page and the browser. This module is what the ``benchdb.backends`` entry point
loads: it imports nothing heavy (no playwright, torch or duckdb), so listing backends stays light.
"""

from __future__ import annotations

import sys

from benchdb.backends.ortweb import browser
from benchdb.backends.ortweb.options import OrtwebOptions
from benchdb.backends.protocol import BackendInfo
from benchdb.errors import BackendUnavailable, BenchdbError

TORCH_HINT = "pip install 'benchdb[torch,onnx,web]' torch==2.13.0"


def missing(install: bool = False) -> tuple[str, str] | None:
    """Why the backend cannot run here and the exact command that fixes it, or None.

    Checked without starting a browser: PyTorch and onnx (exports and the fp32 reference), a
    Chromium binary, the onnxruntime-web files. With ``install`` (``benchdb run``), missing
    onnxruntime-web files do not count: :func:`fetch` gets them once the run's options are checked."""
    import importlib.util

    from benchdb.backends.ortweb import assets  # not at import: `python -m ...ortweb.assets` would run it twice

    for module in ("torch", "transformers", "onnx"):
        if importlib.util.find_spec(module) is None:
            return f"{module} is not installed (exports and the PyTorch reference need it)", TORCH_HINT
    if browser.find() is None:
        return "no Chromium browser found (" + ", ".join(browser.NAMES) + ", $BENCHDB_CHROMIUM)", browser.INSTALL
    if assets.missing():
        if install:  # fetched by ortweb.plan once the options are known good (fetch())
            return None
        return (
            f"onnxruntime-web {assets.VERSION} is not in {assets.folder()} yet (`benchdb run --backend "
            f"ort-web` fetches it on first use)",
            assets.INSTALL,
        )
    return None


def fetch() -> None:
    """Fetch missing onnxruntime-web files now (``benchdb run``, after its options were checked)."""
    from benchdb.backends.ortweb import assets

    if assets.missing():
        try:
            assets.install(log=lambda text: print(text, file=sys.stderr))
        except BenchdbError as exc:
            raise BackendUnavailable(f"backend ort-web is unavailable: {exc}") from None


def uses() -> dict[str, str | None]:
    """What it measures with: onnxruntime-web's files (the version benchdb fetches) in a browser driven
    by playwright (``benchdb hardware``; a run records the browser's own version too)."""
    from benchdb.backends.ortweb import assets
    from benchdb.harness.hardware import package_version

    return {"onnxruntime-web": assets.VERSION, "playwright": package_version("playwright")}


BACKEND = BackendInfo(
    "ort-web",
    "playwright",
    "playwright",
    "pip install 'benchdb[web]'",
    "benchdb.backends.ortweb.backend",
    probe="benchdb.backends.ortweb:missing",
    uses="benchdb.backends.ortweb:uses",
    devices=("cpu", "webgpu"),
    modes=("opt-all",),
    option_set=OrtwebOptions,
    summary="onnxruntime-web in a headless Chromium (WASM, WebGPU, WebNN)",
)

"""The ort-web backend's typed option set: part of every scenario's identity."""

from __future__ import annotations

from dataclasses import dataclass

from benchdb.backends.protocol import BackendOptions


@dataclass(frozen=True)
class OrtwebOptions(BackendOptions):
    #: onnxruntime-web's execution provider: wasm, webgpu or webnn (``threads``: WASM threads).
    ep: str = "wasm"
    #: The browser engine it ran in (its version is in the result's extra and the run's software).
    browser: str = "chromium"

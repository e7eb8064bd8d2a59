"""The pytorch backend's typed option set (part of every scenario's identity) and its own run
options, the kernel mapping of the kernelized modes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from benchdb.backends.protocol import BackendOptions, Option


@dataclass(frozen=True)
class PytorchOptions(BackendOptions):
    #: torch.compile mode (default, reduce-overhead, max-autotune, ...); None when eager.
    compile_mode: str | None = None
    #: int8/int4: how they were made (benchdb.backends.shared.quantize); None for float precisions.
    quantization: str | None = None
    #: The calibration set of a calibrated method (static); None otherwise.
    calibration: str | None = None
    #: Kernelized modes: the kernel mapping asked for (benchdb.backends.pytorch.hubkernels.identity:
    #: each layer's repository and version, or a local repository's content hash; ``default`` for
    #: transformers' own mapping); None in the other modes.
    kernels: str | None = None
    #: The ``kernels`` identity of transformers' default mapping (what it held is in each result):
    #: what an imported kernelized result that names no mapping of its own records.
    DEFAULT_KERNELS: ClassVar[str] = "default"


#: Run options of its own, besides the core ones (:mod:`benchdb.backends.core_options`). The mapping is
#: not an identity option as such: it enters the identity of the kernelized scenarios only, in the
#: canonical form above (set by the backend's plan), so eager and compile series stay as they were.
OPTIONS: tuple[Option, ...] = (
    Option(
        "kernels",
        "str",
        None,
        "--mode kernels / kernels+compile: which kernels replace which layers: "
        "Layer=org/repo:LayerName[@version] or Layer=/local/repo:LayerName (comma-separated), or a file "
        "of such lines (or a YAML/JSON mapping); Layer is a hub layer name (RMSNorm) or a module class "
        "(LlamaRMSNorm). Default: transformers' own mapping for the device.",
        metavar="LAYER=KERNEL,...",
    ),
    Option(
        "kernels_trust_remote_code",
        "bool",
        False,
        "--mode kernels: load Hub kernels from publishers the kernels library does not trust (its trust_remote_code).",
    ),
)

"""The ONNX Runtime runner: models exported to ONNX (cached), run by execution providers.

Modes are graph optimisation levels: opt-all (default), opt-extended, opt-basic, opt-disabled.
Precision is fp32 (the exported graph's), or int8 made from it by ONNX Runtime's quantization tools
(benchdb.backends.shared.quantize: dynamic or static); the execution providers are a scenario setting
(--ep CPU,CUDA,...). A provider that is not installed is refused up front as unavailable.
"""

from __future__ import annotations

from collections.abc import Iterator

from benchdb.backends.core_options import backend_option
from benchdb.backends.onnxruntime.options import OnnxruntimeOptions, ort_device
from benchdb.backends.shared import graph, models, quantize
from benchdb.backends.shared import onnx_export as export
from benchdb.errors import BackendUnavailable, BenchdbError
from benchdb.harness import hardware
from benchdb.harness.scenario import Outcome, RunOptions, Scenario
from benchdb.schema.identity import normalize_device

NAME = "onnxruntime"
PROVIDERS = {
    "CPU": "CPUExecutionProvider",
    "CUDA": "CUDAExecutionProvider",
    "TensorRT": "TensorrtExecutionProvider",
    "OpenVINO": "OpenVINOExecutionProvider",
    "QNN": "QNNExecutionProvider",
    "CoreML": "CoreMLExecutionProvider",
    "DirectML": "DmlExecutionProvider",
    "ROCm": "ROCMExecutionProvider",
    "MIGraphX": "MIGraphXExecutionProvider",
}
HINTS = {
    "CUDA": "pip install onnxruntime-gpu",
    "TensorRT": "pip install onnxruntime-gpu (and TensorRT)",
    "OpenVINO": "pip install onnxruntime-openvino",
    "QNN": "pip install onnxruntime-qnn",
    "DirectML": "pip install onnxruntime-directml",
    "CoreML": "use onnxruntime's macOS wheels",
    "ROCm": "install onnxruntime built with ROCm",
    "MIGraphX": "install onnxruntime built with MIGraphX",
}
MODES = {
    "opt-all": "ORT_ENABLE_ALL",
    "opt-extended": "ORT_ENABLE_EXTENDED",
    "opt-basic": "ORT_ENABLE_BASIC",
    "opt-disabled": "ORT_DISABLE_ALL",
}


def software() -> dict:
    import onnxruntime as ort

    return {
        "onnxruntime": ort.__version__,
        "torch": hardware.package_version("torch"),
        "onnx": hardware.package_version("onnx"),
        "onnxscript": hardware.package_version("onnxscript"),
        "available_providers": ort.get_available_providers(),
    }


#: What the fork server imports for this backend's measuring children (isolation.prestart).
PRELOAD = ("onnxruntime", *models.PRELOAD)


def check_providers(names: tuple[str, ...]) -> list[str]:
    import onnxruntime as ort

    available = set(ort.get_available_providers())
    out = []
    for name in names:
        full = PROVIDERS.get(name)
        if full is None:
            raise BenchdbError(
                f"execution provider {name!r} is not one benchdb knows; use one of " + ", ".join(PROVIDERS)
            )
        if full not in available:
            raise BackendUnavailable(
                f"execution provider {name} is unavailable in this onnxruntime "
                f"({', '.join(sorted(available))}); install it with: {HINTS.get(name, '')}"
            )
        out.append(full)
    return out


def hardware_of(device: str) -> dict:
    """The fingerprint of the device the first execution provider runs on (``plan`` puts it in
    each scenario): a CUDA or TensorRT session is filed under the GPU, never under the CPU."""
    return hardware.device_fingerprint(device)


def model_info(spec: str) -> dict:
    return models.resolve(spec).info()


class _Session:
    def __init__(self, path, sc: Scenario, opts: RunOptions):
        import onnxruntime as ort

        so = ort.SessionOptions()
        so.graph_optimization_level = getattr(ort.GraphOptimizationLevel, MODES[sc.mode])
        so.intra_op_num_threads = opts.thread_count
        so.inter_op_num_threads = 1
        so.log_severity_level = 3
        self.sess = ort.InferenceSession(
            str(path), sess_options=so, providers=check_providers(backend_option(opts, "providers"))
        )
        self.input_names = [i.name for i in self.sess.get_inputs()]
        self.precision_used = sc.precision if sc.precision in quantize.QUANTIZED else "fp32"

    def run(self, feeds):
        return self.sess.run(None, feeds)


ENGINE = graph.Engine(
    NAME,
    tuple(MODES),
    ("fp32", *quantize.QUANTIZED),
    export.onnx,
    lambda exported, sc, opts: _Session(exported.path, sc, opts),
    software,
    quantize=lambda exported, sc, method, calib: quantize.onnx_int8(exported, method, calib),
)


def plan(opts: RunOptions) -> list[tuple[str, list[Scenario]]]:
    check_providers(backend_option(opts, "providers"))
    device = normalize_device(ort_device(backend_option(opts, "providers"), opts.device))
    modes = opts.modes if opts.modes != ("eager",) else ("opt-all",)
    return graph.plan(
        ENGINE,
        _with_modes(opts, modes),
        device,
        lambda mode, precision: OnnxruntimeOptions(
            threads=opts.thread_count,
            providers=tuple(backend_option(opts, "providers")),
            graph_optimization=MODES[mode],
        ),
    )


def _with_modes(opts: RunOptions, modes: tuple[str, ...]) -> RunOptions:
    from dataclasses import replace

    return replace(opts, modes=modes)


def run_model(spec: str, scenarios: list[Scenario], opts: RunOptions, on_start=None) -> Iterator[Outcome]:
    return graph.run_model(ENGINE, spec, scenarios, opts, on_start)

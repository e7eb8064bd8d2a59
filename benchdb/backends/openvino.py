"""The OpenVINO runner: models converted to OpenVINO IR (from ONNX, else torch.export; cached).

Modes are performance hints: latency (default) or throughput. Precision is set explicitly with
INFERENCE_PRECISION_HINT (fp32 -> f32, bf16, fp16 -> f16) — on AMX CPUs OpenVINO would pick bf16
by itself — and the precision the compiled model reports is recorded. IR files are saved with
compress_to_fp16=False, so the weights stay fp32.
"""

from __future__ import annotations

from typing import Iterator

from benchdb.errors import BackendUnavailable
from benchdb.backends import export, graph, models
from benchdb.harness import machine as hardware
from benchdb.backends.base import Outcome, RunOptions, Scenario
from benchdb.schema.identity import normalize_device
from benchdb.schema.options import OpenvinoOptions

NAME = "openvino"
MODES = {"latency": "LATENCY", "throughput": "THROUGHPUT"}
PRECISION_HINT = {"fp32": "f32", "bf16": "bf16", "fp16": "f16"}


def _core():
    import openvino as ov

    return ov.Core()


def software() -> dict:
    import openvino as ov

    return {"openvino": ov.__version__, "torch": hardware.package_version("torch"),
            "onnx": hardware.package_version("onnx"), "devices": _core().available_devices}


def ov_device(device: str) -> str:
    """OpenVINO's spelling of a device: cpu -> CPU, gpu:1 (benchdb's canonical form) -> GPU.1."""
    return device.upper().replace(":", ".")


def check_device(device: str) -> None:
    devices = _core().available_devices
    target = ov_device(device)
    if target != "AUTO" and not any(d == target or d.startswith(target + ".") for d in devices):
        raise BackendUnavailable(f"OpenVINO device {target} is unavailable here (available: "
                                 f"{', '.join(devices)}); install its driver or use --device CPU")


def hardware_of(device: str) -> dict:
    if ov_device(device) in ("CPU", "AUTO"):
        return hardware.cpu_fingerprint()
    core = _core()
    name = core.get_property(ov_device(device), "FULL_DEVICE_NAME")
    cpu = hardware.cpu_fingerprint()
    return {"kind": ov_device(device).lower().split(".")[0], "vendor": "Intel", "device_name": name,
            "cpu_model": cpu["cpu_model"], "cores_logical": cpu["cores_logical"], "arch": cpu["arch"],
            "os": cpu["os"], "driver": None, "memory_bytes": None}


def model_info(spec: str) -> dict:
    return models.resolve(spec).info()


class _Session:
    def __init__(self, path, sc: Scenario, opts: RunOptions):
        core = _core()
        config = {"INFERENCE_PRECISION_HINT": PRECISION_HINT[sc.precision], "PERFORMANCE_HINT": MODES[sc.mode]}
        if ov_device(opts.device) == "CPU":
            config["INFERENCE_NUM_THREADS"] = opts.thread_count
        self.compiled = core.compile_model(core.read_model(str(path)), ov_device(opts.device), config)
        self.request = self.compiled.create_infer_request()
        self.input_names = [p.get_any_name() for p in self.compiled.inputs]
        used = self.compiled.get_property("INFERENCE_PRECISION_HINT")
        name = used.get_type_name() if hasattr(used, "get_type_name") else str(used).lower()
        self.precision_used = {"f32": "fp32", "bf16": "bf16", "f16": "fp16"}.get(name, name)

    def run(self, feeds):
        result = self.request.infer(feeds)
        return [result[out] for out in self.compiled.outputs]


def _artifact(model, net, fwd):
    onnx_reasons: list[str] = []
    try:
        onnx_file = export.onnx(model, net, fwd)
    except export.ExportFailed as exc:
        onnx_file, onnx_reasons = None, exc.reasons
    try:
        return export.openvino_ir(model, net, fwd, onnx_file)
    except export.ExportFailed as exc:
        raise export.ExportFailed(onnx_reasons + exc.reasons) from None


ENGINE = graph.Engine(NAME, tuple(MODES), tuple(PRECISION_HINT), _artifact,
                      lambda exported, sc, opts: _Session(exported.path, sc, opts), software)


def plan(opts: RunOptions) -> list[tuple[str, list[Scenario]]]:
    from dataclasses import replace

    check_device(opts.device)
    modes = opts.modes if opts.modes != ("eager",) else ("latency",)
    return graph.plan(ENGINE, replace(opts, modes=modes), normalize_device(opts.device),
                      lambda mode, precision: OpenvinoOptions(
                          threads=opts.thread_count, ov_device=ov_device(opts.device),
                          performance_hint=MODES[mode], precision_hint=precision))


def run_model(spec: str, scenarios: list[Scenario], opts: RunOptions, on_start=None) -> Iterator[Outcome]:
    return graph.run_model(ENGINE, spec, scenarios, opts, on_start)

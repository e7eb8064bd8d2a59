"""The OpenVINO runner: models converted to OpenVINO IR (from ONNX, else torch.export; cached).

Modes are performance hints: latency (default) or throughput. Precision is set explicitly with
INFERENCE_PRECISION_HINT (fp32 -> f32, bf16, fp16 -> f16) — on AMX CPUs OpenVINO would pick bf16
by itself — and the precision the compiled model reports is recorded. IR files are saved with
compress_to_fp16=False, so the weights stay fp32. int8 and int4 are made from the fp32 IR by NNCF
(benchdb.backends.shared.quantize) and run with the f32 hint for what stays unquantized.

The latency hint is measured with one synchronous request (``latency_s`` per call). The
throughput hint is measured as OpenVINO's ``benchmark_app`` does: an ``AsyncInferQueue`` with the
compiled model's ``OPTIMAL_NUMBER_OF_INFER_REQUESTS`` requests kept busy (:func:`measure_queue`).
Its ``latency_s`` samples are the latency of each request under that load, and
``throughput_items_s`` is the items completed per second of measured wall time; the number of
requests is an option (``num_requests``, part of the identity) and in ``extra``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

from benchdb.backends.openvino.options import OpenvinoOptions
from benchdb.backends.shared import graph, models, quantize
from benchdb.backends.shared import onnx_export as export
from benchdb.errors import BackendUnavailable
from benchdb.harness import hardware
from benchdb.harness.scenario import Outcome, Row, RunOptions, Scenario
from benchdb.harness.timing import Measurement, StopCheck, StopRule
from benchdb.schema.identity import normalize_device

NAME = "openvino"
MODES = {"latency": "LATENCY", "throughput": "THROUGHPUT"}
PRECISION_HINT = {"fp32": "f32", "bf16": "bf16", "fp16": "f16", "int8": "f32", "int4": "f32"}


def _core():
    import openvino as ov

    return ov.Core()


def software() -> dict:
    import openvino as ov

    return {
        "openvino": ov.__version__,
        "torch": hardware.package_version("torch"),
        "onnx": hardware.package_version("onnx"),
        "devices": _core().available_devices,
    }


#: What the fork server imports for this backend's measuring children (isolation.prestart).
PRELOAD = ("openvino", *models.PRELOAD)


def ov_device(device: str) -> str:
    """OpenVINO's spelling of a device: cpu -> CPU, gpu:1 (benchdb's canonical form) -> GPU.1."""
    return device.upper().replace(":", ".")


def check_device(device: str) -> None:
    devices = _core().available_devices
    target = ov_device(device)
    if target != "AUTO" and not any(d == target or d.startswith(target + ".") for d in devices):
        raise BackendUnavailable(
            f"OpenVINO device {target} is unavailable here (available: "
            f"{', '.join(devices)}); install its driver or use --device CPU"
        )


def hardware_of(device: str) -> dict:
    if ov_device(device) in ("CPU", "AUTO"):
        return hardware.cpu_fingerprint()
    core = _core()
    name = core.get_property(ov_device(device), "FULL_DEVICE_NAME")
    cpu = hardware.cpu_fingerprint()
    return {
        "kind": ov_device(device).lower().split(".")[0],
        "vendor": "Intel",
        "device_name": name,
        "cpu_model": cpu["cpu_model"],
        "cores_logical": cpu["cores_logical"],
        "arch": cpu["arch"],
        "os": cpu["os"],
        "driver": None,
        "memory_bytes": None,
    }


def model_info(spec: str) -> dict:
    return models.resolve(spec).info()


class _Session:
    def __init__(self, path, sc: Scenario, opts: RunOptions):
        core = _core()
        config: dict[str, str | int] = {
            "INFERENCE_PRECISION_HINT": PRECISION_HINT[sc.precision],
            "PERFORMANCE_HINT": MODES[sc.mode],
        }
        if ov_device(opts.device) == "CPU":
            config["INFERENCE_NUM_THREADS"] = opts.thread_count
        self.compiled = core.compile_model(core.read_model(str(path)), ov_device(opts.device), config)
        self.request = self.compiled.create_infer_request()
        self.input_names = [p.get_any_name() for p in self.compiled.inputs]
        used = self.compiled.get_property("INFERENCE_PRECISION_HINT")
        name = used.get_type_name() if hasattr(used, "get_type_name") else str(used).lower()
        self.precision_used = {"f32": "fp32", "bf16": "bf16", "f16": "fp16"}.get(name, name)
        if sc.precision in quantize.QUANTIZED:
            self.precision_used = sc.precision  # int8/int4 weights; the hint covers the rest
        #: Options known only once compiled (merged into the scenario's options by the graph runner).
        self.options_used: dict = {}
        self.extra: dict = {}

    def run(self, feeds):
        result = self.request.infer(feeds)
        return [result[out] for out in self.compiled.outputs]


class _QueueSession(_Session):
    """The throughput hint: the compiled model's optimal number of requests, run asynchronously."""

    def __init__(self, path, sc: Scenario, opts: RunOptions):
        import openvino as ov

        super().__init__(path, sc, opts)
        self.num_requests = max(1, int(self.compiled.get_property("OPTIMAL_NUMBER_OF_INFER_REQUESTS")))
        self.queue = ov.AsyncInferQueue(self.compiled, self.num_requests)
        self.options_used = {"num_requests": self.num_requests}
        self.extra = {
            "num_requests": self.num_requests,
            "api": "async",
            "streams": _property(self.compiled, "NUM_STREAMS"),
        }

    def measure(self, feeds, rule: StopRule, items: int) -> tuple[Measurement, list[Row]]:
        import numpy as np
        import openvino as ov

        # Inputs are set on every request once, as benchmark_app does (-inference_only).
        for i in range(self.num_requests):
            for name, value in feeds.items():
                self.queue[i].set_tensor(name, ov.Tensor(np.ascontiguousarray(value)))
        return measure_queue(_OvQueue(self.queue, self.num_requests), rule, items)


def _property(compiled, name: str):
    try:
        value = compiled.get_property(name)
    except Exception:  # not every device reports every property
        return None
    return int(value) if hasattr(value, "__int__") else str(value)


class _OvQueue:
    """The few calls :func:`measure_queue` needs, over an ``openvino.AsyncInferQueue``."""

    def __init__(self, queue, size: int):
        self.queue, self.size = queue, size

    def first(self) -> None:
        self.queue[0].infer()

    def idle(self) -> int:  # blocks until a request is idle
        return self.queue.get_idle_request_id()

    def latency_s(self, i: int) -> float:  # the request's last inference, start to completion
        return self.queue[i].latency / 1e3

    def start(self) -> None:  # starts the request idle() returned
        self.queue.start_async()

    def wait_all(self) -> None:
        self.queue.wait_all()


def measure_queue(
    queue, rule: StopRule, items: int, *, clock: Callable[[], float] = time.perf_counter, stats=None
) -> tuple[Measurement, list[Row]]:
    """Measure a queue of ``queue.size`` asynchronous requests kept busy, under ``rule``.

    The first inference is timed on its own (``first_call_s``); warm-up keeps the queue full for
    ``warmup_iters`` completions and ``warmup_s``, and the queue stays full across the start of
    the measured window, so its filling and draining fall outside it. Each request started in the
    window gives a ``latency_s`` sample (its start-to-completion time, as OpenVINO reports it);
    the stopping rule is that of :func:`benchdb.harness.timing.measure`, on those samples. The
    window ends at the completion after which the rule stops; ``throughput_items_s`` is the
    items completed inside the window (``items`` per request) over its wall time, one sample.
    """
    from benchdb.harness.sample_stats import Stats

    own_stats = stats is None
    stats = stats or Stats()
    try:
        t = clock()
        queue.first()
        m = Measurement(first_call_s=clock() - t)
        in_flight: set[int] = set()

        w_start = clock()
        done = 0
        while done < rule.warmup_iters or clock() - w_start < rule.warmup_s:
            i = queue.idle()
            if i in in_flight:
                done += 1
            in_flight.add(i)
            queue.start()
            if clock() - w_start >= rule.max_time_s:
                break
        m.warmup_iters = done

        started: dict[int, float] = {}  # request -> start offset, for requests of the window
        samples: list[tuple[float, float]] = []  # (start offset, latency)
        latencies: list[float] = []
        completed = 0
        start = clock()
        elapsed = 0.0
        should_stop = StopCheck(rule, stats)
        while True:
            i = queue.idle()
            now = clock() - start
            if i in in_flight:
                completed += 1
                elapsed = now
                if i in started:
                    samples.append((started.pop(i), queue.latency_s(i)))
                    latencies.append(samples[-1][1])
            reason = should_stop(latencies, elapsed) if completed else None
            if reason is not None:
                m.stop_reason = reason
                break
            in_flight.add(i)
            started[i] = clock() - start
            queue.start()
        queue.wait_all()  # requests still running: latency samples only
        for i, offset in started.items():
            samples.append((offset, queue.latency_s(i)))
        samples.sort()
        m.offsets = [o for o, _ in samples]
        m.samples = [s for _, s in samples]
        m.median, m.ci_low, m.ci_high = stats.order_statistics_median_ci(m.samples)
        rows: list[Row] = []
        if elapsed > 0:
            rows.append(("throughput_items_s", "items/s", 0, 0.0, completed * items / elapsed))
        return m, rows
    finally:
        if own_stats:
            stats.close()


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


def _prepare(exported, sc: Scenario, opts: RunOptions) -> _Session:
    cls = _QueueSession if MODES[sc.mode] == "THROUGHPUT" else _Session
    return cls(exported.path, sc, opts)


ENGINE = graph.Engine(
    NAME,
    tuple(MODES),
    tuple(PRECISION_HINT),
    _artifact,
    _prepare,
    software,
    quantize=lambda exported, sc, method, calib: quantize.openvino_quantized(exported, method, sc.precision, calib),
)


def plan(opts: RunOptions) -> list[tuple[str, list[Scenario]]]:
    from dataclasses import replace

    check_device(opts.device)
    modes = opts.modes if opts.modes != ("eager",) else ("latency",)
    return graph.plan(
        ENGINE,
        replace(opts, modes=modes),
        normalize_device(opts.device),
        lambda mode, precision: OpenvinoOptions(
            threads=opts.thread_count,
            ov_device=ov_device(opts.device),
            performance_hint=MODES[mode],
            precision_hint=precision,
        ),
    )


def run_model(spec: str, scenarios: list[Scenario], opts: RunOptions, on_start=None) -> Iterator[Outcome]:
    return graph.run_model(ENGINE, spec, scenarios, opts, on_start)

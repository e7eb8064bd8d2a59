"""The PyTorch runner: Hugging Face models on CPU / CUDA / ROCm / MPS / XPU, eager, torch.compile or
kernelized (layers swapped for Hub kernels, :mod:`benchdb.backends.pytorch.hubkernels`; compiled on top
with ``kernels+compile``).

Metrics per scenario (raw samples): ``latency_s`` (forward), ``first_call_s`` (includes
compilation), ``load_s``, ``flops`` (torch.utils.flop_counter, one forward), ``rss_bytes`` (time
series), ``peak_rss_bytes`` (whole process), ``rss_before_bytes`` (the process before the model
was built, libraries imported) and ``peak_rss_increment_bytes`` (the peak above it); on CUDA
``peak_device_allocated_bytes`` / ``peak_device_reserved_bytes`` and NVIDIA telemetry; for
generative models ``generate_s``, ``ttft_s``, ``tpot_s`` (each decode step timed on its own) and
``tokens_per_s``. Kernelized results also record their agreement with the fp32 eager model (max
errors, cosine similarity, token or top-1 agreement) and the kernels applied (``extra.kernels``).
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import datetime, timezone
from typing import Any

from benchdb.backends.core_options import backend_option
from benchdb.backends.pytorch import COMPILE_MODES, KERNEL_MODES, hubkernels
from benchdb.backends.pytorch.options import PytorchOptions
from benchdb.backends.shared import inputs, models, quantize
from benchdb.errors import BenchdbError
from benchdb.harness import hardware
from benchdb.harness.monitors import Monitor, NvmlSource, RssSource, nvml_status, rss_rows, settled_rss
from benchdb.harness.scenario import Conditions, Outcome, RunOptions, Scenario
from benchdb.harness.timing import HostTimer, measure
from benchdb.harness.verdict import error_text, fail_all, judge, measurement_rows, status_of
from benchdb.schema.identity import normalize_device

NAME = "pytorch"
PRECISIONS = ("fp32", "fp16", "bf16", "int8", "int4")


def _torch():
    import torch

    return torch


def dtype_of(precision: str):
    torch = _torch()
    # int8 keeps fp32 activations: dynamic quantization quantizes them inside each Linear
    return {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16, "int8": torch.float32,
            "int4": torch.float32}[precision]


def _torch_build() -> dict[str, str | None]:
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


def software() -> dict:
    built = _torch_build()
    out = {"torch": built["__version__"], "transformers": hardware.package_version("transformers"),
           "cuda": built.get("cuda"), "hip": built.get("hip")}
    if built.get("cuda") or built.get("hip"):      # cuDNN's version is torch's to tell (a GPU build)
        torch = _torch()
        if torch.backends.cudnn.is_available():
            out["cudnn"] = torch.backends.cudnn.version()
    kernels = hardware.package_version("kernels")
    if kernels is not None:
        out["kernels"] = kernels
    return out


#: What the fork server imports for this backend's measuring children (isolation.prestart).
PRELOAD = models.PRELOAD


def device_kind(device: str) -> str:
    """cpu / cuda / rocm / mps / xpu: ROCm builds use torch's cuda device but are recorded as rocm."""
    base = device.split(":")[0]
    if base == "cuda" and getattr(_torch().version, "hip", None):
        return "rocm"
    return base


def check_device(device: str) -> None:
    base = device.split(":")[0]
    if base == "cpu":             # (no torch import in the planning process for the CPU)
        return
    torch = _torch()
    ok = {"cpu": lambda: True, "cuda": torch.cuda.is_available,
          "mps": lambda: hasattr(torch.backends, "mps") and torch.backends.mps.is_available(),
          "xpu": lambda: hasattr(torch, "xpu") and torch.xpu.is_available()}.get(base)
    if ok is None:
        raise BenchdbError(f"device {device!r} is not one PyTorch knows; use cpu, cuda[:i], mps or xpu")
    if not ok():
        raise BenchdbError(f"device {device} is not available on this machine (torch {torch.__version__}); "
                           "see `benchdb hardware`, or use --device cpu")
    if base in ("cuda", "xpu") and ":" in device:
        count = torch.cuda.device_count() if base == "cuda" else torch.xpu.device_count()
        if int(device.split(":")[1]) >= count:
            raise BenchdbError(f"device {device} does not exist: this machine has {count} {base} device(s)")


def hardware_of(device: str) -> dict:
    """Fingerprint of a canonical device (cpu, cuda:0, rocm:0, mps, xpu:0)."""
    return hardware.device_fingerprint(device)


def sync_for(device) -> Callable[[], object] | None:
    """The synchronisation of an asynchronous device (None for the CPU)."""
    torch = _torch()
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
        torch = _torch()
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


def parse_mode(mode: str) -> str | None:
    """None for eager and kernels, else the torch.compile mode."""
    kernelized = hubkernels.split_mode(mode)
    if kernelized is not None:
        return kernelized[1]
    if mode == "eager":
        return None
    if mode == "compile":
        return "default"
    if mode.startswith("compile:") and mode[8:] in COMPILE_MODES:
        return mode[8:]
    raise BenchdbError(f"mode {mode!r} is not valid for pytorch; use eager, compile, "
                       + ", ".join(f"compile:{m}" for m in COMPILE_MODES[1:]) + " or " + ", ".join(KERNEL_MODES))


def _kernel_mapping(opts: RunOptions) -> str | None:
    """The kernelized modes' mapping identity (None without a kernelized mode): the kernels
    library must be installed, the mapping well formed and each of its layers in some model."""
    text = backend_option(opts, "kernels")
    if not any(hubkernels.split_mode(m) for m in opts.modes):
        if text is not None:
            raise BenchdbError("--kernels applies to --mode kernels and kernels+compile[:mode]; add one of them")
        return None
    hubkernels.library()
    entries = hubkernels.parse(text)
    if entries is not None:
        hubkernels.check_layers(entries, models.expand_models(opts.models), opts.task)
    return hubkernels.identity(entries)


def model_info(spec: str) -> dict:
    return models.resolve(spec).info()


def plan(opts: RunOptions) -> list[tuple[str, list[Scenario]]]:
    check_device(opts.device)
    for mode in opts.modes:
        parse_mode(mode)
    for p in opts.precisions:
        if p not in PRECISIONS:
            raise BenchdbError(f"precision {p!r} is not valid for pytorch; use one of {', '.join(PRECISIONS)}")
    device = opts.device.replace("cuda", "rocm") if device_kind(opts.device) == "rocm" else opts.device
    mapping = _kernel_mapping(opts)
    return quantize.per_method(opts, lambda o: inputs.expand_scenarios(
        o, NAME, normalize_device(device),
        lambda mode, precision: PytorchOptions(threads=o.thread_count, compile_mode=parse_mode(mode),
                                               kernels=mapping if hubkernels.split_mode(mode) else None,
                                               **quantize.options(NAME, precision, o.quantization)),
        lambda mode: {"torch_device": o.device}, generates=True))


def _unsupported(sc: Scenario, device) -> str | None:
    torch = _torch()
    if sc.precision in quantize.QUANTIZED and hubkernels.split_mode(sc.mode):
        return "the kernelized modes take float precisions (fp32, fp16, bf16), not a quantized model"
    if sc.precision in quantize.QUANTIZED:
        try:
            quantize.method_for(NAME, sc.precision, sc.options.get("quantization"))
        except quantize.Unsupported as exc:
            return str(exc)
        if device.type != "cpu":
            return "PyTorch dynamic int8 runs on the CPU only (its quantized Linear kernels are CPU kernels)"
        if parse_mode(sc.mode) is not None:
            return "torch.compile of a dynamically quantized model is not supported by benchdb; use eager"
    if sc.precision == "bf16" and device.type == "cuda" and not torch.cuda.is_bf16_supported():
        return "bf16 is not supported on this GPU (compute capability < 8.0)"
    if sc.precision == "fp16" and device.type == "cpu" and parse_mode(sc.mode) is not None:
        return "fp16 torch.compile on the CPU is not supported by inductor here; use fp32 or bf16"
    return None


def _classify(exc: BaseException) -> str:
    text = str(exc)
    if "not implemented for" in text and any(t in text for t in ("'Half'", "'BFloat16'")):
        return "unsupported"
    return status_of(exc)


class TokenClock:
    """A logits processor that timestamps every generated token (called once per decode step)."""

    def __init__(self, sync: Callable[[], object] | None, clock=time.perf_counter) -> None:
        self.sync = sync
        self.clock = clock
        self.calls: list[list[float]] = []

    def begin(self) -> None:
        self.calls.append([self.clock()])

    def __call__(self, input_ids, scores):
        if self.sync is not None:
            self.sync()
        self.calls[-1].append(self.clock())
        return scores


def generation_rows(clock: TokenClock, m, batch: int, tokens: int) -> list[tuple]:
    """TTFT, per-token TPOT, end-to-end time and tokens/s of the timed generate calls."""
    rows: list[tuple] = []
    timed = clock.calls[-len(m.samples):] if m.samples else []
    for it, (stamps, total, offset) in enumerate(zip(timed, m.samples, m.offsets, strict=True)):
        rows.append(("generate_s", "s", it, offset, total))
        rows.append(("tokens_per_s", "tokens/s", it, offset, batch * tokens / total))
        if len(stamps) >= 2:
            rows.append(("ttft_s", "s", it, offset, stamps[1] - stamps[0]))
        for k in range(2, len(stamps)):
            rows.append(("tpot_s", "s", it * tokens + k - 1, offset + stamps[k - 1] - stamps[0],
                         stamps[k] - stamps[k - 1]))
    return rows


def _flops(torch, net, fwd) -> float | None:
    from torch.utils.flop_counter import FlopCounterMode

    try:
        with torch.inference_mode(), FlopCounterMode(display=False) as counter:
            net(**fwd)
        return float(counter.get_total_flops())
    except Exception:   # some ops have no FLOP formula; FLOPs are then unknown, not wrong
        return None


def _agreement(torch, model, base, net, precision: str, reference_inputs: dict, fwd: dict,
               full: bool = False) -> tuple[dict, list]:
    """The output's agreement with the fp32 model on the CPU, on the same inputs, by the exported-
    graph runners' check (onnx_export.check_outcome): max errors, cosine similarity, top-1 or token
    agreement (``full``: at fp32 too, for a kernelized model). Recorded, never a reason to fail the
    result (its tolerance verdict is not used); an output that cannot be compared records why in extra."""
    from benchdb.backends.shared import onnx_export as export

    names = list(fwd)
    try:
        reference = export.reference_output(export.flat_module(model, base, names), reference_inputs)
        with torch.inference_mode():
            out = export.flat_module(model, net, names)(**fwd)[0].float().cpu().numpy()
    except Exception as exc:   # e.g. an output the flat wrapper cannot walk: no agreement, not a failure
        return {"agreement_error": error_text(exc)}, []
    _, _, rows, fields = export.check_outcome(reference, out, precision, model.kind.task, model.kind.generative)
    if fields["max_abs_err"] is None:
        return {"agreement_error": "outputs of another shape, or NaN or inf"}, []
    fields.pop("tolerance")
    if full and precision == "fp32":      # check_outcome leaves these out at fp32
        found = export.agreement(reference, out, model.kind.task, model.kind.generative)
        rows += [(name, "ratio", 0, 0.0, value) for name, value in found.items()]
        fields.update(found)
    return fields, rows


def run_model(spec: str, scenarios: list[Scenario], opts: RunOptions, on_start=None) -> Iterator[Outcome]:
    torch = _torch()
    import transformers  # noqa: F401  (imported before the baseline: a library, not the model)

    rss_before = settled_rss()
    model, base, load_s, failure = models.load_for_run(spec, opts.task, opts.thread_count)
    if failure is not None:
        yield from fail_all(scenarios, model.info(), failure, on_start)
        return
    info = model.info(num_parameters=sum(p.numel() for p in base.parameters()))
    prepared: dict[tuple[str, str], Any] = {}      # (precision, mode) -> callable module
    cast: dict[str, Any] = {}                      # precision -> module on device
    for i, sc in enumerate(scenarios):
        if on_start:
            on_start(i)
        started = datetime.now(timezone.utc).isoformat()
        device = torch.device(sc.settings.get("torch_device", sc.device))
        reason = _unsupported(sc, device)
        if reason:
            yield Outcome(sc, info, status="unsupported", error=reason, started_at=started)
            continue
        try:
            yield _measure(torch, model, base, sc, device, opts, info, load_s, started, prepared, cast,
                           rss_before)
        except hubkernels.Unsupported as exc:
            yield Outcome(sc, info, status="unsupported", error=str(exc), started_at=started)
        except Exception as exc:
            yield Outcome(sc, info, status=_classify(exc), error=error_text(exc), started_at=started)
        finally:
            if device.type == "cuda":
                torch.cuda.empty_cache()


def _measure(torch, model, base, sc: Scenario, device, opts: RunOptions, info: dict, load_s: float,
             started: str, prepared: dict, cast: dict, rss_before: float | None = None) -> Outcome:
    dtype = dtype_of(sc.precision)
    if sc.precision not in cast:
        cast.clear()          # one precision on the device at a time
        prepared.clear()
        net = base if (sc.precision == "fp32" and device.type == "cpu") else copy.deepcopy(base)
        net = net.to(device=device, dtype=dtype)
        cast[sc.precision] = quantize.torch_dynamic_int8(net) if sc.precision == "int8" else net
    compile_mode = parse_mode(sc.mode)
    module, net, applied = _prepared(torch, model.spec, cast[sc.precision], sc, device, opts, compile_mode, prepared)
    seq_len = sc.settings.get("seq_len") or 1
    inp = inputs.make(model, net, sc.batch_size, seq_len, new_tokens=opts.gen_tokens)
    fwd = inputs.to_device(inp.forward, device, dtype)
    timer = timer_for(device)
    sync = sync_for(device)

    def forward():
        return module(**fwd)

    sources: list = [RssSource()]
    nvml = None
    if device.type == "cuda" and nvml_status()[0]:
        nvml = NvmlSource(device.index or 0)
        sources.append(nvml)
        torch.cuda.reset_peak_memory_stats(device)
    cond = Conditions.now(opts.thread_count)
    settled_rss()          # memory an earlier scenario freed goes back to the OS before this peak
    # inference mode is entered once around the loop, as a bare loop does: entered in every call it
    # added ~1.5 % to a 1.6 ms tiny-BERT call (issue 19's agreement with a bare loop)
    with Monitor(sources) as mon, torch.inference_mode():
        m = measure(forward, opts.rule, sync=sync, timer=timer)
    rows = measurement_rows(m)
    rows.append(("load_s", "s", 0, 0.0, load_s))
    rows.extend(mon.rows)
    rows.extend(rss_rows(mon, rss_before))
    if device.type == "cuda":
        rows.append(("peak_device_allocated_bytes", "bytes", 0, 0.0, float(torch.cuda.max_memory_allocated(device))))
        rows.append(("peak_device_reserved_bytes", "bytes", 0, 0.0, float(torch.cuda.max_memory_reserved(device))))
    flops = _flops(torch, net, fwd)
    if flops is not None:
        rows.append(("flops", "flops", 0, 0.0, flops))
    reasons = judge(m, opts.rule, cond, opts.max_background_cpu)
    extra: dict[str, Any] = {"image_tokens": inp.extra.get("image_tokens"), "ci_rel": m.ci_rel,
                             "flops_per_forward": flops}
    if applied is not None:
        extra.update(applied.extra())
    if sc.precision != "fp32" or applied is not None:
        found, rows_agree = _agreement(torch, model, base, net, sc.precision, inp.forward, fwd,
                                       full=applied is not None)
        extra.update(found)
        rows.extend(rows_agree)
    if opts.sts and not model.kind.generative:
        from benchdb.backends.shared import graph, onnx_export

        flat = onnx_export.flat_module(model, net, list(fwd))

        def embed(f):
            with torch.inference_mode():
                return flat(**inputs.to_device(f, device, dtype))[0].float().cpu().numpy()
        rows.extend(graph.sts_rows(model, list(fwd), sc, opts, embed, extra))
    if nvml is not None:
        if nvml.throttled:
            reasons.append("throttled: " + ", ".join(sorted(nvml.throttled)))
        extra["power_capped_pct"] = nvml.power_capped_pct
        nvml.close()
    if model.kind.generative and inp.generate is not None:
        if compile_mode is None:
            rows.extend(_generation(torch, net, inp, device, dtype, sync, opts))
        else:
            extra["generation"] = "not measured under torch.compile (decode shapes change every step)"
    return Outcome(sc, info, rows=rows, validity_reasons=reasons, timing_method=timer.method,
                   stop_reason=m.stop_reason, conditions=cond, started_at=started, extra=extra)


def _prepared(torch, spec: str, net, sc: Scenario, device, opts: RunOptions, compile_mode: str | None,
              prepared: dict):
    """:func:`_prepare` once per (precision, mode); a mode that cannot be kernelized is unsupported
    for each of its batch sizes and shapes without trying again."""
    key = (sc.precision, sc.mode)
    if key not in prepared:
        try:
            prepared[key] = _prepare(torch, spec, net, sc, device, opts, compile_mode)
        except hubkernels.Unsupported as exc:
            prepared[key] = exc
    if isinstance(prepared[key], hubkernels.Unsupported):
        raise prepared[key]
    return prepared[key]


def _prepare(torch, spec: str, net, sc: Scenario, device, opts: RunOptions, compile_mode: str | None):
    """(the module timed, the model under it, what kernelizing applied or None) of one mode: a
    kernelized mode works on its own copy, so the eager model stays the reference."""
    if hubkernels.split_mode(sc.mode) is None:
        return (net if compile_mode is None else torch.compile(net, mode=compile_mode)), net, None
    entries = hubkernels.parse(backend_option(opts, "kernels"))
    if hubkernels.identity(entries) != sc.options.get("kernels"):
        raise hubkernels.Unsupported("the --kernels mapping changed since the run was planned (a local kernel "
                                     "repository's files?); plan the run again")
    net = copy.deepcopy(net)
    applied = hubkernels.apply(net, spec, entries, device_kind(str(device)), compile_mode is not None,
                               bool(backend_option(opts, "kernels_trust_remote_code")))
    return (net if compile_mode is None else torch.compile(net, mode=compile_mode)), net, applied


def _generation(torch, net, inp, device, dtype, sync, opts: RunOptions) -> list[tuple]:
    from transformers import LogitsProcessorList

    clock = TokenClock(sync)
    kwargs = dict(inputs.to_device(inp.generate, device, dtype), max_new_tokens=opts.gen_tokens,
                  min_new_tokens=opts.gen_tokens, do_sample=False,
                  logits_processor=LogitsProcessorList([clock]))

    def generate():
        clock.begin()
        return net.generate(**kwargs)

    # generation is slower than a forward: its own minimum count, same time limits
    rule = replace(opts.rule, min_iters=min(opts.rule.min_iters, 5), warmup_iters=1)
    with torch.inference_mode():
        m = measure(generate, rule, sync=sync)
    return generation_rows(clock, m, inp.items, opts.gen_tokens)

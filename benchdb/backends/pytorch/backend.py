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
from collections.abc import Iterator
from datetime import datetime, timezone
from typing import Any

from benchdb.backends.core_options import backend_option
from benchdb.backends.pytorch import COMPILE_MODES, KERNEL_MODES, hubkernels, kernelize
from benchdb.backends.pytorch.checks import agreement, count_flops
from benchdb.backends.pytorch.devices import (
    check_device,
    device_kind,
    dtype_of,
    import_torch,
    sync_for,
    timer_for,
    torch_build,
)
from benchdb.backends.pytorch.generate import measure_generation
from benchdb.backends.pytorch.options import PytorchOptions
from benchdb.backends.shared import inputs, models, quantize
from benchdb.errors import BenchdbError
from benchdb.harness import hardware
from benchdb.harness.monitors import Monitor, NvmlSource, RssSource, nvml_status, rss_rows, settled_rss
from benchdb.harness.scenario import Conditions, Outcome, RunOptions, Scenario
from benchdb.harness.timing import measure
from benchdb.harness.validity import error_text, fail_all, judge, measurement_rows, status_of
from benchdb.schema.identity import normalize_device

NAME = "pytorch"
PRECISIONS = ("fp32", "fp16", "bf16", "int8", "int4")


def software() -> dict:
    built = torch_build()
    out = {
        "torch": built["__version__"],
        "transformers": hardware.package_version("transformers"),
        "cuda": built.get("cuda"),
        "hip": built.get("hip"),
    }
    if built.get("cuda") or built.get("hip"):  # cuDNN's version is torch's to tell (a GPU build)
        torch = import_torch()
        if torch.backends.cudnn.is_available():
            out["cudnn"] = torch.backends.cudnn.version()
    kernels = hardware.package_version("kernels")
    if kernels is not None:
        out["kernels"] = kernels
    return out


#: What the fork server imports for this backend's measuring children (isolation.prestart).
PRELOAD = models.PRELOAD


def hardware_of(device: str) -> dict:
    """Fingerprint of a canonical device (cpu, cuda:0, rocm:0, mps, xpu:0)."""
    return hardware.device_fingerprint(device)


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
    raise BenchdbError(
        f"mode {mode!r} is not valid for pytorch; use eager, compile, "
        + ", ".join(f"compile:{m}" for m in COMPILE_MODES[1:])
        + " or "
        + ", ".join(KERNEL_MODES)
    )


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
    return quantize.per_method(
        opts,
        lambda o: inputs.expand_scenarios(
            o,
            NAME,
            normalize_device(device),
            lambda mode, precision: PytorchOptions(
                threads=o.thread_count,
                compile_mode=parse_mode(mode),
                kernels=mapping if hubkernels.split_mode(mode) else None,
                **quantize.options(NAME, precision, o.quantization),
            ),
            lambda mode: {"torch_device": o.device},
            generates=True,
        ),
    )


def _unsupported(sc: Scenario, device) -> str | None:
    torch = import_torch()
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


def run_model(spec: str, scenarios: list[Scenario], opts: RunOptions, on_start=None) -> Iterator[Outcome]:
    torch = import_torch()
    import transformers  # noqa: F401  (imported before the baseline: a library, not the model)

    rss_before = settled_rss()
    model, base, load_s, failure = models.load_for_run(spec, opts.task, opts.thread_count)
    if failure is not None:
        yield from fail_all(scenarios, model.info(), failure, on_start)
        return
    info = model.info(num_parameters=sum(p.numel() for p in base.parameters()))
    prepared: dict[tuple[str, str], Any] = {}  # (precision, mode) -> callable module
    cast: dict[str, Any] = {}  # precision -> module on device
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
            yield _measure(torch, model, base, sc, device, opts, info, load_s, started, prepared, cast, rss_before)
        except kernelize.Unsupported as exc:
            yield Outcome(sc, info, status="unsupported", error=str(exc), started_at=started)
        except Exception as exc:
            yield Outcome(sc, info, status=_classify(exc), error=error_text(exc), started_at=started)
        finally:
            if device.type == "cuda":
                torch.cuda.empty_cache()


def _measure(
    torch,
    model,
    base,
    sc: Scenario,
    device,
    opts: RunOptions,
    info: dict,
    load_s: float,
    started: str,
    prepared: dict,
    cast: dict,
    rss_before: float | None = None,
) -> Outcome:
    dtype = dtype_of(sc.precision)
    if sc.precision not in cast:
        cast.clear()  # one precision on the device at a time
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
    settled_rss()  # memory an earlier scenario freed goes back to the OS before this peak
    # inference mode is entered once around the loop, as a bare loop does: entered in every call it
    # added ~1.5 % to a 1.6 ms tiny-BERT call, against benchdb's promise to agree with a bare loop
    with Monitor(sources) as mon, torch.inference_mode():
        m = measure(forward, opts.rule, sync=sync, timer=timer)
    rows = measurement_rows(m)
    rows.append(("load_s", "s", 0, 0.0, load_s))
    rows.extend(mon.rows)
    rows.extend(rss_rows(mon, rss_before))
    if device.type == "cuda":
        rows.append(("peak_device_allocated_bytes", "bytes", 0, 0.0, float(torch.cuda.max_memory_allocated(device))))
        rows.append(("peak_device_reserved_bytes", "bytes", 0, 0.0, float(torch.cuda.max_memory_reserved(device))))
    flops = count_flops(torch, net, fwd)
    if flops is not None:
        rows.append(("flops", "flops", 0, 0.0, flops))
    reasons = judge(m, opts.rule, cond, opts.max_background_cpu)
    extra: dict[str, Any] = {
        "image_tokens": inp.extra.get("image_tokens"),
        "ci_rel": m.ci_rel,
        "flops_per_forward": flops,
    }
    if applied is not None:
        extra.update(applied.extra())
    if sc.precision != "fp32" or applied is not None:
        found, rows_agree = agreement(torch, model, base, net, sc.precision, inp.forward, fwd, full=applied is not None)
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
            rows.extend(measure_generation(torch, net, inp, device, dtype, sync, opts))
        else:
            extra["generation"] = "not measured under torch.compile (decode shapes change every step)"
    return Outcome(
        sc,
        info,
        rows=rows,
        validity_reasons=reasons,
        timing_method=timer.method,
        stop_reason=m.stop_reason,
        conditions=cond,
        started_at=started,
        extra=extra,
    )


def _prepared(torch, spec: str, net, sc: Scenario, device, opts: RunOptions, compile_mode: str | None, prepared: dict):
    """:func:`_prepare` once per (precision, mode); a mode that cannot be kernelized is unsupported
    for each of its batch sizes and shapes without trying again."""
    key = (sc.precision, sc.mode)
    if key not in prepared:
        try:
            prepared[key] = _prepare(torch, spec, net, sc, device, opts, compile_mode)
        except kernelize.Unsupported as exc:
            prepared[key] = exc
    if isinstance(prepared[key], kernelize.Unsupported):
        raise prepared[key]
    return prepared[key]


def _prepare(torch, spec: str, net, sc: Scenario, device, opts: RunOptions, compile_mode: str | None):
    """(the module timed, the model under it, what kernelizing applied or None) of one mode: a
    kernelized mode works on its own copy, so the eager model stays the reference."""
    if hubkernels.split_mode(sc.mode) is None:
        return (net if compile_mode is None else torch.compile(net, mode=compile_mode)), net, None
    entries = hubkernels.parse(backend_option(opts, "kernels"))
    if hubkernels.identity(entries) != sc.options.get("kernels"):
        raise kernelize.Unsupported(
            "the --kernels mapping changed since the run was planned (a local kernel "
            "repository's files?); plan the run again"
        )
    net = copy.deepcopy(net)
    applied = kernelize.apply(
        net,
        spec,
        entries,
        device_kind(str(device)),
        compile_mode is not None,
        bool(backend_option(opts, "kernels_trust_remote_code")),
    )
    return (net if compile_mode is None else torch.compile(net, mode=compile_mode)), net, applied

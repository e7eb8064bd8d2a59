"""Run options, declared once: the core options every backend takes, and what is built from the
declarations (the core ones here and each backend's own, :attr:`BackendInfo.options`).

From one :class:`~benchdb.backends.api.Option` come its ``benchdb run`` flag (:mod:`benchdb.cli.run`
builds the click options from :func:`every`), its config-file key (:func:`config_value`,
:func:`apply`), the arguments that pass it to an ``--ab`` child (:func:`child_args`) and, for a
backend's identity option, its place in the scenario's options (:func:`identity_options`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import MISSING, replace
from pathlib import Path
from typing import Any

from benchdb import quantity
from benchdb.backends.api import Option
from benchdb.errors import BenchdbError, did_you_mean
from benchdb.harness.scenario import RunOptions
from benchdb.harness.timing import StopRule

#: Marks a core option whose default is the field's it sets (:func:`_field_default`).
FIELD: Any = object()

#: Every backend takes these. Axes first (a config run entry's lists expand to their product).
_DECLARED: tuple[Option, ...] = (
    Option("backend", "str", None, "Required unless --config or --suite: numpy, pytorch, onnxruntime, openvino, "
           "or an installed plug-in's name (`benchdb hardware` lists them).", metavar="NAME",
           key="backend", aliases=("backends",), axis=True),
    Option("device", "str", FIELD, "Device to measure on.", key="device", aliases=("devices",), axis=True),
    Option("models", "words", (), "Model spec (repeatable): matmul:<N> for numpy; a local folder, a cached Hub id, "
           "tiny:<model_type> or list:<key|small|tiny> for ML backends.", flag="--model", repeat=True,
           key="model", aliases=("models",), axis=True),
    Option("batch_sizes", "ints", FIELD, "Batch sizes, comma-separated: one scenario each.", minimum=1,
           flag="--batch-size", old_flags=("--batch-sizes",), key="batch_size", aliases=("batch_sizes",), axis=True),
    Option("seq_lens", "ints", FIELD, "Sequence lengths (backends with text inputs), comma-separated.", minimum=1,
           flag="--seq-len", old_flags=("--seq-lens",), key="seq_len", aliases=("seq_lens",), axis=True),
    Option("modes", "words", FIELD, "Comma-separated, each backend's own: pytorch: eager, compile[:mode], "
           "kernels, kernels+compile[:mode]; onnxruntime: opt-all, opt-extended, opt-basic, opt-disabled; "
           "openvino: latency, throughput; ort-web: opt-all; openai: completions, chat.", flag="--mode",
           key="mode", aliases=("modes",), axis=True),
    Option("precisions", "words", FIELD, "Comma-separated: fp32, fp16, bf16, fp64; int8, int4 (quantized: "
           "see --quant).", flag="--precision", key="precision", aliases=("precisions",), axis=True),
    Option("quantization", "str", FIELD, "How int8/int4 are made: dynamic, static (calibrated on 8 seeded inputs) "
           "or weights (weight-only); comma-separated: one scenario per method. Default per backend: "
           "onnxruntime int8 dynamic; openvino int8 static, int4 weights (NNCF); pytorch int8 dynamic (CPU).",
           flag="--quant", metavar="METHOD,...", aliases=("quant",)),
    Option("sts", "str", FIELD, "A sentence-similarity check (JSON lines: a, b, score) for embedding models with a "
           "tokenizer: each result records sts_spearman, its cosine similarities' rank correlation with the "
           "scores, at its own precision.", metavar="FILE"),
    Option("threads", "int", FIELD, "Fixed thread count (default: physical cores). Recorded with every result.",
           minimum=1),
    Option("warmup", "int", FIELD, "Warm-up calls.", minimum=0, target="rule.warmup_iters"),
    Option("min_iters", "int", FIELD, "Timed calls at least, whatever the time.", minimum=1,
           target="rule.min_iters"),
    Option("min_time", "duration", FIELD, "Time to measure at least.", minimum=0, target="rule.min_time_s"),
    Option("max_time", "duration", FIELD, "Time to measure at most.", minimum=0, target="rule.max_time_s"),
    Option("target_ci", "share", FIELD, "Stop once the 95% CI of the median is within +- this share of it.",
           minimum=0.0001, maximum=0.99, target="rule.target_ci"),
    Option("max_background_cpu", "percent", FIELD, "Other processes' CPU use (of the whole machine) above which "
           "a result is marked invalid.", minimum=0, maximum=100),
    Option("task", "str", FIELD, "Override the detected task (feature-extraction, text-generation, "
           "text-classification, image-classification)."),
    Option("gen_tokens", "int", FIELD, "Tokens each generate call must produce (generative models).", minimum=1),
    Option("timeout_s", "duration", FIELD, "Time one scenario may take before it is recorded as timeout.",
           flag="--timeout", key="timeout", minimum=0.1),
    Option("load_timeout_s", "duration", FIELD, "Time a model may take to load in its child process.",
           flag="--load-timeout", key="load_timeout", minimum=0.1),
    Option("verify_only", "bool", FIELD, "onnxruntime/openvino: check outputs against PyTorch fp32 without timing."),
    Option("isolate", "bool", FIELD, "Measure in this process (debugging): no child process, no timeouts.",
           flag="--no-isolation", negate=True),
    Option("co_runners", "int", FIELD, "Other measurements running at the same time on other cores or devices "
           "(set by --parallel and --duet; part of the scenario's identity).", minimum=1, identity=True),
    Option("repeats", "int", FIELD, "Measure each scenario in K separate processes, interleaved with the other "
           "scenarios' in randomised rounds, so intervals and verdicts see process-to-process variance.", minimum=1),
    Option("tags", "words", FIELD, "Tag recorded on the run (repeatable).", flag="--tag", repeat=True, key="tag",
           aliases=("tags",)),
    Option("out", "str", FIELD, "Folder for the Parquet measurement files, or an fsspec URL "
           "(s3://, gs://, hf://...)."),
)



def _field_default(opt: Option) -> Option:
    """The option with its default read from the field it sets (RunOptions, or StopRule for a
    ``rule.`` target): each core default is declared once, on the harness's types."""
    if opt.default is not FIELD:
        return opt
    cls, attr = (StopRule, opt.target.split(".", 1)[1]) if opt.target else (RunOptions, opt.name)
    f = cls.__dataclass_fields__[attr]
    default = f.default if f.default is not MISSING else f.default_factory()  # type: ignore[operator]
    return replace(opt, default=str(default) if isinstance(default, Path) else default)


#: Every backend takes these. Axes first (a config run entry's lists expand to their product).
CORE: tuple[Option, ...] = tuple(_field_default(o) for o in _DECLARED)

CORE_BY_NAME = {o.name: o for o in CORE}


def default_mode(info: Any) -> str:
    """A backend's default mode: the first it declares (the core default ``eager`` means it), or
    ``eager`` when it declares none."""
    return info.modes[0] if info.modes else "eager"


def default_text(opt: Option) -> str | None:
    """The default `--help` shows for an option whose default differs per backend, in words
    (``--mode``: each backend's own); None where the declared default is the same for every one."""
    if opt.name != "modes":
        return None
    from benchdb.backends import registry

    by_mode: dict[str, list[str]] = {}
    for name, info in sorted(registry.backends().items()):
        by_mode.setdefault(default_mode(info), []).append(name)
    return "per backend: " + ", ".join(f"{mode} ({', '.join(names)})" for mode, names in by_mode.items())

#: The precisions benchdb knows. A backend measures some and records the others as unsupported,
#: with why (int4 through ONNX Runtime); any other value is a typo, refused before anything runs.
PRECISIONS = ("fp32", "fp16", "bf16", "fp64", "int8", "int4")

#: Device families besides those the registered backends declare (:attr:`BackendInfo.devices`):
#: other spellings backends take (OpenVINO's auto, DirectML's dml, the browser's wasm and webnn).
DEVICE_FAMILIES = ("cpu", "cuda", "rocm", "mps", "xpu", "gpu", "npu", "dml", "auto", "wasm", "webgpu", "webnn")
_DEVICE = re.compile(r"^([a-z]+)(?:[:.]\d+)?$")


def of_backend(backend: str) -> tuple[Option, ...]:
    """A backend's own options (none for a backend benchdb does not know)."""
    from benchdb.backends import registry

    found = registry.backends().get(backend)
    return found.options if found is not None else ()


def backend_owned() -> dict[str, tuple[Option, list[str]]]:
    """Every backend option by name, with the backends that declare it (same name: one option;
    the first declaration gives its flag, type and help)."""
    from benchdb.backends import registry

    out: dict[str, tuple[Option, list[str]]] = {}
    for name, info in sorted(registry.backends().items()):
        for opt in info.options:
            if opt.name in CORE_BY_NAME:
                continue          # a backend cannot redefine a core option
            out.setdefault(opt.name, (opt, []))[1].append(name)
    return out


def every() -> list[tuple[Option, list[str]]]:
    """Core options (owned by no backend: ``[]``) then each backend option with its owners."""
    return [(o, []) for o in CORE] + list(backend_owned().values())


def by_config_key() -> dict[str, Option]:
    """Every option by its config key and aliases (run entries and ``settings``)."""
    out: dict[str, Option] = {}
    for opt, _ in every():
        for key in (opt.config_key, *opt.aliases):
            out.setdefault(key, opt)
    return out


#: Option kinds read by :mod:`benchdb.quantity`, with the forms their help names.
QUANTITIES = {"share": quantity.SHARE_FORMS, "percent": "30% or 0.3",
              "duration": f"{quantity.DURATION_FORMS} or bare seconds"}


def quantity_of(opt: Option, value: str | float) -> float:
    """The value of a share, percent or duration option (its text, or a config file's number) in
    the unit it is kept in (:data:`benchdb.backends.api.Kind`); :class:`benchdb.quantity.QuantityError`."""
    if opt.kind == "duration":
        return quantity.duration(value, minimum=opt.minimum or 0.0)
    scale = 100.0 if opt.kind == "percent" else 1.0
    top = 1.0 if opt.maximum is None else opt.maximum / scale
    return quantity.share(value, minimum=(opt.minimum or 0.0) / scale, maximum=top) * scale


def quantity_text(opt: Option, value: float) -> str:
    """A share, percent or duration option's value as text :func:`quantity_of` reads back."""
    if opt.kind == "duration":
        return quantity.duration_text(value)
    return quantity.percent_text(value / 100.0 if opt.kind == "percent" else value)


def config_value(opt: Option, value: Any, where: str) -> Any:
    """A config file's value for an option, checked and converted (lists for axes)."""
    def bad(what: str) -> BenchdbError:
        return BenchdbError(f"{where}: {value!r} is not {what}")

    if opt.kind in ("words", "ints") or opt.axis:
        items = value if isinstance(value, list) else [value]
        if not items:
            raise BenchdbError(f"{where}: give at least one value")
        item = Option(opt.name, "int" if opt.kind == "ints" else "str", None, "", minimum=opt.minimum)
        return tuple(config_value(item, v, where) for v in items)
    if opt.kind == "bool":
        if not isinstance(value, bool):
            raise bad("true or false")
        return value
    if opt.kind == "str":
        if not isinstance(value, str) or not value:
            raise bad("a non-empty string")
        return value
    if opt.kind in QUANTITIES:
        try:
            return quantity_of(opt, value)
        except quantity.QuantityError as exc:
            raise BenchdbError(f"{where}: {exc}") from None
    number = int if opt.kind == "int" else float
    if number is int and (isinstance(value, bool) or not isinstance(value, int) or value < (opt.minimum or 0)):
        raise bad("a positive integer" if opt.minimum == 1 else "a non-negative integer")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise bad("a valid float")
    if (opt.minimum is not None and value < opt.minimum) or (opt.maximum is not None and value > opt.maximum):
        span = f">= {opt.minimum:g}" if opt.maximum is None else f"between {opt.minimum:g} and {opt.maximum:g}"
        raise bad(f"a number {span}")
    return number(value)


def apply(opts: RunOptions, values: Mapping[str, Any], where: str = "options",
          strict: bool = False) -> RunOptions:
    """``opts`` with the given option values (by option name) set.

    A backend option applies to the runs of the backends that declare it; ``strict`` (the command
    line, where the backend is named) refuses one that the run's backend does not take."""
    owned = backend_owned()
    rule, fields = {}, {}
    backend_options = dict(opts.backend_options)
    for name, value in values.items():
        if name in CORE_BY_NAME:
            target = CORE_BY_NAME[name].field
            if target.startswith("rule."):
                rule[target[5:]] = value
            else:
                fields[target] = value
        elif name in owned:
            opt, owners = owned[name]
            if opts.backend in owners:
                backend_options[name] = value
            elif strict:
                raise BenchdbError(f"{opt.cli_flag} is an option of {', '.join(owners)}; backend {opts.backend} "
                                   "does not take it")
        else:
            raise BenchdbError(f"{where}: {name!r} is not a run option")
    try:
        if rule:
            fields["rule"] = replace(opts.rule, **rule)
    except ValueError as exc:
        prefix = "" if where == "command line" else f"{where}: "
        raise BenchdbError(f"{prefix}stopping rule: {exc}") from None
    out = replace(opts, backend_options=backend_options, **fields)
    check_axes(out, where)
    return out


def check_axes(opts: RunOptions, where: str = "command line") -> None:
    """Refuse a precision, mode or device that is no value of its axis (a typo), naming the valid
    ones. A known value that this backend cannot measure (fp16 on numpy, a CUDA device for numpy)
    is not refused: its scenario is recorded as unsupported, with why."""
    from benchdb.backends import registry

    info = registry.info(opts.backend)          # an unknown backend is refused first

    def refuse(name: str, value: str, what: str, valid: tuple[str, ...], more: str = "") -> BenchdbError:
        flag = CORE_BY_NAME[name].cli_flag
        head = f"{flag} {value!r}" if where == "command line" else f"{where}: {name} {value!r}"
        return BenchdbError(f"{head} is not {what}{did_you_mean(value, valid)}; use one of {', '.join(valid)}{more}")

    for p in opts.precisions:
        if p not in PRECISIONS:
            raise refuse("precisions", p, "a precision", PRECISIONS)
    if info.modes and opts.modes != CORE_BY_NAME["modes"].default:
        for mode in opts.modes:
            if mode not in info.modes:
                raise refuse("modes", mode, f"a mode of {opts.backend}", info.modes)
    families = tuple(dict.fromkeys((*DEVICE_FAMILIES, *(f for b in registry.backends().values() for f in b.devices))))
    device = str(opts.device).strip().lower()
    m = _DEVICE.match(device)
    if not (m and m.group(1) in families) and not device.startswith("remote:"):
        raise refuse("device", opts.device, "a device", families, " (with :N for one of several, e.g. cuda:1)")


def value_of(opts: RunOptions, opt: Option) -> Any:
    """The option's value in a run (its declared default when not set)."""
    if opt.name in CORE_BY_NAME:
        obj: Any = opts
        for part in opt.field.split("."):
            obj = getattr(obj, part)
        return obj
    return opts.backend_options.get(opt.name, opt.default)


def argument(opt: Option, value: Any) -> list[str]:
    """``opt`` with its option value (the field's: a negated flag's value is the field's, not the
    flag's) as ``benchdb run`` arguments that read back to it; none for an unset value."""
    if opt.kind == "bool":
        return [opt.cli_flag] if bool(value) != opt.negate else []
    if value is None or (opt.kind in ("words", "ints") and not value):   # unset: the child's default
        return []
    if opt.repeat:
        return [part for v in value for part in (opt.cli_flag, str(v))]
    if opt.kind in ("words", "ints"):
        return [opt.cli_flag, ",".join(map(str, value))]
    if opt.kind in QUANTITIES:
        return [opt.cli_flag, quantity_text(opt, value)]
    return [opt.cli_flag, repr(value) if opt.kind == "float" else str(value)]


def child_args(opts: RunOptions, overrides: Mapping[str, Any]) -> list[str]:
    """``benchdb run`` arguments that give a child process exactly these options, with
    ``overrides`` (by option name) in place of the run's values."""
    args = ["run"]
    for opt in (*CORE, *of_backend(opts.backend)):
        if opt.name in CORE_BY_NAME and opt is not CORE_BY_NAME[opt.name]:
            continue
        value = overrides[opt.name] if opt.name in overrides else value_of(opts, opt)
        if opt.name == "threads" and value is None:
            value = opts.thread_count
        args += argument(opt, value)
    return args


def reproduce_args(opts: RunOptions, overrides: Mapping[str, Any]) -> list[str]:
    """``benchdb run`` arguments that measure these options again, ``overrides`` (by option name) in
    place of the run's values: every option whose value is not its declared default, and the thread
    count (the default depends on the machine). Where the files go (--out), tags and co-runners (set
    by --parallel, true of the original run only) are left to the reader."""
    args = ["run"]
    for opt in (*CORE, *of_backend(opts.backend)):
        if opt.name in CORE_BY_NAME and opt is not CORE_BY_NAME[opt.name]:
            continue
        if opt.name in ("out", "tags", "co_runners"):
            continue
        value = overrides[opt.name] if opt.name in overrides else value_of(opts, opt)
        if opt.name == "threads" and value is None:
            value = opts.thread_count
        default = opt.default
        if isinstance(value, (list, tuple)) and isinstance(default, (list, tuple)):
            value, default = tuple(value), tuple(default)
        if value == default and opt.name not in ("backend", "models", "threads") and opt.name not in overrides:
            continue
        args += argument(opt, value)
    return args


def identity_options(opts: RunOptions) -> dict[str, Any]:
    """The options declared part of the identity, with this run's values: the backend's own (set
    or not), and the core ones that are set."""
    core = {o.name: value_of(opts, o) for o in CORE if o.identity and value_of(opts, o) is not None}
    return {**core, **{o.name: value_of(opts, o) for o in of_backend(opts.backend) if o.identity}}


def backend_option(opts: RunOptions, name: str) -> Any:
    """The value of one of the backend's own options in this run (its declared default when not set)."""
    for opt in of_backend(opts.backend):
        if opt.name == name:
            return value_of(opts, opt)
    raise KeyError(f"backend {opts.backend} declares no option {name!r}")


def effective_backend_options(opts: RunOptions) -> dict[str, Any]:
    """Every option the backend declares with its value in this run (JSON-plain)."""
    values = {**{o.name: value_of(opts, o) for o in of_backend(opts.backend)}, **opts.backend_options}
    return {k: (list(v) if isinstance(v, tuple) else v) for k, v in sorted(values.items())}


def recorded_config(opts: RunOptions) -> dict[str, Any]:
    """The run's configuration as recorded in every file it writes (read back by
    :meth:`benchdb.harness.scenario.RunOptions.from_config`)."""
    return {"backend": opts.backend, "models": list(opts.models), "device": opts.device,
            "batch_sizes": list(opts.batch_sizes), "seq_lens": list(opts.seq_lens),
            "modes": list(opts.modes), "precisions": list(opts.precisions),
            "threads": opts.thread_count, "stop_rule": opts.rule.__dict__.copy(),
            "max_background_cpu": opts.max_background_cpu, "tags": list(opts.tags),
            "task": opts.task, "gen_tokens": opts.gen_tokens, "isolate": opts.isolate,
            "timeout_s": opts.timeout_s, "load_timeout_s": opts.load_timeout_s,
            "verify_only": opts.verify_only, "repeats": opts.repeats,
            **({"co_runners": opts.co_runners} if opts.co_runners else {}),
            **({"quantization": opts.quantization} if opts.quantization else {}),
            **({"sts": opts.sts} if opts.sts else {}),
            "backend_options": effective_backend_options(opts)}

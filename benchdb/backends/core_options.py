"""Run options, declared once: what is built from the declarations (the core options every backend
takes, :mod:`benchdb.backends.core_declared`, and each backend's own, :attr:`BackendInfo.options`).

From one :class:`~benchdb.backends.protocol.Option` come its ``benchdb run`` flag (:mod:`benchdb.cli.run`
builds the click options from :func:`every`), its config-file key (:func:`config_value`,
:func:`apply`), the arguments that pass it to an ``--ab`` child (:func:`child_args`) and, for a
backend's identity option, its place in the scenario's options (:func:`identity_options`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from benchdb import parsing
from benchdb.backends.core_declared import CORE, CORE_BY_NAME
from benchdb.backends.protocol import Option
from benchdb.errors import BenchdbError, did_you_mean
from benchdb.harness.scenario import RunOptions


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
                continue  # a backend cannot redefine a core option
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


#: Option kinds read by :mod:`benchdb.parsing`, with the forms their help names.
QUANTITIES = {
    "share": parsing.SHARE_FORMS,
    "percent": "30% or 0.3",
    "duration": f"{parsing.DURATION_FORMS} or bare seconds",
}


def quantity_of(opt: Option, value: str | float) -> float:
    """The value of a share, percent or duration option (its text, or a config file's number) in
    the unit it is kept in (:data:`benchdb.backends.protocol.Kind`); :class:`benchdb.parsing.QuantityError`."""
    if opt.kind == "duration":
        return parsing.duration(value, minimum=opt.minimum or 0.0)
    scale = 100.0 if opt.kind == "percent" else 1.0
    top = 1.0 if opt.maximum is None else opt.maximum / scale
    return parsing.share(value, minimum=(opt.minimum or 0.0) / scale, maximum=top) * scale


def quantity_text(opt: Option, value: float) -> str:
    """A share, percent or duration option's value as text :func:`quantity_of` reads back."""
    if opt.kind == "duration":
        return parsing.duration_text(value)
    return parsing.percent_text(value / 100.0 if opt.kind == "percent" else value)


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
        except parsing.QuantityError as exc:
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


def apply(opts: RunOptions, values: Mapping[str, Any], where: str = "options", strict: bool = False) -> RunOptions:
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
                raise BenchdbError(
                    f"{opt.cli_flag} is an option of {', '.join(owners)}; backend {opts.backend} does not take it"
                )
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

    info = registry.info(opts.backend)  # an unknown backend is refused first

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
    if value is None or (opt.kind in ("words", "ints") and not value):  # unset: the child's default
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
    return {
        "backend": opts.backend,
        "models": list(opts.models),
        "device": opts.device,
        "batch_sizes": list(opts.batch_sizes),
        "seq_lens": list(opts.seq_lens),
        "modes": list(opts.modes),
        "precisions": list(opts.precisions),
        "threads": opts.thread_count,
        "stop_rule": opts.rule.__dict__.copy(),
        "max_background_cpu": opts.max_background_cpu,
        "tags": list(opts.tags),
        "task": opts.task,
        "gen_tokens": opts.gen_tokens,
        "isolate": opts.isolate,
        "timeout_s": opts.timeout_s,
        "load_timeout_s": opts.load_timeout_s,
        "verify_only": opts.verify_only,
        "repeats": opts.repeats,
        **({"co_runners": opts.co_runners} if opts.co_runners else {}),
        **({"quantization": opts.quantization} if opts.quantization else {}),
        **({"sts": opts.sts} if opts.sts else {}),
        "backend_options": effective_backend_options(opts),
    }

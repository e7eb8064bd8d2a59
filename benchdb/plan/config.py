"""Run configuration files and predefined suites (YAML or JSON).

A file holds shared settings and a list of run entries; every axis may be a single value or a
list, and lists expand to their cross product; ``exclude`` entries drop the combinations they
match. Example::

    settings: {min_time: 0.5, max_time: 10, timeout: 600, out: results, tags: [nightly]}
    runs:
      - backends: [pytorch, onnxruntime]
        models: [tiny:bert, tiny:vit]
        batch_sizes: [1, 8]
        seq_lens: 128
    exclude:
      - {backend: onnxruntime, batch_size: 8}

``${VAR}`` anywhere in a string is replaced from the environment (an unset variable is an error).
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from benchdb.backends import core_options as options
from benchdb.backends.registry import backends as _backends
from benchdb.errors import BenchdbError, did_you_mean
from benchdb.harness.scenario import RunOptions
from benchdb.schema import documents

_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")

EXCLUDE_KEYS = ("model", "backend", "device", "mode", "precision", "batch_size", "seq_len", "input_shape")


@dataclass
class Config:
    source: str
    runs: list[RunOptions]
    exclude: list[dict[str, Any]] = field(default_factory=list)
    description: str = ""


def suites_dir():
    return resources.files("benchdb.plan").joinpath("suites")


def suite_names() -> list[str]:
    return sorted(p.name[:-5] for p in suites_dir().iterdir() if p.name.endswith(".yaml"))


def _substitute(value: Any, where: str) -> Any:
    if isinstance(value, str):

        def sub(m):
            name = m.group(1)
            if name not in os.environ:
                raise BenchdbError(f"{where}: environment variable ${{{name}}} is not set")
            return os.environ[name]

        return _VAR.sub(sub, value)
    if isinstance(value, list):
        return [_substitute(v, where) for v in value]
    if isinstance(value, dict):
        return {k: _substitute(v, f"{where}.{k}") for k, v in value.items()}
    return value


def _values(mapping: dict[str, Any], where: str, axes: bool) -> dict[str, Any]:
    """Option values by option name from config keys (run entries may hold axes too)."""
    known = options.by_config_key()
    out: dict[str, Any] = {}
    for key, value in mapping.items():
        opt = known.get(key)
        if opt is None or (opt.axis and not axes):
            allowed = sorted(k for k, o in known.items() if axes or not o.axis)
            what = "key" if axes else "setting"
            raise BenchdbError(
                f"{where}: unknown {what} {key!r}{did_you_mean(key, allowed)}; allowed: {', '.join(allowed)}"
            )
        out[opt.name] = options.config_value(opt, value, f"{where}: config key {key!r}")
    return out


def parse(data: Any, source: str) -> Config:
    if not isinstance(data, dict):
        raise BenchdbError(f"{source}: the top level must be a mapping with 'runs' (and 'settings', 'exclude')")
    data = _substitute(data, source)
    allowed = {"description", "settings", "runs", "exclude"}
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise BenchdbError(
            f"{source}: unknown key {unknown[0]!r}{did_you_mean(unknown[0], allowed)}; allowed: "
            f"{', '.join(sorted(allowed))}"
        )
    settings = data.get("settings") or {}
    if not isinstance(settings, dict):
        raise BenchdbError(f"{source}: 'settings' must be a mapping")
    shared = _values(settings, source, axes=False)
    entries = data.get("runs")
    if not isinstance(entries, list) or not entries:
        raise BenchdbError(f"{source}: 'runs' must be a non-empty list of run entries")
    runs = [opts for i, entry in enumerate(entries) for opts in _entry(entry, shared, f"{source}: runs[{i}]")]
    return Config(source, runs, _exclude(data.get("exclude") or [], source), str(data.get("description") or ""))


def _entry(entry: Any, shared: dict[str, Any], where: str) -> list[RunOptions]:
    """The runs of one run entry: one per backend and device, the shared settings under its own."""
    if not isinstance(entry, dict):
        raise BenchdbError(f"{where} must be a mapping")
    values = _values(entry, where, axes=True)
    known = ", ".join(sorted(_backends()))
    if "backend" not in values:
        raise BenchdbError(f"{where}: 'backend' is required (one of {known})")
    if "models" not in values:
        raise BenchdbError(f"{where}: 'model' is required (one spec or a list)")
    for b in values["backend"]:
        if b not in _backends():
            raise BenchdbError(f"{where}: backend {b!r} is not one of {known}{did_you_mean(b, _backends())}")
    rest = {k: v for k, v in {**shared, **values}.items() if k not in ("backend", "device")}
    return [
        options.apply(RunOptions(backend=backend, models=values["models"], device=device), rest, where)
        for backend in values["backend"]
        for device in values.get("device", ("cpu",))
    ]


def _exclude(exclude: Any, source: str) -> list[dict[str, Any]]:
    if not isinstance(exclude, list) or not all(isinstance(e, dict) and e for e in exclude):
        raise BenchdbError(
            f"{source}: 'exclude' must be a list of mappings like {{backend: onnxruntime, batch_size: 8}}"
        )
    for e in exclude:
        bad = sorted(set(e) - set(EXCLUDE_KEYS))
        if bad:
            raise BenchdbError(
                f"{source}: exclude key {bad[0]!r} is not one of {', '.join(EXCLUDE_KEYS)}"
                f"{did_you_mean(bad[0], EXCLUDE_KEYS)}"
            )
    return exclude


def load(path: str | os.PathLike) -> Config:
    p = Path(path)
    if not p.exists():
        raise BenchdbError(f"config file {p} does not exist")
    try:
        data = documents.read_document(p)
    except documents.DocumentError as exc:
        raise BenchdbError(f"config file {p} is {exc.problem}") from None
    except OSError as exc:
        raise BenchdbError(f"config file {p} cannot be read ({exc.strerror or exc})") from None
    return parse(data, str(p))


def load_suite(name: str) -> Config:
    if name not in suite_names():
        raise BenchdbError(
            f"unknown suite {name!r}{did_you_mean(name, suite_names())}; choose one of {', '.join(suite_names())}"
        )
    data = yaml.safe_load(suites_dir().joinpath(f"{name}.yaml").read_text(encoding="utf-8"))
    return parse(data, f"suite {name}")


def matching_rules(exclude: list[dict], scenario) -> list[int]:
    """Indexes of the exclude rules that match a scenario."""
    fields = {
        "model": scenario.model_id,
        "backend": scenario.backend,
        "device": scenario.device,
        "mode": scenario.mode,
        "precision": scenario.precision,
        "batch_size": scenario.batch_size,
        "seq_len": scenario.settings.get("seq_len"),
        "input_shape": scenario.input_shape,
    }
    return [i for i, e in enumerate(exclude) if all(fields[k] == v for k, v in e.items())]


def parse_shard(text: str) -> tuple[int, int]:
    m = re.match(r"^(\d+)/(\d+)$", text.strip())
    if not m or not 1 <= int(m.group(1)) <= int(m.group(2)):
        raise BenchdbError(f"--shard {text!r} must be i/n with 1 <= i <= n, e.g. 2/4")
    return int(m.group(1)), int(m.group(2))


def runs_from(values: Mapping[str, Any], given: Collection[str] = ()) -> tuple[list[RunOptions], list[dict], str]:
    """The runs a command describes, as (runs, exclude rules, source): the runs of ``config_file``
    or ``suite`` with the values in ``given`` over every one of them, or one run of ``backend`` and
    ``models`` with every run option in ``values``; ``benches`` (bench files) are models of backend
    userbench. The Python API of `benchdb run`'s options: ``values`` holds the options by parameter
    name (``models``, ``batch_sizes``, ``config_file``, ...), ``given`` names those set on purpose,
    e.g. ``runs_from({"config_file": "bench.yaml", "repeats": 3}, given={"repeats"})``."""
    from benchdb.harness import machine_report

    declared = {opt.param: opt for opt, _ in options.every()}
    explicit = set(given)
    values = {"benches": (), "config_file": None, "suite": None, "backend": None, "models": (), **values}
    if values["benches"]:
        if values["config_file"] or values["suite"]:
            raise BenchdbError(
                "give --bench or --config/--suite, not both; a config file names benches as models of backend userbench"
            )
        if values["backend"] not in (None, "userbench"):
            raise BenchdbError(f"--bench runs backend userbench; leave out --backend {values['backend']}")
        values = {**values, "backend": "userbench", "models": tuple(values["models"]) + tuple(values["benches"])}
    if values["config_file"] and values["suite"]:
        raise BenchdbError("give --config or --suite, not both")
    if values["config_file"] or values["suite"]:
        cfg = load(values["config_file"]) if values["config_file"] else load_suite(values["suite"])
        runs, exclude, source = cfg.runs, cfg.exclude, cfg.source
    else:
        if not values["backend"] or not values["models"]:
            raise BenchdbError("give --backend and --model, or --config FILE / --suite NAME (see `benchdb suites`)")
        runs = [RunOptions(backend=values["backend"], models=tuple(values["models"]))]
        exclude, source = [], "command line"
        explicit |= {o.param for o in options.CORE if o.name not in ("backend", "models")}
    chosen = {}
    for param in explicit & set(declared) & set(values):  # a command may take only some (bisect)
        opt = declared[param]
        value = values[param]
        chosen[opt.name] = (not value) if opt.negate else (tuple(value) if isinstance(value, (list, tuple)) else value)
    runs = [options.apply(opts, chosen, "command line", strict=len(runs) == 1) for opts in runs]
    machine_report.check_threads(runs)
    return runs, exclude, source


def check_combinations(values: Mapping[str, Any]) -> None:
    """Refuse `benchdb run` options that do not go together: --parallel's form, and the A/B options'
    pairs. ``values`` holds the options by parameter name, as for :func:`runs_from`."""
    v = {k: values.get(k) for k in ("parallel", "ab", "ab_url", "ab_hardware_file", "duet")}
    if v["parallel"] is not None and (v["parallel"] != "auto" and not v["parallel"].isdigit() or v["parallel"] == "0"):
        raise BenchdbError(f"--parallel {v['parallel']}: give auto or a number of workers (1 or more)")
    if v["ab"] and v["ab_url"]:
        raise BenchdbError(
            "give --ab BASE CAND (two interpreters) or --ab-url BASE_URL CAND_URL (two endpoints), not both"
        )
    if v["ab_hardware_file"] and not v["ab_url"]:
        raise BenchdbError("--ab-hardware-file gives the hardware of the two --ab-url endpoints; give --ab-url too")
    if v["ab_url"] and v["duet"]:
        raise BenchdbError("--duet runs two interpreters' processes at once; --ab-url alternates two endpoints")
    if (v["ab"] or v["ab_url"]) and v["parallel"]:
        raise BenchdbError(
            "--parallel runs one side's scenarios at once; for --ab use --duet (both sides at once on mirrored cores)"
        )
    if v["duet"] and not (v["ab"] or v["ab_url"]):
        raise BenchdbError("--duet runs the two sides of --ab BASE CAND at the same time; give --ab too")

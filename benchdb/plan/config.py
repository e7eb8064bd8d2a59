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

import json
import os
import re
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from benchdb.errors import BenchdbError
from benchdb.backends.base import RunOptions
from benchdb.backends.registry import backends as _backends

_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")

#: settings key -> (type, RunOptions/StopRule field)
SETTINGS: dict[str, tuple[type, str]] = {
    "warmup": (int, "rule.warmup_iters"), "min_iters": (int, "rule.min_iters"),
    "min_time": (float, "rule.min_time_s"), "max_time": (float, "rule.max_time_s"),
    "target_ci": (float, "rule.target_ci"), "threads": (int, "threads"), "timeout": (float, "timeout_s"),
    "load_timeout": (float, "load_timeout_s"), "gen_tokens": (int, "gen_tokens"),
    "max_background_cpu": (float, "max_background_cpu"), "task": (str, "task"),
    "verify_only": (bool, "verify_only"), "isolate": (bool, "isolate"),
    "out": (str, "out"), "tags": (list, "tags"), "ep": (list, "providers"), "repeats": (int, "repeats"),
}
#: run-entry axes -> RunOptions field (plural and singular spellings accepted)
AXES = {"backends": "backend", "backend": "backend", "devices": "device", "device": "device",
        "models": "models", "model": "models", "modes": "modes", "mode": "modes",
        "precisions": "precisions", "precision": "precisions", "batch_sizes": "batch_sizes",
        "batch_size": "batch_sizes", "seq_lens": "seq_lens", "seq_len": "seq_lens"}
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


def _as_list(value: Any, key: str, kind: type) -> list:
    items = value if isinstance(value, list) else [value]
    if not items:
        raise BenchdbError(f"config key {key!r}: give at least one value")
    out = []
    for v in items:
        if kind is int:
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise BenchdbError(f"config key {key!r}: {v!r} is not a positive integer")
        elif not isinstance(v, str) or not v:
            raise BenchdbError(f"config key {key!r}: {v!r} is not a non-empty string")
        out.append(v)
    return out


def _setting(key: str, value: Any) -> Any:
    kind, _ = SETTINGS[key]
    if kind is bool and isinstance(value, bool):
        return value
    if kind is int and isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    if kind is float and isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
        return float(value)
    if kind is str and isinstance(value, str):
        return value
    if kind is list:
        return tuple(_as_list(value, key, str))
    raise BenchdbError(f"config key {key!r}: {value!r} is not a valid {kind.__name__}")


def apply_settings(opts: RunOptions, settings: dict[str, Any]) -> RunOptions:
    rule_changes, changes = {}, {}
    for key, value in settings.items():
        target = SETTINGS[key][1]
        if target.startswith("rule."):
            rule_changes[target[5:]] = value
        elif target == "out":
            changes["out"] = value
        else:
            changes[target] = value
    if rule_changes:
        try:
            changes["rule"] = replace(opts.rule, **rule_changes)
        except ValueError as exc:
            raise BenchdbError(f"config settings: {exc}") from None
    return replace(opts, **changes)


def parse(data: Any, source: str) -> Config:
    if not isinstance(data, dict):
        raise BenchdbError(f"{source}: the top level must be a mapping with 'runs' (and 'settings', 'exclude')")
    data = _substitute(data, source)
    allowed = {"description", "settings", "runs", "exclude"}
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise BenchdbError(f"{source}: unknown key {unknown[0]!r}; allowed: {', '.join(sorted(allowed))}")
    settings = data.get("settings") or {}
    if not isinstance(settings, dict):
        raise BenchdbError(f"{source}: 'settings' must be a mapping")
    bad = sorted(set(settings) - set(SETTINGS))
    if bad:
        raise BenchdbError(f"{source}: unknown setting {bad[0]!r}; allowed: {', '.join(sorted(SETTINGS))}")
    settings = {k: _setting(k, v) for k, v in settings.items()}
    entries = data.get("runs")
    if not isinstance(entries, list) or not entries:
        raise BenchdbError(f"{source}: 'runs' must be a non-empty list of run entries")
    runs: list[RunOptions] = []
    for i, entry in enumerate(entries):
        where = f"{source}: runs[{i}]"
        if not isinstance(entry, dict):
            raise BenchdbError(f"{where} must be a mapping")
        extra = sorted(set(entry) - set(AXES) - set(SETTINGS))
        if extra:
            raise BenchdbError(f"{where}: unknown key {extra[0]!r}; allowed: {', '.join(sorted(set(AXES) | set(SETTINGS)))}")
        axes: dict[str, list] = {}
        for key, value in entry.items():
            if key in AXES:
                kind = int if AXES[key] in ("batch_sizes", "seq_lens") else str
                axes[AXES[key]] = _as_list(value, key, kind)
        if "backend" not in axes:
            raise BenchdbError(f"{where}: 'backends' is required (one of {', '.join(sorted(_backends()))})")
        if "models" not in axes:
            raise BenchdbError(f"{where}: 'models' is required")
        for b in axes["backend"]:
            if b not in _backends():
                raise BenchdbError(f"{where}: backend {b!r} is not one of {', '.join(sorted(_backends()))}")
        local = {k: _setting(k, v) for k, v in entry.items() if k in SETTINGS}
        for backend in axes["backend"]:
            for device in axes.get("device", ["cpu"]):
                opts = RunOptions(backend=backend, models=tuple(axes["models"]), device=device,
                                  batch_sizes=tuple(axes.get("batch_sizes", [1])),
                                  seq_lens=tuple(axes.get("seq_lens", [128])),
                                  modes=tuple(axes.get("modes", ["eager"])),
                                  precisions=tuple(axes.get("precisions", ["fp32"])))
                runs.append(apply_settings(opts, {**settings, **local}))
    exclude = data.get("exclude") or []
    if not isinstance(exclude, list) or not all(isinstance(e, dict) and e for e in exclude):
        raise BenchdbError(f"{source}: 'exclude' must be a list of mappings like {{backend: onnxruntime, batch_size: 8}}")
    for e in exclude:
        bad = sorted(set(e) - set(EXCLUDE_KEYS))
        if bad:
            raise BenchdbError(f"{source}: exclude key {bad[0]!r} is not one of {', '.join(EXCLUDE_KEYS)}")
    return Config(source, runs, exclude, str(data.get("description") or ""))


def load(path: str | os.PathLike) -> Config:
    p = Path(path)
    if not p.exists():
        raise BenchdbError(f"config file {p} does not exist")
    text = p.read_text(encoding="utf-8")
    try:
        data = json.loads(text) if p.suffix.lower() == ".json" else yaml.safe_load(text)
    except (ValueError, yaml.YAMLError) as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
        what = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise BenchdbError(f"config file {p} is not valid {'JSON' if p.suffix == '.json' else 'YAML'}: "
                           f"{where}{what}") from None
    return parse(data, str(p))


def load_suite(name: str) -> Config:
    if name not in suite_names():
        raise BenchdbError(f"unknown suite {name!r}; choose one of {', '.join(suite_names())}")
    data = yaml.safe_load(suites_dir().joinpath(f"{name}.yaml").read_text(encoding="utf-8"))
    return parse(data, f"suite {name}")


def matching_rules(exclude: list[dict], scenario) -> list[int]:
    """Indexes of the exclude rules that match a scenario."""
    fields = {"model": scenario.model_id, "backend": scenario.backend, "device": scenario.device,
              "mode": scenario.mode, "precision": scenario.precision, "batch_size": scenario.batch_size,
              "seq_len": scenario.settings.get("seq_len"), "input_shape": scenario.input_shape}
    return [i for i, e in enumerate(exclude) if all(fields[k] == v for k, v in e.items())]


_DURATION = re.compile(r"^(\d+(?:\.\d+)?)\s*([smhdw])$")


def parse_duration(text: str) -> float:
    """'30m', '12h', '7d', '2w' -> seconds."""
    m = _DURATION.match(text.strip())
    if not m:
        raise BenchdbError(f"duration {text!r} is not like 30m, 12h, 7d or 2w")
    return float(m.group(1)) * {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}[m.group(2)]


def parse_shard(text: str) -> tuple[int, int]:
    m = re.match(r"^(\d+)/(\d+)$", text.strip())
    if not m or not 1 <= int(m.group(1)) <= int(m.group(2)):
        raise BenchdbError(f"--shard {text!r} must be i/n with 1 <= i <= n, e.g. 2/4")
    return int(m.group(1)), int(m.group(2))

"""The userbench runner: your own Python functions, measured like any model.

Model spec (``--bench PATH`` or ``--backend userbench --model PATH``): a ``.py`` file (any name),
a folder (every ``bench_*.py`` file under it, recursively; hidden folders, ``__pycache__``,
``venv``, ``node_modules`` and ``site-packages`` are skipped), or ``FILE::FUNCTION`` for one bench.

- **Benches** are the module-level functions named ``bench_*`` defined in the file (not imported
  into it), in definition order.
- **Parameters** are declared with ``@benchdb.bench.params(n=[64, 128], dtype=["float32"])``;
  each combination is one scenario, the function is called with it as keyword arguments. Key:
  backend ``userbench``, model id ``<file stem>::<function>``, mode ``eager``, precision from a
  ``precision`` (else ``dtype``) parameter (``float32`` -> ``fp32``, ``float16`` -> ``fp16``,
  ``bfloat16`` -> ``bf16``, ``float64`` -> ``fp64``; other values as written) or ``na``, batch size
  from a ``batch_size`` parameter or 1, input shape the other parameters as ``k=v,k=v`` (sorted).
- **What is timed**: the function is called once per scenario. If that call returns a callable,
  the call was the set-up (recorded as ``setup_s``) and only the returned zero-argument callable
  is timed; otherwise the whole function is timed per call, and that first call is
  ``first_call_s``.
- **Environment**: a module-level ``ENV = ["BENCH_SCALE", ...]`` declares the environment
  variables that change the work; their values (``null`` when unset) and the thread count are
  the scenario's options (:class:`benchdb.backends.userbench.options.UserbenchOptions`), so a different value
  is a different scenario (and series).

``plan`` imports each file once in this process to find its benches and parameters; each bench
then runs in its own child process (the model spec ``<absolute file>::<function>``), where the
file is imported again. The file's folder is put on ``sys.path`` so it can import its neighbours.
"""

from __future__ import annotations

import hashlib
import inspect
import itertools
import json
import os
import platform
import time
from collections.abc import Callable, Iterator
from datetime import datetime, timezone
from pathlib import Path
from types import ModuleType
from typing import Any

from threadpoolctl import threadpool_limits

from benchdb.backends.userbench.discovery import MODULES, SEP, discover, import_bench, load_module, model_id, split_spec
from benchdb.backends.userbench.options import UserbenchOptions
from benchdb.bench import PARAMS_ATTR
from benchdb.errors import BenchdbError
from benchdb.harness import hardware
from benchdb.harness.scenario import Conditions, Outcome, RunOptions, Scenario
from benchdb.harness.timing import measure
from benchdb.harness.validity import error_text, fail_all, judge, measurement_rows, status_of
from benchdb.schema.identity import normalize_device

NAME = "userbench"
#: Parameters that fill key columns instead of the input shape.
PRECISION_PARAMS = ("precision", "dtype")
BATCH_PARAM = "batch_size"
PRECISIONS = {
    "float32": "fp32",
    "float": "fp32",
    "single": "fp32",
    "float16": "fp16",
    "half": "fp16",
    "bfloat16": "bf16",
    "float64": "fp64",
    "double": "fp64",
}


def software() -> dict:
    return {"python": platform.python_version(), "implementation": platform.python_implementation()}


def hardware_of(device: str) -> dict:
    return hardware.cpu_fingerprint()


# --- parameters ------------------------------------------------------------------------------


def _label(value: Any) -> str:
    """A parameter value as text: names of types and functions, str() of the rest."""
    if inspect.isclass(value) or inspect.isroutine(value):
        return value.__name__
    return str(value)


def precision_of(value: Any) -> str:
    text = _label(value).removeprefix("torch.").removeprefix("numpy.").lower()
    return PRECISIONS.get(text, text)


def combinations(fn: Callable, where: str) -> list[dict[str, Any]]:
    """Every combination of the function's declared parameters (one empty one when none)."""
    axes = getattr(fn, PARAMS_ATTR, None) or {}
    if not isinstance(axes, dict):
        raise BenchdbError(
            f"bench {where}: {PARAMS_ATTR} must be a dict; declare parameters with @benchdb.bench.params(name=[values])"
        )
    combos = [dict(zip(axes, values, strict=True)) for values in itertools.product(*axes.values())]
    try:
        signature = inspect.signature(fn)
        for combo in combos:
            signature.bind(**combo)
    except TypeError as exc:
        raise BenchdbError(
            f"bench {where}: its parameters {', '.join(axes) or '(none)'} do not fit its "
            f"signature {fn.__name__}{signature}: {exc}"
        ) from None
    return combos


def key_fields(combo: dict[str, Any], where: str) -> tuple[str, int, str]:
    """(precision, batch size, input shape) of one combination of parameters."""
    rest = dict(combo)
    precision = "na"
    for name in PRECISION_PARAMS:
        if name in rest:
            precision = precision_of(rest.pop(name))
            break
    batch_size = 1
    if BATCH_PARAM in rest:
        batch_size = rest.pop(BATCH_PARAM)
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
            raise BenchdbError(f"bench {where}: batch_size must be a positive integer, found {batch_size!r}")
    shape = ",".join(f"{k}={_label(v)}" for k, v in sorted(rest.items()))
    return precision, batch_size, shape


def env_text(module: ModuleType, where: str) -> str | None:
    """The module's declared environment (``ENV = [...]``) as canonical JSON text; None if none."""
    names = getattr(module, "ENV", None)
    if names is None:
        return None
    if (
        isinstance(names, str)
        or not isinstance(names, (list, tuple))
        or not all(isinstance(n, str) and n for n in names)
    ):
        raise BenchdbError(
            f'bench file {where}: ENV must be a list of environment variable names, e.g. ENV = ["BENCH_SCALE"]'
        )
    if not names:
        return None
    return json.dumps({n: os.environ.get(n) for n in names}, sort_keys=True, separators=(",", ":"))


# --- the backend protocol --------------------------------------------------------------------


def plan(opts: RunOptions) -> list[tuple[str, list[Scenario]]]:
    device = normalize_device(opts.device)
    out, seen = [], set()
    for spec in opts.models:
        for path, name in discover(spec):
            model = f"{path}{SEP}{name}"
            if model in seen:
                continue
            seen.add(model)
            module = import_bench(path)
            mid = model_id(path, name)
            options = UserbenchOptions(threads=opts.thread_count, env=env_text(module, str(path))).as_dict()
            scenarios: list[Scenario] = []
            keys: dict[tuple[str, int, str], dict[str, Any]] = {}
            for i, combo in enumerate(combinations(getattr(module, name), mid)):
                precision, bs, shape = key_fields(combo, mid)
                if (precision, bs, shape) in keys:
                    raise BenchdbError(
                        f"bench {mid}: parameters {keys[(precision, bs, shape)]} and {combo} give "
                        f"the same scenario (precision {precision}, batch size {bs}, {shape!r})"
                    )
                keys[(precision, bs, shape)] = combo
                scenarios.append(
                    Scenario(
                        mid,
                        NAME,
                        device,
                        "eager",
                        precision,
                        bs,
                        shape,
                        options,
                        {"bench": model, "params_index": i, "params": {k: _label(v) for k, v in combo.items()}},
                    )
                )
            out.append((model, scenarios))
    return out


def _parse_model(spec: str) -> tuple[Path, str]:
    text, name = split_spec(spec)
    if not name:
        raise BenchdbError(f"userbench model {spec!r} is not FILE::FUNCTION")
    return Path(text), name


def model_info(spec: str) -> dict:
    path, name = _parse_model(spec)
    try:
        revision = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    except OSError as exc:
        raise BenchdbError(f"bench file {path} cannot be read ({exc.strerror or exc})") from None
    return {
        "model_id": model_id(path, name),
        "revision": revision,
        "model_type": "python",
        "architecture": "python.function",
        "family": "userbench",
        "task": "bench",
        "num_parameters": None,
        "flops_per_item": None,
        "source": f"{path.resolve()}{SEP}{name}",
    }


def _prepare(fn: Callable, combo: dict[str, Any]) -> tuple[Callable[[], object], float | None, float | None]:
    """(what to time, set-up seconds or None, first call seconds or None): the first call either
    returns the callable to time (it was the set-up) or was the first timed call itself."""
    t0 = time.perf_counter()
    returned = fn(**combo)
    dt = time.perf_counter() - t0
    if callable(returned):
        return returned, dt, None
    return (lambda: fn(**combo)), None, dt


def run_model(spec: str, scenarios: list[Scenario], opts: RunOptions, on_start=None) -> Iterator[Outcome]:
    info = model_info(spec)
    path, name = _parse_model(spec)
    mid = info["model_id"]
    fresh = path.resolve() not in MODULES
    t0 = time.perf_counter()
    try:
        module = load_module(path)
        fn = getattr(module, name)
        combos = combinations(fn, mid)
        env = env_text(module, str(path))
    except (Exception, SystemExit) as exc:
        yield from fail_all(scenarios, info, exc, on_start)
        return
    load_s = time.perf_counter() - t0 if fresh else None
    for i, sc in enumerate(scenarios):
        if on_start:
            on_start(i)
        started = datetime.now(timezone.utc).isoformat()
        if sc.device != "cpu":
            yield Outcome(
                sc,
                info,
                status="unsupported",
                started_at=started,
                error=f"userbench times Python code on the host clock (device {sc.device!r}); use --device cpu",
            )
            continue
        index = sc.settings.get("params_index", 0)
        problem = None
        if not 0 <= index < len(combos) or key_fields(combos[index], mid) != (
            sc.precision,
            sc.batch_size,
            sc.input_shape,
        ):
            problem = "its parameters changed between the plan and the run"
        elif env != sc.options.get("env"):
            problem = f"its declared environment changed between the plan and the run (now {env})"
        if problem:
            yield Outcome(sc, info, status="failed", error=f"bench {mid}: {problem}", started_at=started)
            continue
        try:
            with threadpool_limits(limits=opts.thread_count):
                target, setup_s, first_s = _prepare(fn, combos[index])
                cond = Conditions.now(opts.thread_count)
                m = measure(target, opts.rule)
        except Exception as exc:  # a bench's failure is its scenario's status, the suite goes on
            yield Outcome(sc, info, status=status_of(exc), error=error_text(exc), started_at=started)
            continue
        if first_s is not None:
            m.first_call_s = first_s  # the very first call of the function, not measure()'s
        rows = measurement_rows(m)
        if load_s is not None:
            rows.append(("load_s", "s", 0, 0.0, load_s))
        if setup_s is not None:
            rows.append(("setup_s", "s", 0, 0.0, setup_s))
        yield Outcome(
            sc,
            info,
            rows=rows,
            validity_reasons=judge(m, opts.rule, cond, opts.max_background_cpu),
            timing_method="host_clock",
            stop_reason=m.stop_reason,
            conditions=cond,
            started_at=started,
            extra={"timed": "returned_callable" if setup_s is not None else "call"},
        )

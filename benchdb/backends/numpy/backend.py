"""The numpy runner: float matrix products on the CPU, no ML library needed.

Model spec ``matmul:N``: an N x N weight matrix; one item is one (N x N) @ (N x N) product,
so a call at batch size B multiplies a (B, N, N) input by the weights (2 N^3 FLOPs per item).
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from datetime import datetime, timezone
from functools import partial

import numpy as np
from threadpoolctl import threadpool_info, threadpool_limits

from benchdb.backends.numpy.options import NumpyOptions
from benchdb.errors import BenchdbError
from benchdb.harness import hardware
from benchdb.harness.scenario import Conditions, Outcome, RunOptions, Scenario
from benchdb.harness.timing import measure
from benchdb.harness.validity import error_text, judge, measurement_rows, status_of
from benchdb.schema.identity import normalize_device

NAME = "numpy"
_SPEC = re.compile(r"^matmul:(\d+)$")
DTYPES = {"fp32": np.float32, "fp64": np.float64, "fp16": np.float16}
MAX_N = 16384


def software() -> dict:
    blas = [{"api": i.get("internal_api"), "version": i.get("version")} for i in threadpool_info()]
    return {"numpy": np.__version__, "blas": blas}


def hardware_of(device: str) -> dict:
    return hardware.cpu_fingerprint()


def _size(spec: str) -> int:
    m = _SPEC.match(spec)
    if not m or not 1 <= int(m.group(1)) <= MAX_N:
        raise BenchdbError(
            f"model {spec!r} is not a numpy model; use matmul:<N> with 1 <= N <= {MAX_N}, e.g. --model matmul:512"
        )
    return int(m.group(1))


def model_info(spec: str) -> dict:
    n = _size(spec)
    return {
        "model_id": spec,
        "revision": None,
        "model_type": "matmul",
        "architecture": "numpy.matmul",
        "family": "synthetic",
        "task": "matmul",
        "num_parameters": n * n,
        "flops_per_item": 2.0 * n**3,
    }


def plan(opts: RunOptions) -> list[tuple[str, list[Scenario]]]:
    out = []
    for spec in opts.models:
        n = _size(spec)
        out.append(
            (
                spec,
                [
                    Scenario(
                        spec,
                        NAME,
                        normalize_device(opts.device),
                        mode,
                        precision,
                        bs,
                        f"n={n}",
                        NumpyOptions(threads=opts.thread_count).as_dict(),
                    )
                    for mode in opts.modes
                    for precision in opts.precisions
                    for bs in opts.batch_sizes
                ],
            )
        )
    return out


def _unsupported(sc: Scenario, info: dict) -> str | None:
    if sc.device != "cpu":
        return f"numpy runs on the CPU only (device {sc.device!r})"
    if sc.mode != "eager":
        return f"numpy has no {sc.mode!r} mode; use --mode eager"
    if sc.precision not in DTYPES:
        return f"numpy has no {sc.precision} matmul; use one of {', '.join(DTYPES)}"
    return None


def run_model(spec: str, scenarios: list[Scenario], opts: RunOptions, on_start=None) -> Iterator[Outcome]:
    info = model_info(spec)
    n = _size(spec)
    t0 = time.perf_counter()
    weights = np.random.default_rng(0).standard_normal((n, n))
    load_s = time.perf_counter() - t0
    rng = np.random.default_rng(1)
    for i, sc in enumerate(scenarios):
        if on_start:
            on_start(i)
        started = datetime.now(timezone.utc).isoformat()
        reason = _unsupported(sc, info)
        if reason:
            yield Outcome(sc, info, status="unsupported", error=reason, started_at=started)
            continue
        dtype = DTYPES[sc.precision]
        try:
            w = weights.astype(dtype)
            x = rng.standard_normal((sc.batch_size, n, n)).astype(dtype)
            out = np.empty((sc.batch_size, n, n), dtype=dtype)
            with threadpool_limits(limits=opts.thread_count):
                cond = Conditions.now(opts.thread_count)
                m = measure(partial(np.matmul, x, w, out=out), opts.rule)
        except Exception as exc:  # a scenario's failure is its status, the suite goes on
            yield Outcome(sc, info, status=status_of(exc), error=error_text(exc), started_at=started)
            continue
        rows = measurement_rows(m)
        rows.append(("load_s", "s", 0, 0.0, load_s))
        yield Outcome(
            sc,
            info,
            rows=rows,
            validity_reasons=judge(m, opts.rule, cond, opts.max_background_cpu),
            timing_method="host_clock",
            stop_reason=m.stop_reason,
            conditions=cond,
            started_at=started,
        )

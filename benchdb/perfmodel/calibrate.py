"""Measured peaks of one device (`benchdb calibrate`): sustained matmul FLOP/s per precision and
STREAM-like memory bandwidth (copy, triad), per library that can drive the device, each the
median of several timed trials with its 95 % CI, stored as new rows of ``hardware_calibration``.

What is measured (each trial repeats the operation for at least ``trial_time`` seconds after one
untimed warm-up trial; value = work x repetitions / elapsed):

- ``matmul``: ``C = A @ B`` on N x N matrices: 2 N^3 FLOPs per product (numpy: fp32, fp64;
  PyTorch: fp32, bf16 on CPU, fp32/fp16/bf16 on an accelerator).
- ``copy``: ``a[:] = b``: 2 arrays' bytes per element (read b, write a).
- ``triad``: ``a = b + s * c``. PyTorch does it in one kernel (``torch.add(b, c, alpha=s, out=a)``:
  3 arrays' bytes per element, as STREAM counts); numpy needs two passes (``a = s * c``, then
  ``a += b``), which move 5 arrays' bytes per element: that is what benchdb counts for numpy, so its
  figure is the bandwidth numpy achieved, not understated. ``details.bytes_per_element`` records it.

Arrays are sized well beyond the caches (default 128 MiB each) so the figure is DRAM bandwidth.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone

from benchdb.errors import BenchdbError
from benchdb.store.transaction import transaction

BACKENDS = ("numpy", "pytorch")


@dataclass(frozen=True)
class Settings:
    trials: int = 10
    trial_time: float = 0.2
    matmul_n: int = 1024
    stream_bytes: int = 128 * 2**20  # per array
    threads: int | None = None


@dataclass
class Peak:
    backend: str
    device: str
    kind: str  # matmul | copy | triad
    precision: str
    value: float
    ci_low: float | None
    ci_high: float | None
    unit: str  # flop/s | bytes/s
    trials: int
    size: int
    details: dict = field(default_factory=dict)


#: An accelerator runs a small product faster than the host can launch and wait for it: timed one
#: launch and one synchronisation at a time, a 1024 x 1024 product on an H200 gave 29 Tflop/s of
#: its ~790 in bf16, and a 128 MiB copy 3.3 of its ~4.3 TB/s. The matrix order grows until one
#: product takes this long, and trials enqueue this much work between synchronisations.
MIN_SYNC_S = 2e-3
#: Largest matrix order tried: three 16384^2 fp32 matrices are 3 GiB.
MAX_ORDER = 16384

_clock = time.perf_counter  # module-level so a test can drive the loops with a simulated device


def _time_one(step: Callable[[], object], sync: Callable[[], None]) -> float:
    """Seconds of one synchronised call, after one untimed call (its first-call costs)."""
    step()
    sync()
    t0 = _clock()
    step()
    sync()
    return max(_clock() - t0, 1e-9)


def _trials(step: Callable[[], object], work: float, s: Settings, sync: Callable[[], None]) -> list[float]:
    """Rates (work per second) of ``s.trials`` timed trials after one untimed one. Each trial enqueues
    ``per_sync`` calls between synchronisations (enough for MIN_SYNC_S), so a device's launch and
    synchronisation latency is not counted once per call."""
    per_sync = max(1, min(10_000, int(MIN_SYNC_S / _time_one(step, sync))))
    rates = []
    for i in range(s.trials + 1):
        reps = 0
        sync()
        t0 = _clock()
        while True:
            for _ in range(per_sync):
                step()
            reps += per_sync
            sync()
            elapsed = _clock() - t0
            if elapsed >= s.trial_time:
                break
        if i:
            rates.append(work * reps / elapsed)
    return rates


def _order(product: Callable[[int], Callable[[], object]], s: Settings, sync: Callable[[], None]) -> int:
    """The matrix order to use: from ``s.matmul_n``, halved while one product takes more than a
    quarter of a trial (bf16 on a CPU without bf16 units), doubled while one takes less than
    MIN_SYNC_S and its double would still fit in a quarter of a trial (an accelerator)."""
    n = s.matmul_n
    t = _time_one(product(n), sync)
    while t > s.trial_time / 4 and n > 128:
        n = max(128, n // 2)
        t = _time_one(product(n), sync)
    while t < MIN_SYNC_S and n * 2 <= MAX_ORDER and t * 8 <= s.trial_time / 4:
        n *= 2
        t = _time_one(product(n), sync)
    return n


def _summarise(backend, device, kind, precision, rates, unit, s: Settings, size, **details) -> Peak:
    from benchdb.harness.sample_stats import Stats

    stats = Stats()
    try:
        median, low, high = stats.order_statistics_median_ci(rates)
    finally:
        stats.close()
    if median is None:
        # order_statistics_median_ci has no row for an empty sequence: Settings.trials was 0.
        raise BenchdbError(f"calibrate measured no trial of {backend} {kind} {precision} (trials must be >= 1)")
    return Peak(
        backend,
        device,
        kind,
        precision,
        float(median),
        low,
        high,
        unit,
        len(rates),
        size,
        {"trial_values": rates, "trial_time_s": s.trial_time, **details},
    )


def _numpy(device: str, s: Settings) -> list[Peak]:
    import numpy as np
    from threadpoolctl import threadpool_limits

    if device != "cpu":
        return []
    out = []
    with threadpool_limits(limits=s.threads):
        for precision, dtype in (("fp32", np.float32), ("fp64", np.float64)):

            def product(n, dtype=dtype):
                rng = np.random.default_rng(0)
                a, b = rng.standard_normal((n, n)).astype(dtype), rng.standard_normal((n, n)).astype(dtype)
                c = np.empty((n, n), dtype=dtype)
                return lambda: np.matmul(a, b, out=c)

            n = _order(product, s, lambda: None)
            rates = _trials(product(n), 2.0 * n**3, s, lambda: None)
            out.append(_summarise("numpy", device, "matmul", precision, rates, "flop/s", s, n))
        elems = max(1, s.stream_bytes // 8)
        a, b, c = np.zeros(elems), np.ones(elems), np.full(elems, 2.0)

        def triad():
            np.multiply(c, 3.0, out=a)
            np.add(a, b, out=a)

        for kind, step, per in (("copy", lambda: np.copyto(a, b), 2), ("triad", triad, 5)):
            rates = _trials(step, float(per * 8 * elems), s, lambda: None)
            out.append(_summarise("numpy", device, kind, "fp64", rates, "bytes/s", s, elems, bytes_per_element=per * 8))
    return out


def _no_sync() -> None:
    """CPU work is synchronous: nothing to wait for."""


def _pytorch(device: str, s: Settings) -> list[Peak]:
    import torch

    dev = torch.device(device)
    sync: Callable[[], None]
    precisions: tuple[tuple[str, torch.dtype], ...]
    if dev.type == "cuda":
        sync = torch.cuda.synchronize
        precisions = (("fp32", torch.float32), ("fp16", torch.float16), ("bf16", torch.bfloat16))
    elif dev.type == "cpu":
        sync = _no_sync
        precisions = (("fp32", torch.float32), ("bf16", torch.bfloat16))
    else:
        sync = getattr(getattr(torch, dev.type, None), "synchronize", _no_sync)
        precisions = (("fp32", torch.float32), ("fp16", torch.float16))
    before = torch.get_num_threads()
    if s.threads:
        torch.set_num_threads(s.threads)
    out = []
    try:
        for precision, dtype in precisions:

            def product(n, dtype=dtype):
                # drawn on the device: a 16384^2 matrix drawn on the host and copied takes seconds
                gen = torch.Generator(device=dev).manual_seed(0)
                a = torch.randn(n, n, generator=gen, device=dev).to(dtype)
                b = torch.randn(n, n, generator=gen, device=dev).to(dtype)
                c = torch.empty(n, n, device=dev, dtype=dtype)
                return lambda: torch.matmul(a, b, out=c)

            with torch.inference_mode():
                n = _order(product, s, sync)
                rates = _trials(product(n), 2.0 * n**3, s, sync)
            out.append(_summarise("pytorch", device, "matmul", precision, rates, "flop/s", s, n))
        elems = max(1, s.stream_bytes // 4)
        a = torch.zeros(elems, device=dev)
        b, c = torch.ones(elems, device=dev), torch.full((elems,), 2.0, device=dev)
        for kind, step, per in (
            ("copy", lambda: a.copy_(b), 2),
            ("triad", lambda: torch.add(b, c, alpha=3.0, out=a), 3),
        ):
            with torch.inference_mode():
                rates = _trials(step, float(per * 4 * elems), s, sync)
            out.append(
                _summarise("pytorch", device, kind, "fp32", rates, "bytes/s", s, elems, bytes_per_element=per * 4)
            )
    finally:
        torch.set_num_threads(before)
    return out


def measure(
    device: str = "cpu",
    backends: tuple[str, ...] = BACKENDS,
    settings: Settings = Settings(),
    progress: Callable[[str], None] | None = None,
) -> list[Peak]:
    """Every peak the given backends can measure on ``device``; a backend not installed is skipped
    (named in ``progress``), one that cannot drive the device measures nothing."""
    from benchdb.backends import registry
    from benchdb.harness import hardware

    unknown = [b for b in backends if b not in BACKENDS]
    if unknown:
        raise BenchdbError(f"calibrate has no backend {unknown[0]!r}; use {' or '.join(BACKENDS)}")
    peaks: list[Peak] = []
    for backend in backends:
        torch = registry.info("pytorch")
        if backend == "pytorch" and hardware.availability(torch)["status"] != "available":
            if progress:
                progress(f"pytorch skipped: not installed ({torch.hint})")
            continue
        if backend == "numpy" and device != "cpu":
            if progress:
                progress(f"numpy skipped: it measures the cpu, not {device}")
            continue
        if backend == "pytorch":
            registry.check_device("pytorch", device)  # one line naming the device, not torch's assertion
        if progress:
            progress(f"{backend}: measuring matmul and copy/triad on {device} ...")
        peaks.extend((_numpy if backend == "numpy" else _pytorch)(device, settings))
    if not peaks:
        raise BenchdbError(
            f"no installed backend can calibrate device {device!r}; "
            "numpy calibrates cpu, PyTorch also cuda:N / mps / xpu"
        )
    return peaks


def store(wh, peaks: list[Peak], device: str, settings: Settings, fingerprint: dict | None = None) -> dict:
    """Add one calibration (all its peaks) to the warehouse, creating the hardware record when no
    run named this device yet (``fingerprint``: the device's, read from this machine when None).
    Returns the calibration id, hardware id and name."""
    import json

    from benchdb import __version__, sql
    from benchdb.harness import hardware
    from benchdb.schema import contract, identity

    fp = fingerprint or hardware.device_fingerprint(device)
    hid = identity.hardware_id(fp)
    cal_id = contract.new_run_id()
    now = datetime.now(timezone.utc).replace(tzinfo=None).isoformat()
    threads = settings.threads if fp.get("kind") == "cpu" else None
    with wh.writing() as con:
        with transaction(con):
            con.execute(
                sql.load("perfmodel/insert_hardware.sql"),
                {
                    "hardware_id": hid,
                    "kind": fp["kind"],
                    "vendor": fp.get("vendor"),
                    "device_name": fp["device_name"],
                    "memory_bytes": fp.get("memory_bytes"),
                    "compute_capability": fp.get("compute_capability"),
                    "cpu_model": fp.get("cpu_model"),
                    "cores_physical": fp.get("cores_physical"),
                    "cores_logical": fp.get("cores_logical"),
                    "arch": fp.get("arch"),
                    "os": fp.get("os"),
                    "fingerprint": json.dumps(fp, sort_keys=True),
                },
            )
            for p in peaks:
                con.execute(
                    sql.load("perfmodel/insert_calibration.sql"),
                    {
                        "calibration_id": cal_id,
                        "hardware_id": hid,
                        "calibrated_at": now,
                        "host": hardware.host(),
                        "benchdb_version": __version__,
                        "backend": p.backend,
                        "device": p.device,
                        "threads": threads,
                        "kind": p.kind,
                        "precision": p.precision,
                        "value": p.value,
                        "ci_low": p.ci_low,
                        "ci_high": p.ci_high,
                        "unit": p.unit,
                        "trials": p.trials,
                        "size": p.size,
                        "details": json.dumps(p.details),
                    },
                )
    return {"calibration_id": cal_id, "hardware_id": hid, "hardware_name": fp["device_name"], "threads": threads}


def as_dicts(peaks: list[Peak]) -> list[dict]:
    return [asdict(p) for p in peaks]


def target(device: str, threads: int | None) -> tuple[str, int | None]:
    """The device in canonical form, and the threads a CPU calibration uses when none are given
    (the physical cores, as a run's default)."""
    from benchdb.harness import hardware
    from benchdb.schema.identity import normalize_device

    device = normalize_device(device)
    return device, (hardware.default_threads() if threads is None and device == "cpu" else threads)


def calibrations(wh) -> list[dict]:
    """Every calibration in the warehouse (``benchdb calibrate --list``), oldest first."""
    from benchdb import sql

    with wh.reading() as con:
        return sql.rows(con.execute(sql.load("perfmodel/calibrations.sql")))

"""Samplers that run beside a timed loop: host RSS and NVIDIA telemetry (pynvml).

A Monitor is one thread that sleeps on an Event between samples (never a busy loop) and
collects rows (metric, unit, index, t_offset_s, value) from its sources.

Host memory is whole-process RSS, which includes everything else the runner holds (the Python
interpreter, imported libraries, a PyTorch model kept for verification). So a runner takes
:func:`settled_rss` just before it creates what it measures (model, session) and reports, beside
the total peak, the increment over that baseline (:func:`rss_rows`).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol

import psutil

Row = tuple[str, str, int, float, float]

#: NVML clock-event bits that invalidate a result: the GPU was slowed by heat or by a hardware
#: signal, which follows the machine's cooling and power delivery that day, not the workload.
_THROTTLE_BITS = {
    0x0000000000000008: "hw_slowdown",
    0x0000000000000020: "sw_thermal_slowdown",
    0x0000000000000040: "hw_thermal_slowdown",
    0x0000000000000080: "hw_power_brake_slowdown",
}
#: SW power cap: the board held its power limit by lowering its clocks. A heavy workload runs there
#: as its steady state (a BERT-base-shaped model at batch 64 on an H200: 82 % of the samples, at
#: the 700 W limit), so it is the speed that GPU sustains: recorded as ``power_capped_pct``, never
#: a reason to invalidate (that made every heavy result on an H200 invalid).
POWER_CAP_BIT = 0x0000000000000004


class Source(Protocol):
    def sample(self) -> list[tuple[str, str, float]]: ...


class RssSource:
    """Resident set size of this process (bytes)."""

    def __init__(self) -> None:
        self.proc = psutil.Process()

    def sample(self) -> list[tuple[str, str, float]]:
        return [("rss_bytes", "bytes", float(self.proc.memory_info().rss))]


_LIBC = None


def _trim_heap() -> None:
    """Hand memory already freed back to the OS (glibc ``malloc_trim``); a no-op elsewhere."""
    global _LIBC
    if not sys.platform.startswith("linux"):
        return
    try:
        if _LIBC is None:
            _LIBC = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        _LIBC.malloc_trim(0)
    except (OSError, AttributeError):  # musl and other libcs have no malloc_trim
        pass


def settled_rss() -> float:
    """This process's RSS after a garbage collection and a heap trim: a baseline not inflated by
    memory that is already free (e.g. an exporter's), taken before the measured thing exists."""
    gc.collect()
    _trim_heap()
    return float(psutil.Process().memory_info().rss)


@contextmanager
def frozen_heap() -> Iterator[None]:
    """Measure in this process as a measuring child does (:mod:`benchdb.harness.isolation`): what
    exists when the block starts (the imported libraries, the caller's objects) is left out of every
    garbage collection inside it (``gc.freeze``), so :func:`settled_rss` before each scenario walks
    only the objects the run made. Walking a heap with torch and transformers imported takes ~0.2 s
    a collection, twice a scenario (13 tiny models run with --no-isolation: 5 of 20 s). Those objects
    go back to the collector when the block ends (``gc.unfreeze``); a block inside a frozen one, or in
    a child that froze its heap, changes nothing."""
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def rss_rows(mon: Monitor, before: float | None) -> list[Row]:
    """``peak_rss_bytes`` (whole process, the peak of the monitor's ``rss_bytes``) and, with a
    baseline, ``rss_before_bytes`` and ``peak_rss_increment_bytes`` (peak minus the baseline: what
    the measured model/session added to the process; 0 when the peak never rose above it)."""
    peak = mon.peak("rss_bytes")
    if peak is None:
        return []
    rows: list[Row] = [("peak_rss_bytes", "bytes", 0, 0.0, peak)]
    if before is not None:
        rows.append(("rss_before_bytes", "bytes", 0, 0.0, before))
        rows.append(("peak_rss_increment_bytes", "bytes", 0, 0.0, max(0.0, peak - before)))
    return rows


def nvml_status() -> tuple[bool, str]:
    """Whether NVIDIA telemetry works here, and why not when it does not."""
    try:
        import pynvml
    except ImportError:
        return False, "nvidia-ml-py is not installed (pip install 'benchdb[nvidia]')"
    try:
        pynvml.nvmlInit()
    except Exception as exc:  # NVMLError_LibraryNotFound, driver not loaded, ...
        return False, f"NVML unavailable: {exc}"
    try:
        n = pynvml.nvmlDeviceGetCount()
        return True, f"{n} NVIDIA device(s), driver {pynvml.nvmlSystemGetDriverVersion()}"
    finally:
        pynvml.nvmlShutdown()


class NvmlSource:
    """GPU utilisation, memory, power, energy, SM clock, temperature and throttle reasons.

    Energy and power come from the board's energy counter where it has one (Volta and newer):
    ``energy_j`` counts from the source's first sample (the monitor's start), and ``power_w`` is the
    mean power between two samples at which the counter had moved. The counter moves in steps (about
    every 100 ms on an H200): over one 20 ms interval it would read 0 or five times the power.
    NVML's own power reading is kept as ``nvml_power_w``; on Ampere and newer it is a one-second
    moving average, which on an H200 lagged the counter's mean power by 17 % over a 2.6 s timed
    loop, so it is not what energy per item is computed from. Without a counter, ``power_w`` is
    that reading."""

    provides_energy = True  # no CPU (RAPL) energy source beside it: see benchdb.harness.energy

    def __init__(self, index: int, clock=time.perf_counter) -> None:
        import pynvml

        self.nvml = pynvml
        pynvml.nvmlInit()
        self.handle = pynvml.nvmlDeviceGetHandleByIndex(index)
        self.clock = clock
        self.energy0: float | None = None  # the counter (mJ) at the first sample
        self.moved: tuple[float, float] | None = None  # (time, mJ) of the last sample where it had moved
        self.throttled: set[str] = set()
        self.samples = 0
        self.capped = 0

    @property
    def power_capped_pct(self) -> float | None:
        """Percent of the samples at which the board held its power limit."""
        return 100.0 * self.capped / self.samples if self.samples else None

    def _energy_mj(self) -> float | None:
        try:
            return float(self.nvml.nvmlDeviceGetTotalEnergyConsumption(self.handle))
        except Exception:  # not supported before Volta
            return None

    def sample(self) -> list[tuple[str, str, float]]:
        n, h = self.nvml, self.handle
        now = self.clock()
        energy = self._energy_mj()
        util = n.nvmlDeviceGetUtilizationRates(h)
        mem = n.nvmlDeviceGetMemoryInfo(h)
        reading = n.nvmlDeviceGetPowerUsage(h) / 1000.0
        rows = [
            ("gpu_util_pct", "pct", float(util.gpu)),
            ("gpu_mem_used_bytes", "bytes", float(mem.used)),
            ("sm_clock_mhz", "MHz", float(n.nvmlDeviceGetClockInfo(h, n.NVML_CLOCK_SM))),
            ("temperature_c", "C", float(n.nvmlDeviceGetTemperature(h, n.NVML_TEMPERATURE_GPU))),
        ]
        if energy is None:
            rows.append(("power_w", "W", reading))
        else:
            rows.append(("nvml_power_w", "W", reading))
            if self.energy0 is None or self.moved is None:
                self.energy0, self.moved = energy, (now, energy)
            elif energy != self.moved[1] and now > self.moved[0]:
                rows.append(("power_w", "W", (energy - self.moved[1]) / 1000.0 / (now - self.moved[0])))
                self.moved = (now, energy)
            rows.append(("energy_j", "J", (energy - self.energy0) / 1000.0))
        reasons = int(
            n.nvmlDeviceGetCurrentClocksEventReasons(h)
            if hasattr(n, "nvmlDeviceGetCurrentClocksEventReasons")
            else n.nvmlDeviceGetCurrentClocksThrottleReasons(h)
        )
        rows.append(("throttle_reasons", "bitmask", float(reasons)))
        self.throttled |= throttle_names(reasons)
        self.samples += 1
        self.capped += bool(reasons & POWER_CAP_BIT)
        return rows

    def close(self) -> None:
        self.nvml.nvmlShutdown()


def throttle_names(bits: int) -> set[str]:
    return {name for bit, name in _THROTTLE_BITS.items() if bits & bit}


#: Sampling periods of a Monitor. Power (NVML, RAPL) is sampled every 20 ms: it changes within tens
#: of milliseconds and a wrapping energy counter must not wrap twice between samples. RSS alone does
#: not need that, and each wake of the sampling thread takes the GIL from the timed loop: at 20 ms it
#: cost ~0.6 % of a 1.6 ms CPU call, at 100 ms nothing measurable. The first and last samples are
#: taken on entry and exit whatever the period.
ENERGY_INTERVAL_S = 0.02
RSS_INTERVAL_S = 0.1


class Monitor:
    """Samples its sources every ``interval_s`` on a background thread while active (default:
    ENERGY_INTERVAL_S when it measures energy, else RSS_INTERVAL_S)."""

    def __init__(self, sources: list, interval_s: float | None = None, clock=time.perf_counter):
        from benchdb.harness.energy import cpu_source

        rapl = cpu_source(sources)  # CPU energy (RAPL) where readable and nothing else measures energy
        self.sources = sources + [rapl] if rapl is not None else sources
        if interval_s is None:
            energy = any(getattr(src, "provides_energy", False) for src in self.sources)
            interval_s = ENERGY_INTERVAL_S if energy else RSS_INTERVAL_S
        self.interval_s = interval_s
        self.clock = clock
        self.rows: list[Row] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._t0 = 0.0
        self._index = 0

    def _collect(self) -> None:
        t = self.clock() - self._t0
        for src in self.sources:
            for metric, unit, value in src.sample():
                self.rows.append((metric, unit, self._index, t, value))
        self._index += 1

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            self._collect()

    def __enter__(self) -> Monitor:
        self._t0 = self.clock()
        self._collect()
        self._thread = threading.Thread(target=self._loop, name="benchdb-monitor", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self._collect()

    def peak(self, metric: str) -> float | None:
        values = [r[4] for r in self.rows if r[0] == metric]
        return max(values) if values else None

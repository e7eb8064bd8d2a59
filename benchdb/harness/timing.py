"""The shared timing loop every runner measures through.

Rules (DESIGN.md, measurement rules):
- The first call is timed on its own (it includes lazy initialisation and compilation) and is
  never a steady-state sample.
- Warm-up: at least ``warmup_iters`` calls and ``warmup_s`` seconds, untimed; with
  ``warmup_stable`` set (adaptive), it ends before ``warmup_s`` once the per-call time is stable
  (the last ``STABLE_CALLS`` warm-up calls within ``warmup_stable`` of their median). Warm-up
  calls are never samples; the stopping rule below is unchanged, so a valid result still meets
  the CI target.
- Then iterate until at least ``min_iters`` samples AND ``min_time_s`` seconds; stop as soon as
  the 95 % CI of the median is within ``target_ci`` (relative half-width) of the median, or at
  ``max_time_s`` / ``max_iters``.
- ``sync`` (the device's synchronisation) runs inside each timed region, so asynchronous devices
  are measured to completion.

The clock is injectable so the loop's logic is tested without sleeping. The confidence interval
comes from benchdb's statistics SQL (:class:`benchdb.harness.sample_stats.Stats`), the same the warehouse uses.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from benchdb.harness.sample_stats import Stats


@dataclass(frozen=True)
class StopRule:
    warmup_iters: int = 3
    warmup_s: float = 0.1
    #: Adaptive warm-up: end it once the last STABLE_CALLS calls are within this fraction of their
    #: median (e.g. 0.05), even before ``warmup_s``. None: warm up for ``warmup_s`` regardless.
    warmup_stable: float | None = None
    min_iters: int = 10
    min_time_s: float = 1.0
    max_time_s: float = 20.0
    max_iters: int = 1_000_000
    target_ci: float = 0.02
    #: A result whose CI half-width ends above ``noisy_factor * target_ci`` is invalid (too noisy).
    noisy_factor: float = 5.0

    def __post_init__(self) -> None:
        if self.min_iters < 1 or self.warmup_iters < 0:
            raise ValueError("min_iters must be >= 1 and warmup_iters >= 0")
        if not 0 < self.target_ci < 1:
            raise ValueError("target_ci must be between 0 and 1 (e.g. 0.02 for +-2 %)")
        if self.max_time_s < self.min_time_s:
            raise ValueError("max_time_s must be >= min_time_s")
        if self.max_iters < self.min_iters:
            raise ValueError("max_iters must be >= min_iters")


@dataclass
class Measurement:
    first_call_s: float
    samples: list[float] = field(default_factory=list)
    offsets: list[float] = field(default_factory=list)  # start of each sample, from loop start
    warmup_iters: int = 0
    stop_reason: str = ""  # converged | max_time | max_iters
    median: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None

    @property
    def ci_rel(self) -> float | None:
        """Relative half-width of the CI of the median (None when too few samples)."""
        if self.median is None or self.ci_low is None or self.ci_high is None or self.median <= 0:
            return None
        return (self.ci_high - self.ci_low) / 2.0 / self.median

    def validity_reasons(self, rule: StopRule) -> list[str]:
        reasons = []
        n = len(self.samples)
        if n < rule.min_iters:
            reasons.append(f"too_few_samples: {n} < min_iters {rule.min_iters}")
        ci = self.ci_rel
        if ci is None:
            reasons.append(f"no_ci: {n} samples are too few for a CI of the median")
        elif ci > rule.noisy_factor * rule.target_ci:
            reasons.append(
                f"noisy: CI of the median +-{ci:.1%} > {rule.noisy_factor:g} x target +-{rule.target_ci:.1%}"
            )
        return reasons


class HostTimer:
    """Host clock around the call, with the device's synchronisation inside the timed region."""

    method = "host_clock"

    def __init__(
        self,
        clock: Callable[[], float] = time.perf_counter,
        sync: Callable[[], object] | None = None,
        device: str | None = None,
    ):
        self.clock = clock
        self.sync = sync
        self.t0 = 0.0
        if sync is not None:
            self.method = f"host_clock+sync({device or 'device'})"

    def start(self) -> float:
        self.t0 = self.clock()
        return self.t0

    def stop(self) -> float:
        if self.sync is not None:
            self.sync()
        return self.clock() - self.t0


class StopCheck:
    """The stopping rule's decision after each new sample, shared by every timing loop: stop at
    ``max_time_s`` or ``max_iters``; otherwise, once ``min_iters`` samples and ``min_time_s`` are
    reached, check at geometrically spaced sample counts (so checks cost little against the loop)
    whether the 95 % CI of the median is within ``target_ci``."""

    __slots__ = ("rule", "stats", "next_check")

    def __init__(self, rule: StopRule, stats: Stats):
        self.rule = rule
        self.stats = stats
        self.next_check = rule.min_iters

    def __call__(self, samples: list[float], elapsed: float) -> str | None:
        """The stop reason after ``samples`` measured in ``elapsed`` seconds, or None to go on."""
        rule = self.rule
        n = len(samples)
        if elapsed >= rule.max_time_s:
            return "max_time"
        if n >= rule.max_iters:
            return "max_iters"
        if n >= self.next_check and elapsed >= rule.min_time_s:
            self.next_check = max(n + 1, int(n * 1.1))
            med, lo, hi = self.stats.order_statistics_median_ci(samples)
            if med and lo is not None and hi is not None and (hi - lo) / 2.0 / med <= rule.target_ci:
                return "converged"
        return None


#: Warm-up calls whose times must agree before warm-up may end early.
STABLE_CALLS = 3


def stable(recent: list[float], tolerance: float) -> bool:
    """Whether the last STABLE_CALLS warm-up call times are all within ``tolerance`` of their median."""
    if len(recent) < STABLE_CALLS:
        return False
    mid = sorted(recent)[len(recent) // 2]
    return mid > 0 and all(abs(x - mid) <= tolerance * mid for x in recent)


def measure(
    fn: Callable[[], object],
    rule: StopRule,
    *,
    sync: Callable[[], object] | None = None,
    clock: Callable[[], float] = time.perf_counter,
    timer=None,
    stats: Stats | None = None,
) -> Measurement:
    """Time ``fn`` under ``rule``.

    ``timer`` (``start() -> host time``, ``stop() -> seconds``) times each call; by default a
    :class:`HostTimer` on ``clock`` with ``sync`` inside the timed region. A device timer (CUDA
    events) plugs in here; the loop's own bookkeeping stays on the host ``clock``.
    """
    timer = timer or HostTimer(clock, sync)
    own_stats = stats is None
    stats = stats or Stats()
    try:
        timer.start()
        fn()
        m = Measurement(first_call_s=timer.stop())

        w_start = clock()
        recent: list[float] = []
        while m.warmup_iters < rule.warmup_iters or (
            clock() - w_start < rule.warmup_s
            and not (rule.warmup_stable is not None and stable(recent, rule.warmup_stable))
        ):
            t = clock()
            fn()
            if sync is not None:
                sync()
            recent = recent[1 - STABLE_CALLS :] + [clock() - t]
            m.warmup_iters += 1
            if clock() - w_start >= rule.max_time_s:
                break

        samples, offsets = m.samples, m.offsets
        append_s, append_o = samples.append, offsets.append
        start_timer, stop_timer = timer.start, timer.stop
        should_stop = StopCheck(rule, stats)
        start = clock()
        while True:
            a = start_timer()
            fn()
            dt = stop_timer()
            append_s(dt)
            append_o(a - start)
            reason = should_stop(samples, a - start + dt)
            if reason is not None:
                m.stop_reason = reason
                break
        m.median, m.ci_low, m.ci_high = stats.order_statistics_median_ci(samples)
        return m
    finally:
        if own_stats:
            stats.close()

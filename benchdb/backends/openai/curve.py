"""``--curve N``: a serving curve of N load points chosen the way MLPerf Endpoints spreads a
submission's (its v1.0 rules: an Ultra Low point at concurrency 1-32, then Low, Medium and High
regions, and an Offline point), from a short probe of the server instead of a list written by hand.

- **The probe.** Closed loop at concurrency 1, 2, 4, ... (at most ``--curve-max``), each for a few
  requests a slot, reading output tokens/s. The highest useful concurrency is the last one before a
  doubling that gains less than ``SATURATED`` (10 %): past it, more users only queue. The probe's
  readings are kept with every point.
- **The points.** One at concurrency 1 (Ultra Low); N - 2 spread over the log2 range from 2 to the
  highest useful concurrency, in three regions of equal width (Low, Medium, High), each region
  getting a third of them, evenly spaced within it; and an Offline-like point at twice the highest
  useful concurrency (requests queued at the server all the time: its throughput, not its latency,
  is the point's figure). Concurrencies are distinct whole numbers (a point that rounds onto a
  taken one moves to the nearest free one).
- **Identity.** Each point is a plain closed-loop load point (``concurrency=C``), comparable with any
  other run's at C; its place on the curve (region, index, the probe) is recorded in its settings,
  not its identity.
"""

from __future__ import annotations

import math
import re
from dataclasses import replace
from typing import Any

from benchdb.errors import BenchdbError

#: Throughput gain under which doubling the concurrency is saturation.
SATURATED = 0.10
#: The fewest and most points a curve has (MLPerf Endpoints: 8 points a curve, 32 at most).
MIN_POINTS, MAX_POINTS = 8, 32
REGIONS = ("low", "medium", "high")


def check(n: int, max_concurrency: int) -> None:
    if not MIN_POINTS <= n <= MAX_POINTS:
        raise BenchdbError(f"--curve {n}: give {MIN_POINTS} to {MAX_POINTS} load points")
    if max_concurrency < 4:
        raise BenchdbError(f"--curve-max {max_concurrency}: a curve needs room for its regions (at least 4)")


def points(highest: int, n: int) -> list[tuple[int, str]]:
    """(concurrency, region) of the ``n`` points of a curve below a highest useful concurrency: all
    distinct (a target that rounds to a concurrency already taken takes the nearest free one; where
    fewer than n - 2 whole numbers lie between 2 and the highest useful, the range reaches up to n)."""
    top = max(highest, n, 2)
    middle = n - 2
    lo, hi = 1.0, math.log2(top)
    width = (hi - lo) / 3
    taken = {1, 2 * top}
    out: list[tuple[int, str]] = [(1, "ultra-low")]
    for r, region in enumerate(REGIONS):
        k = middle // 3 + (1 if r < middle % 3 else 0)
        for j in range(k):
            target = 2 ** (lo + r * width + (j + 0.5) * width / k)
            free = min((c for c in range(2, top + 1) if c not in taken), key=lambda c: (abs(c - target), c))
            taken.add(free)
            out.append((free, region))
    out.append((2 * top, "offline"))
    return sorted(out)


def probe(measure, most: int) -> tuple[int, list[dict[str, Any]]]:
    """The highest useful concurrency (the last whose doubling still gained ``SATURATED``), from
    ``measure(concurrency) -> output tokens/s`` at 1, 2, 4, ... up to ``most``; and the readings."""
    readings: list[dict[str, Any]] = []
    c, best = 1, 0.0
    while c <= most:
        tps = measure(c)
        readings.append({"concurrency": c, "output_tokens_per_s": tps})
        if c > 1 and tps < (1 + SATURATED) * best:
            return c // 2, readings
        best = max(best, tps)
        c *= 2
    return c // 2, readings


def scenarios(planned: list, opts, spec_for) -> list:
    """The curve's N placeholder scenarios (input shape ``...,curve=N``, one a point) made concrete:
    the probe (each reading one short load point from ``spec_for(scenario, concurrency)``), then one
    closed-loop scenario a point, its place on the curve in its settings."""
    from benchdb.backends.core_options import backend_option
    from benchdb.backends.openai import workers
    from benchdb.schema.serving_metrics import summary

    first = planned[0]
    n = len(planned)
    most = int(backend_option(opts, "curve_max"))

    def measure(c: int) -> float:
        result = workers.run(probe_spec(spec_for(first, c), c), 1)
        tps = float(summary(result.records, result.window_s).get("output_throughput") or 0.0)
        if result.errors or tps <= 0:
            why = next(iter(result.errors), "no output tokens")
            raise BenchdbError(f"its requests at concurrency {c} failed: {why}")
        return tps

    highest, readings = probe(measure, most)
    out = []
    for i, (c, region) in enumerate(points(highest, n)):
        curve = {"point": i + 1, "of": n, "region": region, "highest_useful": highest, "probe": readings}
        out.append(
            replace(
                planned[i],
                batch_size=c,
                input_shape=re.sub(r"(^|,)curve=\d+,point=\d+", rf"\1concurrency={c}", planned[i].input_shape),
                settings={**planned[i].settings, "load": str(c), "curve": curve},
            )
        )
    return out


def probe_spec(load, c: int):
    """A probe reading's load point: ``c`` warm-up requests, then a few requests a slot."""
    from benchdb.harness.timing import StopRule

    n = max(8, 4 * c)
    rule = StopRule(warmup_iters=0, min_iters=n, min_time_s=0.5, max_time_s=15.0, max_iters=n, target_ci=0.5)
    return replace(load, concurrency=c, rate=None, warmup_requests=c, rule=rule)

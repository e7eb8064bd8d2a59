"""A serving configuration's figures at a chosen interactivity, read along its Pareto front the way
the field reads it (the InferenceX TCO calculator, docs/tco-calculator.md of SemiAnalysisAI/InferenceX-app):

- The front: points (interactivity x, throughput per GPU y); a point stays unless a point of
  strictly higher interactivity has at least its throughput, and of points at one interactivity only
  the highest throughput stays. Along the front, throughput falls as interactivity rises.
- Between front points: a monotone cubic Hermite spline (Steffen's interior slopes, the one-sided
  end slopes of d3's ``curveMonotoneX``), so no value overshoots its neighbours; each figure is
  splined on its own and held within the front's range of that figure.
- Outside the front's range the figure is the nearest end point's, marked ``clamped``; a measured
  point hit exactly is ``measured``; anything else is ``interpolated``, never a measurement.
- A cost per token is never splined: the throughput is, and $ per million tokens is derived from it
  (price per GPU-hour x 1e6 / (tokens/s per GPU x 3600)), so cost x throughput stays the price.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass


def pareto_front(points: Sequence[tuple[float, float]]) -> list[int]:
    """Indices of ``points`` (x, y) on the upper-left front, in order of rising x."""
    order = sorted(range(len(points)), key=lambda i: (points[i][0], -points[i][1]))
    front: list[int] = []
    for i in order:
        x, y = points[i]
        if front and points[front[-1]][0] == x:
            continue  # the same interactivity: the first (highest throughput) stays
        while front and y >= points[front[-1]][1]:
            front.pop()
        front.append(i)
    return front


def monotone_slopes(xs: Sequence[float], ys: Sequence[float]) -> list[float]:
    """Tangents at the knots: Steffen's at interior knots, d3's one-sided ones at the ends."""
    n = len(xs)
    if n < 2:
        return [0.0] * n
    h = [xs[i + 1] - xs[i] for i in range(n - 1)]
    s = [(ys[i + 1] - ys[i]) / h[i] if h[i] else 0.0 for i in range(n - 1)]
    m = [0.0] * n
    for i in range(1, n - 1):
        p = (s[i - 1] * h[i] + s[i] * h[i - 1]) / (h[i - 1] + h[i])
        sign = (1 if s[i - 1] >= 0 else -1) + (1 if s[i] >= 0 else -1)
        m[i] = sign * min(abs(s[i - 1]), abs(s[i]), 0.5 * abs(p)) or 0.0
    m[0] = (3 * s[0] - m[1]) / 2 if h[0] else m[1]  # before the last: with two knots m[1] is still 0
    m[-1] = (3 * s[-1] - m[-2]) / 2 if h[-1] else m[-2]
    return m


def hermite(xs: Sequence[float], ys: Sequence[float], m: Sequence[float], x: float) -> float:
    """The cubic Hermite spline through (xs, ys) with tangents ``m`` at ``x`` (held at the ends)."""
    if x <= xs[0]:
        return ys[0]
    if x >= xs[-1]:
        return ys[-1]
    hi = bisect_right(xs, x)
    lo = hi - 1
    width = xs[hi] - xs[lo]
    t = (x - xs[lo]) / width
    t2, t3 = t * t, t * t * t
    return (
        (2 * t3 - 3 * t2 + 1) * ys[lo]
        + (t3 - 2 * t2 + t) * width * m[lo]
        + (-2 * t3 + 3 * t2) * ys[hi]
        + (t3 - t2) * width * m[hi]
    )


@dataclass
class AtInteractivity:
    """A configuration's figures at one interactivity: ``values`` per figure, ``how`` (measured,
    interpolated, clamped), and the front points it came from (indices into the input)."""

    values: dict[str, float | None]
    how: str
    between: tuple[int, ...]


def at_interactivity(
    interactivity: Sequence[float], figures: dict[str, Sequence[float | None]], target: float, front_on: str
) -> AtInteractivity | None:
    """Every figure of ``figures`` (one value per point) at ``target`` interactivity along the front
    of (interactivity, ``figures[front_on]``); None when no point has both."""
    usable = [
        i
        for i, x in enumerate(interactivity)
        if x is not None and math.isfinite(x) and x > 0 and figures[front_on][i] is not None
    ]
    if not usable:
        return None
    front = [usable[k] for k in pareto_front([(interactivity[i], figures[front_on][i]) for i in usable])]  # type: ignore[misc]
    xs = [interactivity[i] for i in front]
    lo_x, hi_x = xs[0], xs[-1]
    x = min(max(target, lo_x), hi_x)
    between: tuple[int, ...]
    if target < lo_x or target > hi_x:
        how, between = "clamped", (front[0] if target < lo_x else front[-1],)
    elif x in xs:
        how, between = "measured", (front[xs.index(x)],)
    else:
        k = bisect_right(xs, x)
        how, between = "interpolated", (front[k - 1], front[k])
    values: dict[str, float | None] = {}
    for name, column in figures.items():
        ys = [column[i] for i in front]
        if any(y is None for y in ys):
            values[name] = None  # a figure some front point lacks is not guessed
            continue
        known = [float(y) for y in ys]  # type: ignore[arg-type]
        raw = hermite(xs, known, monotone_slopes(xs, known), x) if len(xs) > 1 else known[0]
        values[name] = min(max(raw, min(known)), max(known))
    return AtInteractivity(values, how, between)


def usd_per_million_tokens(usd_per_gpu_hour: float | None, tokens_per_s_per_gpu: float | None) -> float | None:
    """$ per million tokens from a GPU-hour price and a throughput per GPU."""
    if not usd_per_gpu_hour or not tokens_per_s_per_gpu or tokens_per_s_per_gpu <= 0:
        return None
    return usd_per_gpu_hour * 1e6 / (tokens_per_s_per_gpu * 3600)

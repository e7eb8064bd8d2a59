"""The steady-state window of a serving load point: the part of its measurement window where the
server ran at one level, found after the run from its requests, the way MLPerf Endpoints finds its
own (``mlcommons/endpoints``, ``docs/steady-state-detection.md``); benchdb's own code.

The method, in order:

1. **Issue-order buckets.** The requests in the order they were sent, in ``buckets`` groups of equal
   size (at least ``MIN_BUCKET`` requests each). A bucket's value is its median TPOT: per-token decode
   time reflects the server's state and not the mix of output lengths (TTFT where no request has a
   TPOT, one-token outputs).
2. **Warm-up crop.** The steady level is the median of the middle half's bucket values (Endpoints takes
   the back half, which a drain or a level shift in the last quarter pulls off the level); leading
   buckets more than ``BAND`` (10 %) away from it, either way, are dropped, at most half of them.
3. **Guarded drain cut.** Trailing buckets beyond the band are dropped only where per-request TPOT is
   nearly the same for every request (coefficient of variation at most ``ITL_COV``): then the tail is
   the same distribution, thinner; otherwise it is kept and its figures speak for themselves.
4. **First plateau.** From the first bucket left, the window grows bucket by bucket while it stays
   admissible: the bucket values' coefficient of variation under ``COV_BOUND`` and no trend (the
   Mann-Kendall test at 5 %, or a drift under ``DRIFT_MIN`` end to end, so that a negligible but
   significant slope does not split a steady run). At least ``MIN_BUCKETS`` buckets, else none is found.
5. **Level shift.** After the first plateau, a later admissible plateau whose level differs by more
   than the band, corroborated by Pettitt's change-point test on the whole series, is flagged with its
   time and size; the first plateau is still the one reported. A series that rises throughout is
   "drifting up": no steady state.

Throughput over the window divides by its issue span (first to last send in it): the drain after the
last send never enters it. k sends span k - 1 gaps, so the span holds the requests sent before the
last one: those are counted (all k would read k / (k - 1) too fast: +4 % at 24 requests).

Simplifications against Endpoints' method: one CoV bound (no ensemble), no
autocorrelation correction of Mann-Kendall, no minimum wall-time (a benchdb load point is seconds to
minutes, not an MLPerf run's ten minutes).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

METHOD = "issue-order buckets, TPOT-driven warm-up crop, guarded drain cut, first plateau (CoV + Mann-Kendall)"
BAND = 0.10
ITL_COV = 0.25
COV_BOUND = 0.05
DRIFT_MIN = 0.05
#: Buckets a plateau needs: the Mann-Kendall test can reject "no trend" at 5 % from 5 points on.
MIN_BUCKETS = 6
#: Buckets a later plateau needs to be a level shift (its level only is compared).
LATER_MIN_BUCKETS = 3
MIN_BUCKET = 4
BUCKETS = 16


@dataclass
class Window:
    """A load point's steady-state window: ``found``, its requests' indices in issue order ``[lo, hi)``
    and its issue times (seconds from the measurement window's start), or why none was found."""

    found: bool
    lo: int = 0
    hi: int = 0
    start_s: float = 0.0
    end_s: float = 0.0
    reason: str = ""
    level_shift: dict[str, float] | None = None
    buckets: int = 0
    values: list[float] = field(default_factory=list)

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"found": self.found, "method": METHOD, "buckets": self.buckets}
        if self.found:
            out.update(start_s=self.start_s, end_s=self.end_s, requests=self.hi - self.lo)
        else:
            out["reason"] = self.reason
        if self.level_shift:
            out["level_shift"] = self.level_shift
        return out


def _median(xs: list[float]) -> float:
    s = sorted(xs)
    n = len(s)
    return s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])


def _cov(xs: list[float]) -> float:
    mean = sum(xs) / len(xs)
    if mean <= 0:
        return math.inf
    return math.sqrt(sum((x - mean) ** 2 for x in xs) / max(1, len(xs) - 1)) / mean


def mann_kendall_z(xs: list[float]) -> float:
    """The Mann-Kendall trend statistic's z-score (positive: rising); ties counted as neither."""
    n = len(xs)
    s = sum((xs[j] > xs[i]) - (xs[j] < xs[i]) for i in range(n) for j in range(i + 1, n))
    var = n * (n - 1) * (2 * n + 5) / 18
    if var <= 0 or s == 0:
        return 0.0
    return (s - 1) / math.sqrt(var) if s > 0 else (s + 1) / math.sqrt(var)


def _drift(xs: list[float]) -> float:
    """The least-squares line's change from the first to the last point, over the median."""
    n = len(xs)
    mx, my = (n - 1) / 2, sum(xs) / n
    sxx = sum((i - mx) ** 2 for i in range(n))
    slope = sum((i - mx) * (x - my) for i, x in enumerate(xs)) / sxx if sxx else 0.0
    med = _median(xs)
    return slope * (n - 1) / med if med > 0 else 0.0


def admissible(xs: list[float], minimum: int = MIN_BUCKETS) -> bool:
    if len(xs) < minimum:
        return False
    trend = abs(mann_kendall_z(xs)) >= 1.96 and abs(_drift(xs)) >= DRIFT_MIN
    return _cov(xs) < COV_BOUND and not trend


def pettitt(xs: list[float]) -> tuple[int, float]:
    """Pettitt's change point: the index after which the series changed, and the test's p-value
    (the usual approximation, 2 exp(-6 K^2 / (n^3 + n^2)))."""
    import numpy as np

    x = np.asarray(xs, dtype=float)
    n = len(x)
    if n < 2:
        return 0, 1.0
    u = np.cumsum(np.sign(x[:, None] - x[None, :]).sum(axis=1))[:-1]
    at = int(np.argmax(np.abs(u)))
    k = float(abs(u[at]))
    return at + 1, min(1.0, 2 * math.exp(-6 * k**2 / (n**3 + n**2)))


#: Points Pettitt's test runs on: the requests' own values, or medians of as many groups of them.
PETTITT_POINTS = 256


def _plateau(values: list[float], start: int, minimum: int = MIN_BUCKETS) -> tuple[int, int] | None:
    """The first admissible window from ``start`` on, grown while it stays admissible."""
    for lo in range(start, len(values) - minimum + 1):
        hi = lo + minimum
        if not admissible(values[lo:hi], minimum):
            continue
        while hi < len(values) and admissible(values[lo : hi + 1], minimum):
            hi += 1
        return lo, hi
    return None


def _refine(driver: list[float | None], edges: list[int], lo: int, hi: int, values: list[float]) -> tuple[int, int]:
    """The plateau's bounds to the request, where a neighbouring bucket stands beyond the band (a
    step): a request belongs to the plateau when its value is nearer the plateau's level than the
    neighbour's (single requests are too noisy for the band itself)."""
    level = _median(values[lo:hi])

    def nearer(i: int, other: float) -> bool:
        v = driver[i]
        return v is not None and v > 0 and abs(math.log(v / level)) < abs(math.log(v / other))

    a, b = edges[lo], edges[hi]
    if lo and abs(values[lo - 1] / level - 1) > BAND:
        before = values[lo - 1]
        while a > edges[lo - 1] and nearer(a - 1, before):
            a -= 1
        while a < edges[lo + 1] - 1 and not nearer(a, before):
            a += 1
    if hi < len(values) and abs(values[hi] / level - 1) > BAND:
        after = values[hi]
        while b < edges[hi + 1] and nearer(b, after):
            b += 1
        while b > edges[hi - 1] + 1 and not nearer(b - 1, after):
            b -= 1
    return a, b


def find(sent: list[float], tpot: list[float | None], ttft: list[float | None], buckets: int = BUCKETS) -> Window:
    """The steady window of requests sent at ``sent`` (seconds from the window's start, in issue
    order) with their TPOT and TTFT (None: the request failed or has none)."""
    n = len(sent)
    k = min(buckets, n // MIN_BUCKET)
    if k < MIN_BUCKETS:
        return Window(False, reason=f"too few requests for a steady-state test ({n}; needs {MIN_BUCKETS * MIN_BUCKET})")
    driver = tpot if sum(v is not None for v in tpot) >= n // 2 else ttft
    edges = [round(i * n / k) for i in range(k + 1)]
    values = []
    for a, b in zip(edges, edges[1:], strict=False):
        got = [v for v in driver[a:b] if v is not None]
        if not got:
            return Window(False, reason="a bucket of requests has no timing (failed requests)", buckets=k)
        values.append(_median(got))
    level = _median(values[k // 4 : k - k // 4])
    if level <= 0 or min(values) <= 0:  # TPOT of 0: tokens that all came in one chunk, no level to read
        return Window(False, reason="no timing to read a level from (every token in one chunk)", buckets=k)
    first = 0
    while first < k // 2 and abs(values[first] / level - 1) > BAND:
        first += 1
    last = k
    per_request = [v for v in driver if v is not None]
    if len(per_request) > 1 and _cov(per_request) <= ITL_COV:
        while last - first > MIN_BUCKETS and abs(values[last - 1] / level - 1) > BAND:
            last -= 1
    plateau = _plateau(values[:last], first)
    if plateau is None:
        rising = mann_kendall_z(values) >= 1.96 and _drift(values) >= DRIFT_MIN
        why = "drifting up: the server slowed throughout" if rising else "no plateau: the server never ran at one level"
        return Window(False, reason=why, buckets=k, values=values)
    lo, hi = plateau
    a, b = _refine(driver, edges, lo, hi, values)
    out = Window(True, a, b, sent[a], sent[b - 1], buckets=k, values=values)
    # on the whole series: a shift in the last buckets looks like a drain to the cut
    later = _plateau(values, hi, LATER_MIN_BUCKETS)
    if later is not None:
        before, after = _median(values[lo:hi]), _median(values[later[0] : later[1]])
        # on finer points than the buckets: 16 of them cannot make a 12 + 4 split significant
        start = edges[first]
        series = [v for v in driver[start:] if v is not None]
        m = min(len(series), PETTITT_POINTS)
        cuts = [round(i * len(series) / m) for i in range(m + 1)]
        points = [_median(series[c:d]) for c, d in zip(cuts, cuts[1:], strict=False)]
        at, p = pettitt(points)
        if abs(after / before - 1) > BAND and p < 0.05:
            index = start + cuts[at]
            out.level_shift = {"at_s": sent[min(index, n - 1)], "change": after / before - 1}
    return out


def of_point(records, window_start: float) -> tuple[list, dict[str, Any]]:
    """A load point's steady-state rows and the description its result keeps (``extra``)."""
    from benchdb.schema.serving import (
        STEADY_OUTPUT_THROUGHPUT,
        STEADY_REQUEST_THROUGHPUT,
        STEADY_TOTAL_THROUGHPUT,
        STEADY_TPOT,
        STEADY_TTFT,
        UNITS,
    )
    from benchdb.schema.serving_metrics import measured_in_order
    from benchdb.schema.serving_request import request_metrics

    recs = measured_in_order(records)
    per = [request_metrics(r) for r in recs]
    w = find(
        [r.sent - window_start for r in recs],
        [m.tpot if m is not None else None for m in per],
        [m.ttft if m is not None else None for m in per],
    )
    rows: list = []
    if not w.found:
        return rows, w.describe()
    for i in range(w.lo, w.hi):
        m, t = per[i], recs[i].sent - window_start
        if m is not None and m.ttft is not None:
            rows.append((STEADY_TTFT, UNITS[STEADY_TTFT], i, t, m.ttft))
        if m is not None and m.tpot is not None:
            rows.append((STEADY_TPOT, UNITS[STEADY_TPOT], i, t, m.tpot))
    span = w.end_s - w.start_s
    if span > 0:
        done = [recs[i] for i in range(w.lo, w.hi - 1) if recs[i].ok]
        tokens = sum(r.tokens_out for r in done)
        rows.append((STEADY_OUTPUT_THROUGHPUT, UNITS[STEADY_OUTPUT_THROUGHPUT], 0, 0.0, tokens / span))
        rows.append((STEADY_REQUEST_THROUGHPUT, UNITS[STEADY_REQUEST_THROUGHPUT], 0, 0.0, len(done) / span))
        total = tokens + sum(r.input_tokens or 0 for r in done)  # as the whole window's: unknown counts 0
        rows.append((STEADY_TOTAL_THROUGHPUT, UNITS[STEADY_TOTAL_THROUGHPUT], 0, 0.0, total / span))
    return rows, w.describe()

"""Statistics that SQL cannot do comfortably: bootstrap intervals and E-divisive change points.

Pure numpy, deterministic (seeded), no warehouse access: the gate and the history modules feed
them data read from the warehouse.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

BOOTSTRAP = 2000
MAX_BOOTSTRAP_N = 5000  # larger sides are subsampled (evenly, keeping order statistics' spread)


def _thin(x: np.ndarray, *, presorted: bool = False) -> np.ndarray:
    if len(x) <= MAX_BOOTSTRAP_N:
        return x
    return (x if presorted else np.sort(x))[np.linspace(0, len(x) - 1, MAX_BOOTSTRAP_N).astype(int)]


def sorted_median(x: np.ndarray) -> float:
    """``np.median`` of an array sorted ascending, read off its middle: the same value (the mean of
    the two middle order statistics for even n, NaN where any value is NaN, which sorts last)."""
    n = len(x)
    if not n or np.isnan(x[-1]):
        return float(np.median(x))
    k = n // 2
    return float(x[k]) if n % 2 else float(np.mean(x[k - 1 : k + 1]))


def bootstrap_medians(x: np.ndarray, count: int, rng: np.random.Generator, *, presorted: bool = False) -> np.ndarray:
    """The medians of ``count`` bootstrap resamples of ``x`` (n values drawn with replacement),
    drawn from their exact distribution in O(count) instead of resampling O(count x n) values.
    ``presorted``: ``x`` is already sorted ascending (not sorted again).

    A resample is F_n^-1(U_1..U_n) for uniforms U and the empirical quantile function F_n^-1(u) =
    x_(ceil(n u)), which is monotone: its k-th order statistic is x_(ceil(n U_(k))), and U_(k) ~
    Beta(k, n - k + 1). For even n the median averages the k-th and (k+1)-th, and given U_(k) = u,
    U_(k+1) = u + (1 - u) Beta(1, n - k) (the least of the n - k uniforms above u)."""
    x = np.asarray(x, dtype=float) if presorted else np.sort(np.asarray(x, dtype=float))
    n = len(x)

    def at(u: np.ndarray) -> np.ndarray:
        return x[np.clip(np.ceil(n * u).astype(np.int64) - 1, 0, n - 1)]

    k = (n + 1) // 2
    u = rng.beta(k, n - k + 1, count)
    if n % 2:
        return at(u)
    return (at(u) + at(u + (1.0 - u) * rng.beta(1, n - k, count))) / 2.0


def bootstrap_median_ratio(
    base, cand, *, n_boot: int = BOOTSTRAP, level: float = 0.95, seed: int = 0
) -> tuple[float, float, float]:
    """(point, low, high): relative change of the median, cand / base - 1, with a percentile
    bootstrap confidence interval (both sides resampled independently)."""
    return bootstrap_median_ratios(base, cand, (level,), n_boot=n_boot, seed=seed)[0]


def bootstrap_median_ratios(
    base, cand, levels: Sequence[float], *, n_boot: int = BOOTSTRAP, seed: int = 0, presorted: bool = False
) -> list[tuple[float, float, float]]:
    """:func:`bootstrap_median_ratio` at each of ``levels``, from one set of resamples: the seed
    fixes the resamples, so each interval is the one that function gives at its level (nested
    intervals), for the cost of one. ``presorted``: both sides are already sorted ascending (the
    gate sorts each side once for its median too); the answer is the same."""
    a = _thin(np.asarray(base, dtype=float), presorted=presorted)
    b = _thin(np.asarray(cand, dtype=float), presorted=presorted)
    # a thinned side is sorted
    a_sorted, b_sorted = presorted or len(a) < len(base), presorted or len(b) < len(cand)
    rng = np.random.default_rng(seed)
    ma = bootstrap_medians(a, n_boot, rng, presorted=a_sorted)
    mb = bootstrap_medians(b, n_boot, rng, presorted=b_sorted)
    ratios = mb / ma - 1.0
    med_a = sorted_median(a) if a_sorted else float(np.median(a))
    med_b = sorted_median(b) if b_sorted else float(np.median(b))
    point = float(med_b / med_a - 1.0)
    out = []
    for level in levels:
        tail = (1.0 - level) / 2.0
        lo, hi = np.quantile(ratios, [tail, 1.0 - tail])
        out.append((point, float(lo), float(hi)))
    return out


def robust_noise(medians) -> float | None:
    """Run-to-run noise of a series: scaled MAD of successive log changes of its medians."""
    x = np.log(np.asarray(medians, dtype=float))
    if len(x) < 4:
        return None
    d = np.diff(x)
    mad = np.median(np.abs(d - np.median(d))) * 1.4826
    return float(mad / np.sqrt(2.0))  # successive differences carry two points' noise


def t_two_sided(level: float, df: int) -> float:
    """The x with P(|T| < x) = ``level`` for Student's t with ``df`` (an integer >= 1) degrees of
    freedom: the closed form of P(|T| < x) for integer df (Abramowitz & Stegun 26.7.3-4), inverted
    by bisection. The gate needs it for 2-30 processes, where scipy would be a dependency for one
    number."""
    if not 0 < level < 1 or df < 1:
        raise ValueError(f"t_two_sided needs 0 < level < 1 and df >= 1, not {level}, {df}")

    def inside(x: float) -> float:
        theta = math.atan(x / math.sqrt(df))
        c2, term, total = math.cos(theta) ** 2, 1.0, 1.0
        if df % 2:  # odd: (2/pi) (theta + sin cos (1 + 2/3 cos^2 + 2.4/3.5 cos^4 + ...))
            for k in range(1, (df - 1) // 2):
                term *= c2 * (2 * k) / (2 * k + 1)
                total += term
            return 2 / math.pi * (theta + (math.sin(theta) * math.cos(theta) * total if df > 1 else 0.0))
        for k in range(1, df // 2):  # even: sin (1 + 1/2 cos^2 + 1.3/2.4 cos^4 + ...)
            term *= c2 * (2 * k - 1) / (2 * k)
            total += term
        return math.sin(theta) * total

    lo, hi = 0.0, 1.0
    while inside(hi) < level:
        hi *= 2
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if inside(mid) < level else (lo, mid)
    return (lo + hi) / 2


@dataclass
class ChangePoint:
    index: int  # first point of the segment after the change
    p_value: float
    before_median: float
    after_median: float

    @property
    def change(self) -> float:
        return self.after_median / self.before_median - 1.0


#: Permutations evaluated together. Work memory of the test is O(PERMUTATION_CHUNK x n) floats,
#: never a distance matrix per permutation; the test stops early once it cannot become significant.
PERMUTATION_CHUNK = 32
_BLOCK_ELEMENTS = 1 << 16  # floats in one block of differences (512 KiB: stays in cache)
_TIE = 1e-9  # a permuted statistic within this relative distance of the observed one is a tie


def _row_sums(x: np.ndarray) -> np.ndarray:
    """sum_j |x_i - x_j| for every i, in O(n log n) (sorted prefix sums, no distance matrix)."""
    n = len(x)
    order = np.argsort(x, kind="stable")
    v = x[order]
    c = np.cumsum(v)
    k = np.arange(n)
    below = v * k - (c - v)  # sum over smaller ranks of v_k - v_j
    above = (c[-1] - c) - v * (n - 1 - k)  # sum over larger ranks of v_j - v_k
    out = np.empty(n)
    out[order] = below + above
    return out


def _best_splits(xp: np.ndarray, rp: np.ndarray, total: float, min_seg: int) -> tuple[np.ndarray, np.ndarray]:
    """Best split and its E-divisive statistic (alpha = 1) for each row of ``xp`` (k orderings of
    the same n values; ``rp`` their row sums ``sum_j |x_i - x_j|`` in the same order, ``total``
    the sum over all pairs).

    Everything follows from the within-prefix sums W(t) = sum_{i<j<t} |x_i - x_j|: the left
    segment's within sum is W(tau), the between sum is R(tau) - 2 W(tau) with R the prefix sum of
    the row sums, the right one total - R(tau) + W(tau). W grows by sum_{i<t} |x_t - x_i| per point,
    computed for a block of positions and all k orderings at once: O(k n^2) time, memory
    O(k n) plus one block of at most _BLOCK_ELEMENTS floats (more only when k n exceeds it)."""
    k, n = xp.shape
    cols = np.ascontiguousarray(xp.T)  # n x k, one row per position
    lower = np.empty((n, k))
    block = max(1, min(n, _BLOCK_ELEMENTS // (n * k)))  # positions per step: <= _BLOCK_ELEMENTS floats
    for b0 in range(0, n, block):
        b1 = min(n, b0 + block)
        d = np.abs(cols[:b1, None, :] - cols[None, b0:b1, :])  # b1 x block x k
        d *= (np.arange(b1)[:, None] < np.arange(b0, b1)[None, :])[:, :, None]  # only i < t
        lower[b0:b1] = d.sum(axis=0)
    tau = np.arange(min_seg, n - min_seg + 1)
    w = np.cumsum(lower, axis=0)[tau - 1]  # W(tau), tau x k
    r = np.cumsum(rp.T, axis=0)[tau - 1]  # R(tau)
    t_, m = tau[:, None].astype(float), (n - tau)[:, None].astype(float)
    between = r - 2.0 * w
    right = total - r + w
    e = 2.0 * between / (t_ * m) - w / (t_ * (t_ - 1) / 2.0) - right / (m * (m - 1) / 2.0)
    q = t_ * m / n * e
    i = np.argmax(q, axis=0)
    return tau[i], q[i, np.arange(k)]


def e_divisive(
    values,
    *,
    min_segment: int = 3,
    min_effect: float = 0.03,
    alpha: float = 0.05,
    permutations: int = 199,
    seed: int = 0,
    offset: int = 0,
    chunk: int = PERMUTATION_CHUNK,
) -> list[ChangePoint]:
    """Change points by E-divisive means (Matteson & James 2014) with a permutation test, by binary
    segmentation. A split counts only when p < alpha, both segments hold at least ``min_segment``
    points (so a single spike is never a change) and the segments' medians differ by at least
    ``min_effect`` (relative).

    The permutations are those of ``numpy.random.default_rng(seed + offset)`` (``offset``: index
    of ``values[0]`` in the whole series), drawn as before; they are evaluated ``chunk`` at a time,
    so time grows linearly with ``permutations`` and memory with ``chunk`` (O(chunk x n)), and the
    test stops as soon as p >= alpha is certain (a non-significant p-value is never reported).
    p = (1 + #permuted statistics >= the observed one) / (1 + permutations), where one equal to
    it up to rounding (relative 1e-9) counts: a permutation that only reorders equal values, or
    points within a segment, ties with the observed split and is not "less extreme" by chance."""
    x = np.asarray(values, dtype=float)
    n = len(x)
    if n < 2 * min_segment:
        return []
    rows = _row_sums(x)
    total = float(rows.sum()) / 2.0
    rng = np.random.default_rng(seed + offset)
    perms = rng.permuted(np.tile(np.arange(n), (permutations, 1)), axis=1)  # indices only: O(P n)
    taus, qs = _best_splits(x[None, :], rows[None, :], total, min_segment)
    tau, q = int(taus[0]), float(qs[0])
    bar = q - _TIE * abs(q)
    exceed = 0
    for lo in range(0, permutations, max(1, chunk)):
        p = perms[lo : lo + max(1, chunk)]
        _, q_perm = _best_splits(x[p], rows[p], total, min_segment)
        exceed += int(np.sum(q_perm >= bar))
        if (exceed + 1) / (permutations + 1) >= alpha:
            return []  # cannot become significant any more
    p_value = (exceed + 1) / (permutations + 1)
    if p_value >= alpha:
        return []
    before, after = float(np.median(x[:tau])), float(np.median(x[tau:]))
    found = []
    if before > 0 and abs(after / before - 1.0) >= min_effect:
        found.append(ChangePoint(offset + tau, p_value, before, after))

    def part(segment, at: int) -> list[ChangePoint]:
        return e_divisive(
            segment,
            min_segment=min_segment,
            min_effect=min_effect,
            alpha=alpha,
            permutations=permutations,
            seed=seed,
            offset=at,
            chunk=chunk,
        )

    return part(x[:tau], offset) + found + part(x[tau:], offset + tau)

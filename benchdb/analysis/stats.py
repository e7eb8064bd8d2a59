"""Statistics that SQL cannot do comfortably: bootstrap intervals and E-divisive change points.

Pure numpy, deterministic (seeded), no warehouse access: the gate and the history modules feed
them data read from the warehouse.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

BOOTSTRAP = 2000
MAX_BOOTSTRAP_N = 5000     # larger sides are subsampled (evenly, keeping order statistics' spread)


def _thin(x: np.ndarray) -> np.ndarray:
    if len(x) <= MAX_BOOTSTRAP_N:
        return x
    return np.sort(x)[np.linspace(0, len(x) - 1, MAX_BOOTSTRAP_N).astype(int)]


def bootstrap_median_ratio(base, cand, *, n_boot: int = BOOTSTRAP, level: float = 0.95,
                           seed: int = 0) -> tuple[float, float, float]:
    """(point, low, high): relative change of the median, cand / base - 1, with a percentile
    bootstrap confidence interval (both sides resampled independently)."""
    a = _thin(np.asarray(base, dtype=float))
    b = _thin(np.asarray(cand, dtype=float))
    rng = np.random.default_rng(seed)
    ma = np.median(a[rng.integers(0, len(a), (n_boot, len(a)))], axis=1)
    mb = np.median(b[rng.integers(0, len(b), (n_boot, len(b)))], axis=1)
    ratios = mb / ma - 1.0
    tail = (1.0 - level) / 2.0
    lo, hi = np.quantile(ratios, [tail, 1.0 - tail])
    return float(np.median(b) / np.median(a) - 1.0), float(lo), float(hi)


def robust_noise(medians) -> float | None:
    """Run-to-run noise of a series: scaled MAD of successive log changes of its medians."""
    x = np.log(np.asarray(medians, dtype=float))
    if len(x) < 4:
        return None
    d = np.diff(x)
    mad = np.median(np.abs(d - np.median(d))) * 1.4826
    return float(mad / np.sqrt(2.0))       # successive differences carry two points' noise


@dataclass
class ChangePoint:
    index: int            # first point of the segment after the change
    p_value: float
    before_median: float
    after_median: float

    @property
    def change(self) -> float:
        return self.after_median / self.before_median - 1.0


def _q_all(d: np.ndarray, min_seg: int) -> tuple[np.ndarray, np.ndarray]:
    """Best split and its E-divisive statistic (alpha = 1) for distance matrices d[..., n, n]."""
    n = d.shape[-1]
    s = np.zeros(d.shape[:-2] + (n + 1, n + 1))
    s[..., 1:, 1:] = d.cumsum(-2).cumsum(-1)               # s[a, b] = sum d[:a, :b]
    tau = np.arange(min_seg, n - min_seg + 1)
    m = n - tau
    diag = s[..., tau, tau]
    row = s[..., tau, n]
    between = row - diag
    left = diag / 2.0
    right = (s[..., n, n][..., None] - 2.0 * row + diag) / 2.0
    e = 2.0 * between / (tau * m) - left / (tau * (tau - 1) / 2.0) - right / (m * (m - 1) / 2.0)
    q = tau * m / n * e
    i = np.argmax(q, axis=-1)
    return tau[i], np.take_along_axis(q, i[..., None], -1)[..., 0]


def e_divisive(values, *, min_segment: int = 3, min_effect: float = 0.03, alpha: float = 0.05,
               permutations: int = 199, seed: int = 0, offset: int = 0) -> list[ChangePoint]:
    """Change points by E-divisive means (Matteson & James 2014) with a permutation test, by binary
    segmentation. A split counts only when p < alpha, both segments hold at least ``min_segment``
    points (so a single spike is never a change) and the segments' medians differ by at least
    ``min_effect`` (relative)."""
    x = np.asarray(values, dtype=float)
    n = len(x)
    if n < 2 * min_segment:
        return []
    d = np.abs(x[:, None] - x[None, :])
    tau, q = _q_all(d, min_segment)
    tau = int(tau)
    rng = np.random.default_rng(seed + offset)
    perms = rng.permuted(np.tile(np.arange(n), (permutations, 1)), axis=1)
    xp = x[perms]                                               # every permutation at once
    _, q_perm = _q_all(np.abs(xp[:, :, None] - xp[:, None, :]), min_segment)
    p_value = (int(np.sum(q_perm >= q)) + 1) / (permutations + 1)
    if p_value >= alpha:
        return []
    before, after = float(np.median(x[:tau])), float(np.median(x[tau:]))
    found = []
    if before > 0 and abs(after / before - 1.0) >= min_effect:
        found.append(ChangePoint(offset + tau, p_value, before, after))
    kw = dict(min_segment=min_segment, min_effect=min_effect, alpha=alpha, permutations=permutations, seed=seed)
    return (e_divisive(x[:tau], offset=offset, **kw) + found
            + e_divisive(x[tau:], offset=offset + tau, **kw))

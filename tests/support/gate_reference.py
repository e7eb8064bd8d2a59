"""The gate's judgement of a series by the plain computation its faster one replaced, kept only to
prove that the two answer the same (tests/analysis/test_check.py).

Each side's samples are read on their own, per result and in measurement order, by plain SQL over
the ``samples`` view (the raw-sample path, no passes, no segments); the one-process interval is the
bootstrap as it was (each side sorted by the thinning and again by the bootstrap, medians by
``np.median``); the processes' interval is :func:`benchdb.analysis.hierarchy.ratio_cis`; the rules
that read the intervals are the gate's documented ones (:mod:`benchdb.analysis.gate`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from benchdb.analysis import hierarchy
from benchdb.analysis.gate import EQUIVALENCE_LEVEL, LEVEL, MIN_SAMPLES

#: A result's samples of one metric, per process, in measurement order.
SAMPLES = """
SELECT repeat, list(value ORDER BY iteration) AS values
FROM samples WHERE result_id = $result_id AND metric = $metric
GROUP BY repeat ORDER BY repeat
"""

BOOTSTRAP, MAX_BOOTSTRAP_N = 2000, 5000


def _thin(x: np.ndarray) -> np.ndarray:
    if len(x) <= MAX_BOOTSTRAP_N:
        return x
    return np.sort(x)[np.linspace(0, len(x) - 1, MAX_BOOTSTRAP_N).astype(int)]


def _bootstrap_medians(x: np.ndarray, count: int, rng: np.random.Generator) -> np.ndarray:
    x = np.sort(np.asarray(x, dtype=float))
    n = len(x)

    def at(u: np.ndarray) -> np.ndarray:
        return x[np.clip(np.ceil(n * u).astype(np.int64) - 1, 0, n - 1)]

    k = (n + 1) // 2
    u = rng.beta(k, n - k + 1, count)
    if n % 2:
        return at(u)
    return (at(u) + at(u + (1.0 - u) * rng.beta(1, n - k, count))) / 2.0


def _bootstrap_median_ratios(base, cand, levels, seed: int = 0) -> list[tuple[float, float, float]]:
    a = _thin(np.asarray(base, dtype=float))
    b = _thin(np.asarray(cand, dtype=float))
    rng = np.random.default_rng(seed)
    ma = _bootstrap_medians(a, BOOTSTRAP, rng)
    mb = _bootstrap_medians(b, BOOTSTRAP, rng)
    ratios = mb / ma - 1.0
    point = float(np.median(b) / np.median(a) - 1.0)
    out = []
    for level in levels:
        tail = (1.0 - level) / 2.0
        lo, hi = np.quantile(ratios, [tail, 1.0 - tail])
        out.append((point, float(lo), float(hi)))
    return out


@dataclass
class Judged:
    base_median: float | None
    cand_median: float | None
    change: float | None = None
    ci: tuple[float, float] | None = None
    eq: tuple[float, float] | None = None
    verdict: str | None = None


def processes(con, result_id: str, metric: str) -> list[np.ndarray]:
    rows = con.execute(SAMPLES, {"result_id": result_id, "metric": metric}).fetchall()
    return [np.asarray(values, dtype=float) for _, values in rows]


def judge(
    gb: list[np.ndarray],
    gc: list[np.ndarray],
    *,
    threshold: float,
    noise_known: bool,
    interleaved: bool,
    worse_up: bool = True,
    seed: int = 0,
) -> Judged:
    """One series of two valid, ok results from each side's processes (``threshold``: the gate's,
    raised by the series' noise where ``noise_known``)."""
    vb = np.concatenate(gb) if gb else np.array([])
    vc = np.concatenate(gc) if gc else np.array([])
    out = Judged(float(np.median(vb)) if len(vb) else None, float(np.median(vc)) if len(vc) else None)
    if len(vb) < MIN_SAMPLES or len(vc) < MIN_SAMPLES:
        out.verdict = "inconclusive"
        return out
    if len(gb) < 2 or len(gc) < 2:
        found = _bootstrap_median_ratios(vb, vc, (LEVEL, EQUIVALENCE_LEVEL), seed=seed)
    else:
        out_b, out_c = hierarchy.outlier_processes(gb, worse_up), hierarchy.outlier_processes(gc, worse_up)
        gb = [g for i, g in enumerate(gb) if i not in out_b]
        gc = [g for i, g in enumerate(gc) if i not in out_c]
        out.base_median, out.cand_median = hierarchy.typical(gb), hierarchy.typical(gc)
        found = hierarchy.ratio_cis(gb, gc, (LEVEL, EQUIVALENCE_LEVEL), seed=seed)
    assert found is not None
    (point, lo, hi), (_, eq_lo, eq_hi) = found
    out.change, out.ci, out.eq = point, (lo, hi), (eq_lo, eq_hi)
    w_lo, w_hi = (lo, hi) if worse_up else (-hi, -lo)
    e_lo, e_hi = (eq_lo, eq_hi) if worse_up else (-eq_hi, -eq_lo)
    if not noise_known and (min(len(gb), len(gc)) < 2 or not interleaved):
        out.verdict = "inconclusive"
    elif w_lo > threshold:
        out.verdict = "regressed"
    elif w_hi < -threshold:
        out.verdict = "improved"
    elif e_lo >= -threshold and e_hi <= threshold:
        out.verdict = "unchanged"
    else:
        out.verdict = "inconclusive"
    return out

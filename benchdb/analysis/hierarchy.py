"""Intervals that see every level of variance: processes, then iterations within them.

On a shared machine one process's iterations agree closely while two processes of the same
scenario can differ by 10-40 %. A CI computed from one process's iterations cannot see that. With
K >= 2 processes (``--repeats K``), the hierarchical bootstrap (Kalibera & Jones, "Rigorous
Benchmarking in Reasonable Time", ISMM 2013) resamples processes with replacement, then the
iterations within each chosen process, and takes the statistic of the pooled resample. The gate's
interval (:func:`ratio_cis`) then widens the part that comes from choosing processes by
:func:`small_sample_factor`: a bootstrap over 3 processes is as narrow as their range.

Deterministic (seeded). Each process's samples are thinned to at most ``MAX_PER_PROCESS`` evenly
spaced order statistics first: it keeps each process's distribution, bounds the cost, and can only
widen the interval (a smaller resample varies more), never narrow it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist

import numpy as np

from benchdb.analysis.stats import bootstrap_medians, t_two_sided

MAX_PER_PROCESS = 500
DEFAULT_RESAMPLES = 400


def _thin(values: np.ndarray) -> np.ndarray:
    v = np.sort(np.asarray(values, dtype=float))
    if v.size <= MAX_PER_PROCESS:
        return v
    return v[np.linspace(0, v.size - 1, MAX_PER_PROCESS).round().astype(int)]


def resampled_medians(groups: list[np.ndarray], *, resamples: int = DEFAULT_RESAMPLES, seed: int = 0) -> np.ndarray:
    """Medians of ``resamples`` two-level bootstrap resamples of the pooled samples."""
    procs = [_thin(g) for g in groups if len(g)]
    if not procs:
        return np.array([])
    rng = np.random.default_rng(seed)
    k = len(procs)
    out = np.empty(resamples)
    for b in range(resamples):
        chosen = rng.integers(0, k, size=k)
        pooled = np.concatenate([procs[i][rng.integers(0, procs[i].size, size=procs[i].size)] for i in chosen])
        out[b] = np.median(pooled)
    return out


def hierarchical_median_ci(
    groups: list[np.ndarray], *, level: float = 0.95, resamples: int = DEFAULT_RESAMPLES, seed: int = 0
) -> tuple[float, float] | None:
    """The ``level`` percentile interval of the pooled median under the two-level bootstrap
    (``ci_method = 'hierarchical_bootstrap'``), from each process's samples (one array per
    process), or None with fewer than 2 processes. Not the same quantity as
    :meth:`benchdb.harness.sample_stats.Stats.order_statistics_median_ci`, the interval of one process's samples:
    this one also sees how much processes differ."""
    if sum(1 for g in groups if len(g)) < 2:
        return None
    meds = resampled_medians(groups, resamples=resamples, seed=seed)
    alpha = (1 - level) / 2
    return float(np.quantile(meds, alpha)), float(np.quantile(meds, 1 - alpha))


def typical(groups: list[np.ndarray]) -> float:
    """A side's typical process: the geometric mean of its processes' medians."""
    return float(np.exp(np.mean(np.log([np.median(g) for g in groups]))))


def _resampled_log_typical(
    groups: list[np.ndarray], resamples: int, rng: np.random.Generator
) -> tuple[float, np.ndarray, np.ndarray]:
    """log typical() under ``resamples`` two-level bootstrap resamples (processes with
    replacement, then each chosen process's thinned iterations with replacement), in three parts:
    (log typical() of the data, the shift from choosing processes, the shift from resampling their
    iterations); their sum is the resampled value."""
    procs = [_thin(g) for g in groups]
    # each process's median under every resample of its iterations: (processes x resamples)
    meds = np.log(np.stack([bootstrap_medians(p, resamples, rng) for p in procs]))
    chosen = rng.integers(0, len(procs), size=(resamples, len(procs)))
    logs = np.log([np.median(p) for p in procs])
    by_process = logs[chosen].mean(axis=1)
    resampled = meds[chosen, np.arange(resamples)[:, None]].mean(axis=1)
    return float(logs.mean()), by_process - logs.mean(), resampled - by_process


def ratio_ci(
    base: list[np.ndarray],
    cand: list[np.ndarray],
    *,
    level: float = 0.95,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> tuple[float, float, float] | None:
    """Point estimate and interval of typical(cand) / typical(base) - 1, resampling both sides'
    processes, then iterations, independently.

    The process is the unit of replication: each gives its median, and a side's value is the
    geometric mean of those. The median of all samples pooled is a poor statistic here: where
    processes fall into modes (whole processes some percent apart from the others throughout), the
    pooled median jumps between the modes as the resampled mix changes. numpy matmul at n=96 on this
    VM, an A/A pair of 15 processes a side: -5.5 % with a 90 % interval of [-8.8 %, +3.9 %] by the
    pooled median, -1.2 % [-4.9 %, +2.7 %] by this statistic (benchmarks/gate_real.py)."""
    found = ratio_cis(base, cand, (level,), resamples=resamples, seed=seed)
    return found[0] if found is not None else None


def ratio_cis(
    base: list[np.ndarray],
    cand: list[np.ndarray],
    levels: Sequence[float],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> list[tuple[float, float, float]] | None:
    """:func:`ratio_ci` at each of ``levels`` from one set of resamples (the seed fixes them: each
    interval is the one ratio_ci gives at its level), for the cost of one."""
    base, cand = [g for g in base if len(g)], [g for g in cand if len(g)]
    if not base or not cand:
        return None
    rng = np.random.default_rng(seed)
    b = _resampled_log_typical(base, resamples, rng)
    c = _resampled_log_typical(cand, resamples, np.random.default_rng(seed + 1))
    point = typical(cand) / typical(base) - 1
    out = []
    for level in levels:
        ratios = np.exp(_widened(c, len(cand), level) - _widened(b, len(base), level)) - 1
        alpha = (1 - level) / 2
        out.append((point, float(np.quantile(ratios, alpha)), float(np.quantile(ratios, 1 - alpha))))
    return out


def small_sample_factor(processes: int, level: float) -> float:
    """How much wider a side's resampled spread is made with ``processes`` processes at ``level``:
    sqrt(K / (K - 1)) x t(level, K - 1) / z(level), 1 for a single process.

    Resampling K processes with replacement sees (K - 1) / K of their variance and knows it from K
    values, so with few processes its percentile interval is too narrow: simulated A/A pairs whose
    processes differ by 20 % (a loaded CI machine), 3 processes a side, 5 % threshold, came out
    regressed or improved in 11.7 % of 300 pairs, 7.7 % with 5 a side, against the 5 % a 95 %
    interval promises. Scaled to the Student-t interval of K process values, 0.7 % and 1.3 %.
    The factor is 2.69 at K = 3, 1.58 at 5, 1.22 at 10, 1.06 at 30 (95 %)."""
    if processes < 2:
        return 1.0
    z = NormalDist().inv_cdf((1 + level) / 2)
    return math.sqrt(processes / (processes - 1)) * t_two_sided(level, processes - 1) / z


def _widened(parts: tuple[float, np.ndarray, np.ndarray], processes: int, level: float) -> np.ndarray:
    """A side's resampled log typical() with its process part widened by small_sample_factor (the
    iterations' part is not: it is resampled from hundreds of values)."""
    center, by_process, by_iteration = parts
    return center + small_sample_factor(processes, level) * by_process + by_iteration


#: A process is set aside as an outlier when its median lies further than this many robust standard
#: deviations (1.4826 x MAD) of its side's process medians on the slow side of their median, and
#: further than OUTLIER_FLOOR (relative). Only with OUTLIER_MIN_PROCESSES or more; at most one per 4.
OUTLIER_MADS, OUTLIER_FLOOR, OUTLIER_MIN_PROCESSES = 4.0, 0.05, 4


def outlier_processes(groups: list[np.ndarray], slow_is_higher: bool = True) -> list[int]:
    """Indices of the processes whose whole run sat apart from the others'.

    On a shared VM a process now and then runs 10-90 % slower throughout (it landed on a bad
    moment of the host: CPU steal, a neighbour), while the others agree within 1-2 %. Measured in
    interleaved A/A runs here (5 processes a side): such a process, resampled two or three times
    out of five, stretched the bootstrap interval to +-40 %, and 45 % of A/A comparisons were
    inconclusive. A real change moves every process of a side, so it never looks like this.
    Only the slow direction (``slow_is_higher``: latency; else throughput): a shared machine
    makes a process slower, never faster, and two modes of a bimodal benchmark are both real.
    Each index is at least OUTLIER_FLOOR and OUTLIER_MADS robust deviations slower than the median
    of the process medians (log scale); at most one per 4 processes is set aside, the slowest."""
    meds = [float(np.median(g)) for g in groups]
    k = len(meds)
    if k < OUTLIER_MIN_PROCESSES or min(meds) <= 0:
        return []
    logs = np.log(meds)
    center = float(np.median(logs))
    spread = 1.4826 * float(np.median(np.abs(logs - center)))
    limit = max(OUTLIER_MADS * spread, float(np.log1p(OUTLIER_FLOOR)))
    slow = (logs - center) if slow_is_higher else (center - logs)
    far = sorted((i for i in range(k) if slow[i] > limit), key=lambda i: -slow[i])
    return sorted(far[: k // 4])


def update(con, runs: list[str]) -> int:
    """Give every result of ``runs`` measured in 2+ processes the hierarchical bootstrap CI of its
    primary metric's median (results.ci_method = 'hierarchical_bootstrap'). Returns how many."""
    from benchdb import sql

    rows = con.execute(sql.load("queries/repeated_samples.sql"), {"runs": runs}).fetchall()
    updates = []
    for result_id, per_repeat in rows:
        ci = hierarchical_median_ci([np.asarray(v, dtype=float) for v in per_repeat], seed=0)
        if ci is not None:
            updates.append((result_id, ci[0], ci[1]))
    if updates:
        import pyarrow as pa

        con.register(
            "hierarchical_cis",
            pa.table(
                {"result_id": [u[0] for u in updates], "lo": [u[1] for u in updates], "hi": [u[2] for u in updates]}
            ),
        )
        con.execute(sql.load("queries/set_hierarchical_ci.sql"))
        con.unregister("hierarchical_cis")
    return len(updates)

"""One series' verdict (see :mod:`benchdb.analysis.gate`): the interval of its change from its two
sides' samples, and the rules that read the interval against the threshold."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from benchdb.analysis.gate import (
    EQUIVALENCE_LEVEL,
    HIGHER_IS_BETTER_UNITS,
    LEVEL,
    MIN_HISTORY,
    MIN_SAMPLES,
    NOISE_MULTIPLE,
    WORKING_STATUSES,
    Comparison,
    SideSamples,
)

if TYPE_CHECKING:
    import numpy as np


def judge(
    scenario: dict[str, Any],
    b: SideSamples,
    c: SideSamples,
    *,
    threshold: float,
    history: Sequence[float] | None = None,
    seed: int = 0,
    interleaved: bool = False,
    level: float = LEVEL,
    eq_level: float = EQUIVALENCE_LEVEL,
) -> Comparison:
    """One series' verdict on its baseline ``b`` and candidate ``c``. ``history``: the series'
    earlier values (its run-to-run noise, once MIN_HISTORY long). ``interleaved``: the two sides
    are one interleaved A/B run, whose alternating processes see the same drifts of the machine, so
    their spread is the run-to-run noise. Sides from separate invocations see different moments of
    the machine: without the series' history their difference cannot be told from noise (A/A pairs
    minutes apart on a shared VM: +50 % with a 3-process CI of [+36 %, +70 %]), and the verdict is
    inconclusive, naming the remedy."""
    import numpy as np

    from benchdb.analysis.stats import robust_noise, sorted_median

    ub, uc = b.unit, c.unit
    vb = np.concatenate(b.processes) if b.processes else np.asarray(b.values, dtype=float)
    vc = np.concatenate(c.processes) if c.processes else np.asarray(c.values, dtype=float)
    # with one process on a side, the interval bootstraps the pooled samples, which it sorts: sorted
    # once here, they give the medians too (a gate of thousands of series sorts each side once)
    pooled = _processes(b) < 2 or _processes(c) < 2
    if pooled:
        vb, vc = np.sort(vb), np.sort(vc)
    median = sorted_median if pooled else np.median
    cmp = Comparison(
        scenario,
        "unchanged",
        "",
        n_base=len(vb),
        n_cand=len(vc),
        unit=uc or ub,
        base_status=b.status,
        cand_status=c.status,
    )
    if len(vb):
        cmp.base_median = float(median(vb))
    if len(vc):
        cmp.cand_median = float(median(vc))
    early = _early_verdict(b, c, len(vb), len(vc))
    if early:
        cmp.verdict, cmp.reason = early
        return cmp
    worse_up = (uc or ub) not in HIGHER_IS_BETTER_UNITS  # latency-like: a larger value is slower
    gb, gc, aside, interval = _intervals(cmp, b, c, vb, vc, worse_up, seed, pooled_sorted=pooled)
    both = interval((level, eq_level))  # one set of resamples: nested intervals
    if both is None:
        # ratio_cis has no interval when a side has no process with samples left (all set aside)
        cmp.verdict, cmp.reason = "inconclusive", "no process with samples left on a side"
        return cmp
    (point, lo, hi), (_, eq_lo, eq_hi) = both
    cmp.change, cmp.ci_low, cmp.ci_high, cmp.eq_low, cmp.eq_high = point, lo, hi, eq_lo, eq_hi
    cmp.noise = robust_noise(history) if history and len(history) >= MIN_HISTORY else None
    cmp.threshold = max(threshold, NOISE_MULTIPLE * cmp.noise) if cmp.noise is not None else threshold
    cmp.verdict, cmp.reason = _interval_verdict(
        (lo, hi),
        (eq_lo, eq_hi),
        cmp.threshold,
        worse_up,
        noise_known=cmp.noise is not None,
        fewest_processes=min(len(gb), len(gc)),
        interleaved=interleaved,
        level=level,
        eq_level=eq_level,
    )
    cmp.reason += aside
    return cmp


def _processes(side: SideSamples) -> int:
    """How many processes the interval sees on ``side`` (its result's one where none are listed)."""
    return len(side.processes) if side.processes is not None else 1


def _early_verdict(b: SideSamples, c: SideSamples, n_b: int, n_c: int) -> tuple[str, str] | None:
    """(verdict, reason) when a side's status, validity or number of samples (``n_b``, ``n_c``)
    decides the series without an interval; None otherwise."""
    b_broken, c_broken = b.status not in WORKING_STATUSES, c.status not in WORKING_STATUSES
    if c_broken and b.status == "ok":
        return "broken", f"candidate is {c.describe_status()}; the baseline was ok"
    if b_broken and c_broken:
        return "still_broken", f"baseline was {b.describe_status()}; candidate is {c.describe_status()}"
    if b_broken and c.status == "ok":
        reason = f"baseline was {b.describe_status()}; candidate is ok"
        if c.validity != "valid":
            reason += " (invalid: " + "; ".join(c.validity_reasons) + ")"
        return "fixed", reason
    for side, r in (("baseline", b), ("candidate", c)):
        if r.status != "ok" or r.validity != "valid":
            why = r.describe_status() if r.status != "ok" else "invalid: " + "; ".join(r.validity_reasons)
            return "inconclusive", f"{side} result is {why}"
    if not n_b and not n_c:
        return "inconclusive", "metric not measured on either side"
    if n_b < MIN_SAMPLES or n_c < MIN_SAMPLES:
        return "inconclusive", f"too few samples ({n_b} vs {n_c}; need {MIN_SAMPLES})"
    return None


#: The (point, low, high) intervals of the change at some levels; None when a side has no samples.
_IntervalAt = Callable[[Sequence[float]], "list[tuple[float, float, float]] | None"]


def _intervals(
    cmp: Comparison,
    b: SideSamples,
    c: SideSamples,
    vb: np.ndarray,
    vc: np.ndarray,
    worse_up: bool,
    seed: int,
    *,
    pooled_sorted: bool = False,
) -> tuple[list[np.ndarray], list[np.ndarray], str, _IntervalAt]:
    """Each side's processes (outliers set aside), the note naming those set aside, and the
    interval of the change at a level; fills in the comparison's processes, medians and method.
    ``pooled_sorted``: ``vb`` and ``vc`` are sorted (the bootstrap over pooled samples needs no sort)."""
    import numpy as np

    from benchdb.analysis import hierarchy
    from benchdb.analysis.stats import bootstrap_median_ratios

    gb = list(b.processes) if b.processes is not None else [vb]
    gc = list(c.processes) if c.processes is not None else [vc]
    cmp.processes = (len(gb), len(gc))
    if len(gb) < 2 or len(gc) < 2:
        cmp.interval = "bootstrap over one process's iterations"
        return gb, gc, "", lambda levels: bootstrap_median_ratios(vb, vc, levels, seed=seed, presorted=pooled_sorted)
    aside = ""
    out_b, out_c = hierarchy.outlier_processes(gb, worse_up), hierarchy.outlier_processes(gc, worse_up)
    if out_b or out_c:

        def shift(g: list[np.ndarray], out: list[int], i: int) -> float:
            # the outlier's median against the pooled median of the others
            return float(np.median(g[i]) / np.median(np.concatenate([x for j, x in enumerate(g) if j not in out])) - 1)

        aside = "; set aside as outlier processes: " + ", ".join(
            [f"baseline {shift(gb, out_b, i):+.0%}" for i in out_b]
            + [f"candidate {shift(gc, out_c, i):+.0%}" for i in out_c]
        )
        gb = [g for i, g in enumerate(gb) if i not in out_b]
        gc = [g for i, g in enumerate(gc) if i not in out_c]
        cmp.n_base, cmp.n_cand = sum(map(len, gb)), sum(map(len, gc))
    # each side's value: its typical process (geometric mean of the process medians), so that
    # the change shown is the one the interval is about
    cmp.base_median, cmp.cand_median = hierarchy.typical(gb), hierarchy.typical(gc)
    cmp.interval = (
        "hierarchical bootstrap over processes and iterations (medians: geometric mean of the process medians)"
    )
    if aside:
        cmp.interval += f" ({len(out_b)} + {len(out_c)} outlier process(es) set aside)"
    return gb, gc, aside, lambda levels: hierarchy.ratio_cis(gb, gc, levels, seed=seed)


def _interval_verdict(
    ci: tuple[float, float],
    eq: tuple[float, float],
    t: float,
    worse_up: bool,
    *,
    noise_known: bool,
    fewest_processes: int,
    interleaved: bool,
    level: float,
    eq_level: float,
) -> tuple[str, str]:
    """(verdict, reason) from the change's ``level`` CI, its ``eq_level`` CI and the threshold ``t``."""
    (lo, hi), (eq_lo, eq_hi) = ci, eq
    # express the interval as "how much worse": positive = regression, whatever the direction
    w_lo, w_hi = (lo, hi) if worse_up else (-hi, -lo)
    e_lo, e_hi = (eq_lo, eq_hi) if worse_up else (-eq_hi, -eq_lo)
    if not noise_known and fewest_processes < 2:
        return "inconclusive", (
            f"run-to-run noise unknown: {fewest_processes} process on a side and no history of this series "
            f"(a within-process interval cannot see shifts between runs); compare an interleaved "
            f"`benchdb run --ab` run (--repeats 3 or more), or gate once the series has {MIN_HISTORY} runs"
        )
    if not noise_known and not interleaved:
        return "inconclusive", (
            f"run-to-run noise unknown: the sides are separate invocations and the series has no history "
            f"(processes of one invocation share its moment of the machine, so their spread cannot see "
            f"shifts between invocations); compare an interleaved `benchdb run --ab` run, or gate once "
            f"the series has {MIN_HISTORY} runs"
        )
    if w_lo > t:
        return "regressed", f"whole {level:.0%} CI beyond +{t:.1%}"
    if w_hi < -t:
        return "improved", f"whole {level:.0%} CI beyond -{t:.1%}"
    if e_lo >= -t and e_hi <= t:
        return "unchanged", (
            f"whole {eq_level:.0%} CI [{eq_lo:+.1%}, {eq_hi:+.1%}] within +-{t:.1%} "
            "(equivalence: two one-sided tests at 5%)"
        )
    if e_lo > t or e_hi < -t:  # beyond the threshold at eq_level, not at level
        return "inconclusive", (
            f"the {level:.0%} CI [{lo:+.1%}, {hi:+.1%}] is not wholly beyond +-{t:.1%} (the {eq_level:.0%} CI "
            f"[{eq_lo:+.1%}, {eq_hi:+.1%}] is); measure longer or with more --repeats"
        )
    return "inconclusive", (
        f"the {eq_level:.0%} CI [{eq_lo:+.1%}, {eq_hi:+.1%}] straddles +-{t:.1%}; measure longer or with more --repeats"
    )

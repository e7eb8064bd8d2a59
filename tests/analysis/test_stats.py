"""Change points that scale (benchdb.analysis.stats): the E-divisive statistic from prefix sums
against its definition, and the chunked permutation test against a naive one."""

import numpy as np
import pytest
from support.steps import series

from benchdb.analysis import stats
from benchdb.analysis.stats import e_divisive


# ----------------------------------------------------------------------------- the statistic
def naive_q(x: np.ndarray, tau: int) -> float:
    """E-divisive (alpha = 1) straight from its definition (Matteson & James 2014, eq. 3-4)."""
    a, b = x[:tau], x[tau:]
    n, m = len(x), len(b)
    between = np.abs(a[:, None] - b[None, :]).mean()
    within_a = sum(abs(a[i] - a[j]) for i in range(tau) for j in range(i + 1, tau)) / (tau * (tau - 1) / 2)
    within_b = sum(abs(b[i] - b[j]) for i in range(m) for j in range(i + 1, m)) / (m * (m - 1) / 2)
    return tau * m / n * (2 * between - within_a - within_b)


def naive_best(x: np.ndarray, min_seg: int = 3) -> tuple[int, float]:
    qs = [(naive_q(x, tau), -tau) for tau in range(min_seg, len(x) - min_seg + 1)]
    q, neg_tau = max(qs)
    return -neg_tau, q


def best(xp: np.ndarray, min_seg: int = 3):
    """stats' statistic for the rows of xp (orderings of the same values)."""
    rows = stats._row_sums(xp[0])
    rp = np.array([np.abs(r[:, None] - r[None, :]).sum(1) for r in xp])  # each ordering's row sums
    return stats._best_splits(xp, rp, float(rows.sum()) / 2, min_seg)


def test_statistic_known_answer():
    # two segments of three: between distances are all 1, within all 0 -> e = 2, q = 3 * 3 / 6 * 2 = 3
    tau, q = best(np.array([[0.0, 0, 0, 1, 1, 1]]))
    assert (int(tau[0]), float(q[0])) == (3, pytest.approx(3.0))
    # 1..8: by hand at tau = 4, between mean 4, within means 5/3 and 5/3 -> e = 14/3, q = 2 * 14/3
    x = np.arange(1.0, 9.0)
    assert naive_q(x, 4) == pytest.approx(28 / 3)
    tau, q = best(x[None, :])
    assert (int(tau[0]), float(q[0])) == (4, pytest.approx(28 / 3))


@pytest.mark.parametrize("n", [6, 7, 12, 40])
def test_statistic_equals_its_definition(n):
    rng = np.random.default_rng(n)
    for rounded in (False, True):
        x = rng.standard_t(3, n)
        x = np.round(x) if rounded else x  # ties too
        xp = np.vstack([x] + [x[rng.permutation(n)] for _ in range(5)])
        taus, qs = best(xp)
        for row, tau, q in zip(xp, taus, qs, strict=True):
            want_tau, want_q = naive_best(row)
            assert q == pytest.approx(want_q, rel=1e-10, abs=1e-12)
            assert naive_q(row, int(tau)) == pytest.approx(want_q, rel=1e-10, abs=1e-12)  # a best split


def test_row_sums_without_a_distance_matrix():
    x = np.random.default_rng(3).standard_t(3, 50).round(1)
    assert stats._row_sums(x) == pytest.approx(np.abs(x[:, None] - x[None, :]).sum(1), rel=1e-12)


# ----------------------------------------------------------------------------- the permutation test
def naive_e_divisive(x, *, min_segment=3, min_effect=0.03, alpha=0.05, permutations=199, seed=0, offset=0):
    """The whole permutation test from the definition: every permutation, one at a time, with the
    same draws; a permuted statistic counts when >= the observed one (ties within 1e-9 relative)."""
    x = np.asarray(x, dtype=float)
    n = len(x)
    if n < 2 * min_segment:
        return []
    tau, q = naive_best(x, min_segment)
    perms = np.random.default_rng(seed + offset).permuted(np.tile(np.arange(n), (permutations, 1)), axis=1)
    exceed = sum(naive_best(x[p], min_segment)[1] >= q - 1e-9 * abs(q) for p in perms)
    p_value = (exceed + 1) / (permutations + 1)
    if p_value >= alpha:
        return []
    before, after = float(np.median(x[:tau])), float(np.median(x[tau:]))
    found = [(offset + tau, p_value)] if before > 0 and abs(after / before - 1) >= min_effect else []
    kw = dict(min_segment=min_segment, min_effect=min_effect, alpha=alpha, permutations=permutations, seed=seed)
    return naive_e_divisive(x[:tau], offset=offset, **kw) + found + naive_e_divisive(x[tau:], offset=offset + tau, **kw)


def test_chunked_permutation_test_gives_the_same_change_points_as_the_naive_one():
    rng = np.random.default_rng(11)
    cases = [
        series(rng, 24, [(12, 0.10)]),
        series(rng, 30, [(9, 0.06), (20, -0.08)]),
        series(rng, 24),
        np.round(series(rng, 24, [(15, 0.05)]), 2),
    ]
    for x in cases:
        want = naive_e_divisive(x)
        for chunk in (1, 7, 32, 199):
            got = [(c.index, c.p_value) for c in e_divisive(x, chunk=chunk)]
            assert got == want, (chunk, got, want)
    assert naive_e_divisive(cases[0])[0][0] == 12 and naive_e_divisive(cases[2]) == []


def test_permutation_test_memory_is_bounded(monkeypatch):
    """A 600-point series: the old code held all 199 permuted distance matrices (1.7 GB); now the
    work memory is a chunk of orderings and one block of differences. The answer does not depend
    on the block size the differences are taken in."""
    import tracemalloc

    x = series(np.random.default_rng(4), 600, [(350, 0.05)])
    tracemalloc.start()
    try:
        got = [(c.index, c.p_value) for c in e_divisive(x)]
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert got and got[0][0] == 350
    assert peak < 40 * 2**20, peak  # chunk x n x 8 B orderings + 512 KiB blocks, not 1.7 GB
    monkeypatch.setattr(stats, "_BLOCK_ELEMENTS", 1)  # one position at a time
    assert [(c.index, c.p_value) for c in e_divisive(x)] == got


def test_step_found_and_flat_series_gives_none():
    rng = np.random.default_rng(2)
    (cp,) = e_divisive(series(rng, 40, [(25, 0.08)]))
    assert cp.index == 25 and cp.change == pytest.approx(0.08, abs=0.02) and cp.p_value < 0.05
    flat = [1 + 0.01 * rng.standard_normal(40) for _ in range(20)] + [np.ones(40)]
    assert [e_divisive(x) for x in flat] == [[]] * len(flat)

"""Change points that scale: the E-divisive statistic from prefix sums against its
definition, the chunked permutation test against a naive one, and the windowed update of the
change_points table on a real warehouse (rows written through benchdb's schema)."""

import json
from datetime import datetime, timedelta
from itertools import pairwise

import numpy as np
import pytest

from benchdb import sql
from benchdb.analysis import changepoints, stats
from benchdb.analysis.changepoints import Window, scan, windows
from benchdb.analysis.stats import e_divisive
from benchdb.schema import identity
from benchdb.store import database


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


def _series(rng, n, steps=(), noise=0.01):
    x = 1 + noise * rng.standard_t(3, n)
    for at, size in steps:
        x[at:] *= 1 + size
    return x


def test_chunked_permutation_test_gives_the_same_change_points_as_the_naive_one():
    rng = np.random.default_rng(11)
    cases = [
        _series(rng, 24, [(12, 0.10)]),
        _series(rng, 30, [(9, 0.06), (20, -0.08)]),
        _series(rng, 24),
        np.round(_series(rng, 24, [(15, 0.05)]), 2),
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

    x = _series(np.random.default_rng(4), 600, [(350, 0.05)])
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
    (cp,) = e_divisive(_series(rng, 40, [(25, 0.08)]))
    assert cp.index == 25 and cp.change == pytest.approx(0.08, abs=0.02) and cp.p_value < 0.05
    flat = [1 + 0.01 * rng.standard_normal(40) for _ in range(20)] + [np.ones(40)]
    assert [e_divisive(x) for x in flat] == [[]] * len(flat)


# ----------------------------------------------------------------------------- windows
def test_windows_tile_the_reexamined_range():
    assert windows(150, 149) == [Window(0, 150, 0, 150)]  # short series: whole, as before
    assert windows(1000, 999) == [Window(800, 1000, 850, 1000)]  # one appended run: the last 200
    plan = windows(1000, 0)
    assert plan[-1].zone_start == 0 and plan[0].zone_end == 1000
    for newer, older in pairwise(plan):
        assert older.zone_end == newer.zone_start  # zones tile, newest first
    for w in plan:
        assert w.end - w.start == 200 and w.start <= w.zone_start and w.zone_end <= w.end
        assert w.zone_start - w.start in (0, 50)  # a quarter of context before the zone
        assert w.end - w.zone_end >= 50 or w.end == 1000  # and after it, unless it is the newest
    assert windows(1000, 700)[-1].zone_start <= 700 < windows(1000, 700)[-2].zone_start


def test_tiled_scan_finds_what_the_whole_series_has():
    rng = np.random.default_rng(8)
    x = _series(rng, 600, [(100, 0.06), (300, -0.05), (480, 0.10)])
    recorded, seen, live_from = scan(x, 0)
    assert live_from == 0
    assert sorted(c.index for c in recorded) == [c.index for c in e_divisive(x)] == [100, 300, 480]
    # an appended point re-examines only the last 200 points and records only in the last 150
    recorded, seen, live_from = scan(x[400:], 599, origin=400)
    assert live_from == 450 and [c.index for c in recorded] == [480]


# ----------------------------------------------------------------------------- through the warehouse
HW = {
    "kind": "cpu",
    "vendor": "V",
    "device_name": "CPU",
    "cpu_model": "CPU",
    "cores_logical": 4,
    "memory_bytes": 2**34,
    "arch": "x86_64",
}


def _scenario(model):
    return {
        "model_id": model,
        "backend": "numpy",
        "device": "cpu",
        "mode": "eager",
        "precision": "fp32",
        "batch_size": 1,
        "input_shape": "n=64",
        "options": {"threads": 1},
    }


def _add_runs(con, series: dict[str, np.ndarray], first: int, count: int) -> list[str]:
    """Runs first..first+count-1, each with one valid result per series (medians from the arrays)."""
    hw = identity.hardware_id(HW)
    runs = []
    for i in range(first, first + count):
        run = f"run-{i:05d}"
        runs.append(run)
        con.execute(
            "INSERT INTO runs (run_id, started_at, git_commit) VALUES (?, ?, ?)",
            [run, datetime(2025, 1, 1) + timedelta(hours=i), f"{i:040x}"],
        )
        con.executemany(
            "INSERT INTO results (result_id, run_id, file_id, hardware_id, arch_id, model_id, backend, device, mode, "
            "precision, batch_size, input_shape, status, validity, metric, unit, n, median, options, options_id, "
            "series_id) VALUES (?, ?, 0, ?, 'a', ?, 'numpy', 'cpu', 'eager', 'fp32', 1, 'n=64', 'ok', 'valid', "
            "'latency_s', 's', 100, ?, ?, ?, ?)",
            [
                [
                    identity.scenario_id(run, _scenario(m)),
                    run,
                    hw,
                    m,
                    float(x[i]),
                    json.dumps({"threads": 1}),
                    identity.options_id({"threads": 1}),
                    identity.series_id(_scenario(m), hw),
                ]
                for m, x in series.items()
            ],
        )
    return runs


@pytest.fixture
def warehouse(tmp_path):
    con, _ = database.open_writable(tmp_path / "w.duckdb")
    con.execute(
        "INSERT INTO hardware (hardware_id, kind, device_name) VALUES (?, 'cpu', 'CPU')", [identity.hardware_id(HW)]
    )
    yield con
    con.close()


def _stored(con):
    return con.execute(
        "SELECT model_id, points_before, points_after, status FROM change_points ORDER BY model_id, points_before"
    ).fetchall()


def test_update_after_an_ingest_finds_a_step_and_nothing_in_a_flat_series(warehouse):
    rng = np.random.default_rng(21)
    series = {"flat": 0.01 * _series(rng, 261), "step": 0.01 * _series(rng, 261, [(230, 0.08)])}
    _add_runs(warehouse, series, 0, 260)
    assert changepoints.update(warehouse, None) == 1  # the history, tiled
    assert _stored(warehouse) == [("step", 230, 30, "open")]
    (new,) = _add_runs(warehouse, series, 260, 1)
    assert changepoints.update(warehouse, [new]) == 1  # the ingest: the last 200 points
    assert _stored(warehouse) == [("step", 230, 31, "open")]
    changepoints.update(warehouse, [new])  # again: same answer, nothing doubled
    assert _stored(warehouse) == [("step", 230, 31, "open")]


def test_window_keeps_older_known_change_points(warehouse):
    rng = np.random.default_rng(22)
    series = {"m": 0.01 * _series(rng, 301, [(40, 0.10)])}
    runs = _add_runs(warehouse, series, 0, 300)
    assert changepoints.update(warehouse, None) == 1
    assert _stored(warehouse) == [("m", 40, 260, "open")]
    sid = identity.series_id(_scenario("m"), identity.hardware_id(HW))
    for at in (20, 250):  # open change points nothing supports: settled range, re-examined range
        row = warehouse.execute(
            "SELECT run_id, started_at, git_commit FROM runs WHERE run_id = ?", [runs[at]]
        ).fetchall()[0]
        warehouse.execute(
            sql.load("queries/upsert_change_point.sql"),
            {
                "change_id": identity.change_id(sid, row[0]),
                "series_id": sid,
                "model_id": "m",
                "backend": "numpy",
                "device": "cpu",
                "mode": "eager",
                "precision": "fp32",
                "batch_size": 1,
                "input_shape": "n=64",
                "options_id": identity.options_id({"threads": 1}),
                "hardware_id": identity.hardware_id(HW),
                "run_id": row[0],
                "run_started_at": row[1],
                "git_commit": row[2],
                "before_median": 0.01,
                "after_median": 0.011,
                "change": 0.1,
                "p_value": 0.01,
                "points_before": at,
                "points_after": 300 - at,
            },
        )
    (new,) = _add_runs(warehouse, series, 300, 1)
    plan = windows(301, 300)
    assert plan == [Window(101, 301, 151, 301)]  # the step at 40 is not even read
    changepoints.update(warehouse, [new])
    # the step before the window and the one at 20 are kept as they were; the one at 250 is gone
    assert _stored(warehouse) == [("m", 20, 280, "open"), ("m", 40, 260, "open")]

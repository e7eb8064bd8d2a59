"""Change points that scale: the windows a long series is re-examined in, and the windowed update of
the change_points table on a real warehouse (rows written through benchdb's schema). The statistic
and its permutation test are tests/analysis/test_stats.py."""

import json
from datetime import datetime, timedelta
from itertools import pairwise

import numpy as np
import pytest
from support import steps

from benchdb import sql
from benchdb.analysis import changepoints
from benchdb.analysis.changepoints import Window, scan, windows
from benchdb.analysis.stats import e_divisive
from benchdb.schema import identity
from benchdb.store import database


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
    x = steps.series(rng, 600, [(100, 0.06), (300, -0.05), (480, 0.10)])
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
    series = {"flat": 0.01 * steps.series(rng, 261), "step": 0.01 * steps.series(rng, 261, [(230, 0.08)])}
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
    series = {"m": 0.01 * steps.series(rng, 301, [(40, 0.10)])}
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

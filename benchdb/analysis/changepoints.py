"""Change points over each series' history, stored in the change_points table.

A series is one scenario on one piece of hardware across runs (the trends view); its points are
the medians of its valid results. E-divisive means with a permutation test, a minimum effect size
and a minimum segment length (a single spike is never a change point).
"""

from __future__ import annotations

from itertools import groupby

import duckdb

from benchdb import sql
from benchdb.analysis.stats import e_divisive
from benchdb.errors import BenchdbError
from benchdb.schema.identity import change_id

MIN_SEGMENT = 3
MIN_EFFECT = 0.03


def update(con: duckdb.DuckDBPyConnection, runs: list[str] | None = None, *, min_segment: int = MIN_SEGMENT,
           min_effect: float = MIN_EFFECT) -> int:
    """Re-detect change points of the series touched by ``runs`` (all series when None).

    Known change points keep their review status; open ones no longer found are removed.
    Returns the number of open change points found now. The caller owns the connection.
    """
    cur = con.execute(sql.load("queries/series_points.sql"), {"runs": runs})
    cols = [d[0] for d in cur.description]
    rows = [dict(zip(cols, r)) for r in cur.fetchall()]
    found = 0
    con.execute("BEGIN TRANSACTION")
    try:
        touched, keep = [], []
        for series_id, group in groupby(rows, key=lambda r: r["series_id"]):
            points = list(group)
            touched.append(series_id)
            for cp in e_divisive([p["median"] for p in points], min_segment=min_segment, min_effect=min_effect):
                first = points[cp.index]
                cid = change_id(series_id, first["run_id"])
                keep.append(cid)
                params = {k: first[k] for k in ("model_id", "backend", "device", "mode", "precision", "batch_size",
                                                "input_shape", "options_id", "hardware_id", "run_id",
                                                "run_started_at", "git_commit")}
                con.execute(sql.load("queries/upsert_change_point.sql"), {
                    **params, "change_id": cid, "series_id": series_id, "before_median": cp.before_median,
                    "after_median": cp.after_median, "change": cp.change, "p_value": cp.p_value,
                    "points_before": cp.index, "points_after": len(points) - cp.index})
                found += 1
        if touched:
            con.execute(sql.load("queries/forget_change_points.sql"), {"series": touched, "keep": keep})
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return found


def ack(con: duckdb.DuckDBPyConnection, prefix: str, note: str) -> str:
    """Mark a change point as intended; it stops being reported. Returns its full id."""
    if len(prefix) < 4:
        raise BenchdbError(f"change id {prefix!r} is too short; give at least 4 characters")
    rows = con.execute(sql.load("queries/find_change_point.sql"), {"prefix": prefix}).fetchall()
    if not rows:
        raise BenchdbError(f"no change point {prefix!r}; list them with `benchdb report --regressions`")
    if len(rows) > 1:
        raise BenchdbError(f"change id {prefix!r} is ambiguous ({len(rows)} match); give more characters")
    cid = rows[0][0]
    con.execute(sql.load("queries/ack_change_point.sql"), {"change_id": cid, "note": note})
    return cid

"""Change points over each series' history, stored in the change_points table.

A series is one scenario on one piece of hardware across runs (the trends view); its points are
the medians of its valid results. E-divisive means with a permutation test, a minimum effect size
and a minimum segment length (a single spike is never a change point).

Windowed, so that the cost of an ingest does not grow with the length of a series' history:

- Detection runs on windows of at most ``WINDOW`` (200) consecutive points. A series of up to
  ``WINDOW`` points is examined whole, as one window (the same answer as over the full history).
- Each window *owns* a zone, the part of it whose change points it records: the middle half,
  with a quarter of the window (``WINDOW // 4`` points) of context on each side. The newest
  window ends at the newest point and owns everything after its first quarter; the oldest one
  starts at the series' first point, holds ``WINDOW`` points too and owns from there.
- On an ingest only the zones from the series' oldest new point onwards are re-examined: one
  window (the last ``WINDOW`` points, owning the last 3/4 of them) when a run is appended, more
  for a backfill or a first ingest of a long history (``update(con, None)`` tiles the whole
  history). Everything before the re-examined range is settled: the change points stored there
  are kept as they are, whatever their status.
- Within the re-examined range the rules are the ones of a full re-detection: a change point
  found is recorded (a known one keeps its review status), an open one no longer found is
  removed. Estimates of the same shift from two windows, from both sides of the settled
  boundary, or after more runs, can differ by a point or two: a change point fewer than
  ``min_segment`` points from one already kept (settled, acknowledged, or recorded by a newer
  window) is the same shift (binary segmentation never puts two closer), so it is neither
  recorded twice nor does it make the kept one disappear.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import groupby
from typing import TYPE_CHECKING

from benchdb import sql
from benchdb.analysis.stats import ChangePoint, e_divisive
from benchdb.errors import BenchdbError
from benchdb.schema.identity import SCENARIO_KEY, change_id
from benchdb.store.transaction import transaction

if TYPE_CHECKING:  # the caller's connection; report's import of MIN_SEGMENT stays light
    import duckdb

MIN_SEGMENT = 3
MIN_EFFECT = 0.03
#: Points per detection window; a quarter of it is the context kept on each side of a window's zone.
WINDOW = 200


@dataclass(frozen=True)
class Window:
    start: int  # the points examined: [start, end) of the series
    end: int
    zone_start: int  # the change points recorded: [zone_start, zone_end)
    zone_end: int


def windows(n_points: int, first_new: int, window: int = WINDOW) -> list[Window]:
    """The windows to examine for a series of ``n_points`` whose oldest new point is at
    ``first_new``, newest first. Their zones tile [windows[-1].zone_start, n_points)."""
    if window < 8:
        raise ValueError(f"window must hold at least 8 points, not {window}")
    if n_points <= window:
        return [Window(0, n_points, 0, n_points)]
    context = window // 4
    stride = window - 2 * context
    out = []
    zone_end, zone_start = n_points, n_points - window + context
    while True:
        end = min(n_points, max(zone_end + context, window))  # the oldest window holds `window` points too
        out.append(Window(max(0, zone_start - context), end, zone_start, zone_end))
        if zone_start <= max(first_new, 0):
            return out
        zone_end, zone_start = zone_start, max(0, zone_start - stride)


def scan(
    values,
    first_new: int = 0,
    *,
    origin: int = 0,
    window: int = WINDOW,
    min_segment: int = MIN_SEGMENT,
    min_effect: float = MIN_EFFECT,
    settled=(),
) -> tuple[list[ChangePoint], list[int], int]:
    """Change points of one series after new points from index ``first_new`` on. ``values`` are
    the series' points from index ``origin`` to its end (at least from ``first_new - window``);
    every index here, in and out, counts from the series' first point. ``settled``: indexes of kept
    change points: none is recorded fewer than ``min_segment`` points from one (at one, it is
    recorded again: the same change point).

    Returns ``(recorded, seen, live_from)``: the change points to record, all inside the
    re-examined range ``[live_from, n)``, newest window first; every index any window found (inside
    or outside its zone), for the keep rule; and ``live_from``."""
    n = origin + len(values)
    plan = windows(n, first_new, window)
    live_from = plan[-1].zone_start
    if plan[-1].start < origin:
        raise ValueError(f"points from index {plan[-1].start} are needed, got them from {origin}")
    recorded: list[ChangePoint] = []
    seen: list[int] = []

    def near(i: int, others) -> bool:
        return any(abs(i - j) < min_segment for j in others)

    for w in plan:
        lo = w.zone_start - (min_segment if w.zone_start > live_from else 0)  # boundaries shared by two
        hi = w.zone_end + (min_segment if w.zone_end < n else 0)  # zones are fuzzy
        for cp in e_divisive(
            values[w.start - origin : w.end - origin], min_segment=min_segment, min_effect=min_effect, offset=w.start
        ):
            seen.append(cp.index)
            if (
                max(lo, live_from) <= cp.index < hi
                and not near(cp.index, [j for j in settled if j != cp.index])
                and not near(cp.index, [c.index for c in recorded])
            ):
                recorded.append(cp)
    return recorded, seen, live_from


def update(
    con: duckdb.DuckDBPyConnection,
    runs: list[str] | None = None,
    *,
    min_segment: int = MIN_SEGMENT,
    min_effect: float = MIN_EFFECT,
    window: int = WINDOW,
) -> int:
    """Re-detect change points of the series touched by ``runs`` (all series when None), in the
    range their new points can affect (see the module docstring: at most ``window`` points per
    series when a run is appended).

    Known change points keep their review status; open ones in the re-examined range that are no
    longer found are removed; those before it are kept. Returns the number of open change points
    of the touched series, over their whole history. The caller owns the connection.
    """
    rows = sql.rows(con.execute(sql.load("queries/series_points.sql"), {"runs": runs, "context": window}))
    series = {sid: list(group) for sid, group in groupby(rows, key=lambda r: r["series_id"])}
    stored: dict[str, list[tuple]] = {}
    if series:
        for sid, cid, run_id, status in con.execute(
            sql.load("queries/series_change_points.sql"), {"series": list(series)}
        ).fetchall():
            stored.setdefault(sid, []).append((cid, run_id, status))
    with transaction(con):
        touched, keep = [], []
        for series_id, points in series.items():
            touched.append(series_id)
            origin, n_points, first_new = points[0]["idx"], points[0]["n_points"], points[0]["first_new"]
            index = {p["run_id"]: p["idx"] for p in points}
            # stored change points at their index, or None when older than the points read
            known = [(cid, index.get(run_id), status) for cid, run_id, status in stored.get(series_id, [])]
            live_from = windows(n_points, first_new, window)[-1].zone_start
            settled = [i for _, i, status in known if i is not None and (i < live_from or status != "open")]
            recorded, seen, _ = scan(
                [p["median"] for p in points],
                first_new,
                origin=origin,
                window=window,
                min_segment=min_segment,
                min_effect=min_effect,
                settled=settled,
            )
            for cid, i, status in known:
                if i is None or i < live_from or status != "open":
                    keep.append(cid)  # settled, or reviewed: never removed here
                elif not any(abs(i - cp.index) < min_segment for cp in recorded) and any(
                    abs(i - j) < min_segment for j in seen
                ):
                    keep.append(cid)  # same shift, found just outside the range
            for cp in recorded:
                first = points[cp.index - origin]
                cid = change_id(series_id, first["run_id"])
                keep.append(cid)
                params = {k: first[k] for k in (*SCENARIO_KEY, "hardware_id", "run_id", "run_started_at", "git_commit")}
                con.execute(
                    sql.load("queries/upsert_change_point.sql"),
                    {
                        **params,
                        "change_id": cid,
                        "series_id": series_id,
                        "before_median": cp.before_median,
                        "after_median": cp.after_median,
                        "change": cp.change,
                        "p_value": cp.p_value,
                        "points_before": cp.index,
                        "points_after": n_points - cp.index,
                    },
                )
        found = 0
        if touched:
            con.execute(sql.load("queries/forget_change_points.sql"), {"series": touched, "keep": keep})
            found = con.execute(sql.load("queries/count_open_change_points.sql"), {"series": touched}).fetchall()[0][0]
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

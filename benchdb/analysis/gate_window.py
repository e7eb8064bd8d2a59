"""Which window of a serving load point the gate (:mod:`benchdb.analysis.check`) judges. A load point
that benchdb's serving client measured records, beside its whole window, a steady-state window
(:mod:`benchdb.schema.steady_state`) and the TTFT of the requests sent within it. With no ``--metric``,
a series whose every compared result on both sides found one is judged on that steady-state TTFT: a
warm-up or a drain tail then moves no verdict. A series where a side found none is judged on the whole
window, and the side is named with why (a candidate that drifts is worth a reviewer's eye). A metric
given with ``--metric`` is judged as asked."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from benchdb import sql
from benchdb.schema.serving import STEADY_TPOT, STEADY_TTFT, TTFT
from benchdb.startup import duckdb

#: The default metric -> its figure over the steady-state window.
STEADY = {TTFT: STEADY_TTFT}
#: Metrics that are measured over the steady-state window only.
STEADY_METRICS = frozenset({STEADY_TTFT, STEADY_TPOT})
STEADY_WINDOW, WHOLE_WINDOW = "steady state", "whole window"
#: The mark of a comparison judged over the steady-state window, in the terminal table.
MARK = "†"


@dataclass(frozen=True)
class Judged:
    """How one series is judged: the metric read, the window it covers (None where neither side is a
    load point with a steady-state test) and a note naming a side that found no steady state."""

    metric: str
    window: str | None = None
    note: str | None = None


def choose(
    con: duckdb.DuckDBPyConnection,
    metric: str,
    *,
    defaulted: bool,
    shared: list[str],
    own: dict[str, str],
    base_ids: list[str],
    cand_ids: list[str],
) -> dict[str, Judged]:
    """Per series of ``shared`` (candidate series under their own ids in ``own``): how it is judged
    on ``metric``, ``defaulted`` when the user named none. A side counts as steady when every process
    of its results found a steady-state window: a result that merged several processes (--repeats)
    describes the first one only in its extra, so each process is told by its steady-state samples."""
    series = sorted(set(shared) | set(own.values()))
    params = {"results": [*base_ids, *cand_ids], "series": series}
    rows = sql.rows(con.execute(sql.load("queries/gate_steady.sql"), params))
    tested = [r["result_id"] for r in rows if r["tested"]]
    if not tested:
        return {k: Judged(metric) for k in shared}
    counts = {
        rid: (processes, steady)
        for rid, processes, steady in con.execute(
            sql.load("queries/gate_steady_processes.sql"), {"results": tested, "metric": TTFT, "steady": STEADY_TTFT}
        ).fetchall()
    }
    on_base = set(base_ids)
    members: dict[tuple[str, str], list[_Member]] = {}
    for r in rows:
        side = "baseline" if r["result_id"] in on_base else "candidate"
        processes, steady = counts.get(r["result_id"], (0, 0))
        members.setdefault((side, r["series_id"]), []).append(
            _Member(r["tested"], r["found"], r["reason"], processes, steady)
        )
    to = STEADY.get(metric) if defaulted else None
    out: dict[str, Judged] = {}
    for k in shared:
        sides = {
            "baseline": members.get(("baseline", k), []),
            "candidate": members.get(("candidate", own.get(k, k)), []),
        }
        if not any(m.tested for ms in sides.values() for m in ms):
            out[k] = Judged(metric)
            continue
        judged = to if to and all(_steady(ms) for ms in sides.values()) else metric
        notes = [n for side, ms in sides.items() if (n := _note(side, ms))]
        out[k] = Judged(judged, STEADY_WINDOW if judged in STEADY_METRICS else WHOLE_WINDOW, "; ".join(notes) or None)
    return out


@dataclass(frozen=True)
class _Member:
    """One result of a side of a series: its steady-state test (``extra``, its first process's) and
    its processes with TTFT samples, of which ``steady`` found a steady-state window."""

    tested: bool
    found: bool
    reason: str | None
    processes: int
    steady: int


def _steady(members: list[_Member]) -> bool:
    return bool(members) and all(m.tested and m.processes and m.steady == m.processes for m in members)


def _note(side: str, members: list[_Member]) -> str | None:
    """What a reviewer should know of one side's steady-state tests: none run, or processes that
    found no steady state (and why, where the result recorded it)."""
    if not members:
        return None
    if not any(m.tested for m in members):
        return f"no steady-state test on {side}"
    total = sum(m.processes for m in members if m.tested)
    missed = total - sum(m.steady for m in members if m.tested)
    if missed <= 0:
        return None
    part = f" in {missed} of {total} processes" if missed < total else ""
    reasons = "; ".join(dict.fromkeys(m.reason for m in members if m.tested and not m.found and m.reason))
    return f"none on {side}{part}" + (f": {reasons}" if reasons else "")


def footnote(windows: Sequence[str | None], flagged: int, metric: str, *, defaulted: bool) -> str:
    """The line under the gate's table that says which window its serving series were judged over."""
    steady = sum(w == STEADY_WINDOW for w in windows)
    whole = sum(w == WHOLE_WINDOW for w in windows)
    if not steady and not whole:
        return ""
    if defaulted and metric in STEADY and not steady:
        text = f"{metric} over the whole window ({whole} series): no series found a steady state on both sides."
    elif defaulted and metric in STEADY:
        text = (
            f"{MARK} TTFT over each side's steady-state window ({steady} series, judged on {STEADY[metric]}); "
            f"whole window where a side found none ({whole} series)."
        )
    elif steady:
        text = f"{MARK} {metric} over each side's steady-state window ({steady} series)."
    else:
        text = (
            f"{metric} over the whole window ({whole} series): --metric was given; with no --metric, TTFT "
            "is judged over each side's steady-state window where both sides found one."
        )
    if flagged:
        text += f" {flagged} series name a side with no steady state in their row."
    return text

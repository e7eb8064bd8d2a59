"""Running the regression gate (:mod:`benchdb.analysis.gate`): resolve two selections, pair the
series they share, read their samples a pass at a time and judge each series."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from benchdb import sql
from benchdb.analysis import gate_samples, gate_window, selection
from benchdb.analysis.gate import VERDICTS, GateResult, SideSamples
from benchdb.analysis.selection import SHOWN, Selection
from benchdb.analysis.verdict import judge
from benchdb.errors import BenchdbError
from benchdb.startup import duckdb


def primary_metric(*sides: Selection) -> str:
    """The metric to compare when none is asked for: the results' own headline (``ttft_s`` for a serving
    load point), latency_s where the selections hold several kinds (the one every timed result has)."""
    found = {r.get("primary_metric") or "latency_s" for s in sides for r in s.results.values()}
    return found.pop() if len(found) == 1 else "latency_s"


def compare(
    con: duckdb.DuckDBPyConnection,
    baseline: str,
    candidate: str,
    *,
    threshold: float = 0.05,
    metric: str | None = None,
    seed: int = 0,
) -> GateResult:
    base_ids = selection.resolve_selector(con, baseline)
    cand_ids = selection.resolve_selector(con, candidate)
    overlap = set(base_ids) & set(cand_ids)
    if overlap:
        raise BenchdbError(
            f"selectors {baseline!r} and {candidate!r} pick the same run(s) ({len(overlap)} "
            "result(s) on both sides); compare disjoint runs"
        )
    bside, cside = selection.load(con, baseline, base_ids), selection.load(con, candidate, cand_ids)
    bside, cside = _one_side_per_run(bside, cside)
    # the two endpoints of one interleaved A/B (`run --ab-url`) ran the same scenarios on two systems:
    # a candidate series is compared under the id of its baseline series
    renamed = (
        selection.deployment_pairs(bside, cside)
        if _ab_pair(list(bside.results.values()), list(cside.results.values()))
        else {}
    )
    if renamed:
        cside = Selection(candidate, {renamed.get(k, k): r for k, r in cside.results.items()})
    base, cand = bside.results, cside.results
    defaulted = metric is None
    if metric is None:
        metric = primary_metric(bside, cside)
    selection.check_metric(con, metric, bside, cside)
    shared = sorted(set(base) & set(cand), key=selection.shown_order(cand))
    if not shared:
        raise selection.nothing_shared(bside, cside)
    out = GateResult(baseline, candidate, metric, threshold, base_side=bside, cand_side=cside)
    out.only_baseline = [base[k] for k in sorted(set(base) - set(cand), key=selection.shown_order(base))]
    out.only_candidate = [cand[k] for k in sorted(set(cand) - set(base), key=selection.shown_order(cand))]

    own = {b: c for c, b in renamed.items()}  # the candidate's own series ids
    judged = gate_window.choose(
        con, metric, defaulted=defaulted, shared=shared, own=own, base_ids=base_ids, cand_ids=cand_ids
    )
    before = min(cand[k]["run_started_at"] for k in shared)
    # a series' noise is that of the metric it is judged on (its steady-state figure, or the gate's)
    history: dict = {}
    for m, series in _by_metric(shared, judged).items():
        params = {"metric": m, "before": before, "series": series}
        history.update(con.execute(sql.load("queries/series_history.sql"), params).fetchall())
    interleaved = _ab_pair([base[k] for k in shared], [cand[k] for k in shared])
    for chunk in _passes(shared, base, cand):
        _judge_chunk(
            con,
            out,
            chunk,
            base,
            cand,
            base_ids,
            cand_ids,
            judged,
            renamed,
            own,
            history,
            interleaved=interleaved,
            threshold=threshold,
            seed=seed,
        )
    out.comparisons.sort(key=lambda c: VERDICTS.index(c.verdict))  # stable: shown order within a verdict
    out.window_note = gate_window.footnote(
        [c.window for c in out.comparisons],
        sum(c.steady_state is not None for c in out.comparisons),
        metric,
        defaulted=defaulted,
    )
    return out


def _by_metric(series: list[str], judged: dict[str, gate_window.Judged]) -> dict[str, list[str]]:
    """``series`` grouped by the metric each is judged on, in their order."""
    out: dict[str, list[str]] = {}
    for k in series:
        out.setdefault(judged[k].metric, []).append(k)
    return out


def _one_side_per_run(base: Selection, cand: Selection) -> tuple[Selection, Selection]:
    """Each run on one side only. ``latest~1`` and ``latest`` pick runs per hardware and backend, so one
    run can be the older on one backend and the only one on another: its series with no counterpart
    on the other side compare with nothing and are left out of that side; a run that is still on both
    sides is refused."""

    def runs(side: Selection) -> set[str]:
        return {r["run_id"] for r in side.results.values()}

    both = runs(base) & runs(cand)
    if not both:
        return base, cand

    def kept(side: Selection, other: Selection) -> Selection:
        return Selection(
            side.selector, {k: r for k, r in side.results.items() if r["run_id"] not in both or k in other.results}
        )

    base, cand = kept(base, cand), kept(cand, base)
    still = sorted(runs(base) & runs(cand))
    if still:
        raise BenchdbError(
            f"--baseline {base.selector!r} and --candidate {cand.selector!r} both pick run {still[0]}"
            + (f" and {len(still) - 1} more" if len(still) > 1 else "")
            + "; a run is compared with another run, never with itself: choose selectors of different runs "
            "(run:ID, commit:SHA, tag:NAME)"
        )
    return base, cand


#: Samples (both sides) one pass of the gate holds in memory at most, unless one series alone has
#: more: a whole fleet's night against the next (100M samples) is judged a pass at a time. Each pass
#: reads the result ids of every part (results' ids are hashes: no row group can be skipped), so
#: fewer, larger passes cost less; 8M samples held: ~440 MB peak for a 250-series night at 100M.
PASS_SAMPLES = 8_000_000


def _passes(shared: list[str], base: dict[str, dict], cand: dict[str, dict]) -> Iterator[list[str]]:
    """``shared`` in runs whose samples (by the results' counts) stay within :data:`PASS_SAMPLES`."""
    chunk: list[str] = []
    held = 0
    for k in shared:
        n = int(base[k].get("primary_n") or 0) + int(cand[k].get("primary_n") or 0)
        if chunk and held + n > PASS_SAMPLES:
            yield chunk
            chunk, held = [], 0
        chunk.append(k)
        held += n
    if chunk:
        yield chunk


def _judge_chunk(
    con: duckdb.DuckDBPyConnection,
    out: GateResult,
    shared: list[str],
    base: dict[str, dict],
    cand: dict[str, dict],
    base_ids: list[str],
    cand_ids: list[str],
    judged: dict[str, gate_window.Judged],
    renamed: dict[str, str],
    own: dict[str, str],
    history: dict,
    *,
    interleaved: bool,
    threshold: float,
    seed: int,
) -> None:
    """Read the samples of the series ``shared``, each of the metric it is ``judged`` on, and judge
    each into ``out``."""
    samples: dict[str, tuple[str | None, Any]] = {}
    processes: dict[str, dict[str, list]] = {"base": {}, "cand": {}}
    for metric, series in _by_metric(shared, judged).items():
        ids = [base[k]["result_id"] for k in series] + [cand[k]["result_id"] for k in series]
        units = dict(con.execute(sql.load("queries/metric_units.sql"), {"ids": ids, "metric": metric}).fetchall())
        fetched = gate_samples.measured(con, ids, metric)
        samples.update({rid: (units.get(rid), vals) for rid, (vals, _) in fetched.items()})
        cand_processes = gate_samples.processes(con, cand_ids, [own.get(k, k) for k in series], metric, fetched)
        processes["base"].update(gate_samples.processes(con, base_ids, series, metric, fetched))
        processes["cand"].update({renamed.get(k, k): v for k, v in cand_processes.items()})
    for k in shared:
        b, c = base[k], cand[k]
        hardware_name = (
            c["hardware_name"]
            if b["hardware_id"] == c["hardware_id"]
            else f"{b['hardware_name']} → {c['hardware_name']}"
        )
        scenario = {
            **{f: c[f] for f in SHOWN},
            "series_id": k,
            "hardware_name": hardware_name,
            "threads": (c["options"] or {}).get("threads"),
            "base_result_id": b["result_id"],
            "cand_result_id": c["result_id"],
            "base_run_id": b["run_id"],
            "cand_run_id": c["run_id"],
        }
        # the two sides of one interleaved A/B run measure run-to-run noise themselves; the series'
        # history (which holds earlier A/B candidates, other code by design) must not widen the gate
        cmp = judge(
            scenario,
            SideSamples.of(b, samples, processes["base"].get(k, [])),
            SideSamples.of(c, samples, processes["cand"].get(k, [])),
            history=None if interleaved else history.get(k),
            threshold=threshold,
            seed=seed,
            interleaved=interleaved,
        )
        how = judged[k]
        cmp.metric, cmp.window, cmp.steady_state = how.metric, how.window, how.note
        out.comparisons.append(cmp)


_AB_TAG = re.compile(r"^(ab-[0-9a-f]+)-(base|cand)$")


def _ab_pair(base: list[dict], cand: list[dict]) -> bool:
    """True when every compared baseline result comes from the base side and every compared
    candidate result from the candidate side of the same interleaved A/B run (`benchdb run --ab`:
    tags ab-<id>-base/-cand)."""

    def ids(results: list[dict], role: str) -> set:
        found = set()
        for r in results:
            tags = [m.group(1) for t in (r.get("run_tags") or []) if (m := _AB_TAG.match(t)) and m.group(2) == role]
            found.add(tags[0] if tags else None)
        return found

    b, c = ids(base, "base"), ids(cand, "cand")
    return len(b) == 1 and b == c and None not in b

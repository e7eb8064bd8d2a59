"""The regression gate: compare the scenarios two run selections share, from their raw samples.

A scenario is `regressed` (or `improved`) only when the bootstrap CI of the relative change of the
median lies entirely beyond the practical threshold: the larger of the configured threshold and
NOISE_MULTIPLE x the series' own run-to-run noise. A significant change whose interval still
reaches inside the threshold is `inconclusive`; so is a side with too few samples or an invalid
result. Everything else is `unchanged`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

import duckdb
import numpy as np

from benchdb import sql
from benchdb.analysis.stats import bootstrap_median_ratio, robust_noise
from benchdb.errors import BenchdbError

NOISE_MULTIPLE = 3.0
MIN_SAMPLES = 10
HIGHER_IS_BETTER_UNITS = {"items/s", "tokens/s"}
#: What a comparison shows of its scenario (the series id, from benchdb.schema.identity, matches them).
SHOWN = ("model_id", "backend", "device", "mode", "precision", "batch_size", "input_shape", "options",
         "hardware_id")


@dataclass
class Comparison:
    scenario: dict[str, Any]
    verdict: str                  # regressed | improved | unchanged | inconclusive
    reason: str
    n_base: int = 0
    n_cand: int = 0
    base_median: float | None = None
    cand_median: float | None = None
    change: float | None = None   # cand / base - 1 of the median
    ci_low: float | None = None
    ci_high: float | None = None
    threshold: float | None = None
    noise: float | None = None


@dataclass
class GateResult:
    baseline: str
    candidate: str
    metric: str
    threshold: float
    comparisons: list[Comparison] = field(default_factory=list)
    only_baseline: list[dict] = field(default_factory=list)
    only_candidate: list[dict] = field(default_factory=list)

    def count(self, verdict: str) -> int:
        return sum(c.verdict == verdict for c in self.comparisons)

    @property
    def regressed(self) -> bool:
        return self.count("regressed") > 0


_TIME = re.compile(r"^(\d{4}-\d{2}-\d{2}(?:[ T][\d:]+)?)?\.\.(\d{4}-\d{2}-\d{2}(?:[ T][\d:]+)?)?$")


def resolve_selector(con: duckdb.DuckDBPyConnection, selector: str) -> list[str]:
    """Run ids picked by: latest, latest~N, run:<id prefix> (or a bare id prefix),
    commit:<sha prefix>, tag:<tag>, time:<from>..<to> (ISO dates, either side open)."""
    sel = selector.strip()
    if sel == "latest" or sel.startswith("latest~"):
        try:
            n = int(sel[7:] or 0) if sel != "latest" else 0
        except ValueError:
            raise BenchdbError(f"selector {selector!r}: use latest or latest~N (N runs before the latest)") from None
        rows = con.execute(sql.load("queries/nth_latest_run.sql"), {"n": n}).fetchall()
        runs = [r[0] for r in rows]
    else:
        kind, _, value = sel.partition(":") if ":" in sel else ("run", "", sel)
        params = {"kind": kind, "value": value, "t0": None, "t1": None}
        if kind == "time":
            m = _TIME.match(value)
            if not m:
                raise BenchdbError(f"selector {selector!r}: time ranges look like time:2026-11-01..2026-11-08")
            params["t0"] = m.group(1) or "1970-01-01"
            params["t1"] = m.group(2) or (datetime.now(timezone.utc).replace(tzinfo=None)
                                          + timedelta(days=1)).isoformat()
        elif kind not in ("run", "commit", "tag"):
            raise BenchdbError(f"selector {selector!r}: use latest, latest~N, run:ID, commit:SHA, tag:NAME "
                               "or time:FROM..TO")
        if not value and kind != "time":
            raise BenchdbError(f"selector {selector!r} has nothing after '{kind}:'")
        runs = [r[0] for r in con.execute(sql.load("queries/select_runs.sql"), params).fetchall()]
    if not runs:
        raise BenchdbError(f"selector {selector!r} matches no run in the warehouse; list runs with "
                           "`benchdb query \"SELECT run_id, started_at, git_commit, tags FROM runs\"`")
    return runs


def _results(con, runs: list[str]) -> dict[tuple, dict]:
    cur = con.execute(sql.load("queries/gate_results.sql"), {"runs": runs})
    cols = [d[0] for d in cur.description]
    rows = [dict(zip(cols, r)) for r in cur.fetchall()]
    return {r["series_id"]: r for r in rows}


def _shown_order(rows: dict[str, dict]):
    """Sort series ids by what a reader sees of them (model, backend, device, ...)."""
    return lambda k: tuple(str(rows[k][f]) for f in SHOWN)


def compare(con: duckdb.DuckDBPyConnection, baseline: str, candidate: str, *, threshold: float = 0.05,
            metric: str = "latency_s", seed: int = 0) -> GateResult:
    base_runs = resolve_selector(con, baseline)
    cand_runs = resolve_selector(con, candidate)
    if set(base_runs) & set(cand_runs):
        raise BenchdbError(f"selectors {baseline!r} and {candidate!r} pick the same run(s); compare disjoint runs")
    base, cand = _results(con, base_runs), _results(con, cand_runs)
    out = GateResult(baseline, candidate, metric, threshold)
    out.only_baseline = [base[k] for k in sorted(set(base) - set(cand), key=_shown_order(base))]
    out.only_candidate = [cand[k] for k in sorted(set(cand) - set(base), key=_shown_order(cand))]
    shared = sorted(set(base) & set(cand), key=_shown_order(cand))
    ids = [base[k]["result_id"] for k in shared] + [cand[k]["result_id"] for k in shared]
    samples = {rid: (unit, vals) for rid, unit, vals in
               con.execute(sql.load("queries/samples_for.sql"), {"ids": ids, "metric": metric}).fetchall()}
    before = min((cand[k]["run_started_at"] for k in shared), default=None)
    history = dict(con.execute(sql.load("queries/series_history.sql"),
                               {"metric": metric, "before": before,
                                "series": [base[k]["series_id"] for k in shared]}).fetchall()) if shared else {}
    for k in shared:
        b, c = base[k], cand[k]
        scenario = {**{f: c[f] for f in SHOWN}, "series_id": k, "hardware_name": c["hardware_name"],
                    "base_result_id": b["result_id"], "cand_result_id": c["result_id"]}
        out.comparisons.append(_judge(scenario, b, c, samples, history.get(b["series_id"]), threshold, seed))
    return out


def _judge(scenario, b, c, samples, history, threshold, seed) -> Comparison:
    for side, r in (("baseline", b), ("candidate", c)):
        if r["status"] != "ok" or r["validity"] != "valid":
            why = r["status"] if r["status"] != "ok" else "invalid: " + "; ".join(r["validity_reasons"] or [])
            return Comparison(scenario, "inconclusive", f"{side} result is {why}")
    ub, vb = samples.get(b["result_id"], (None, []))
    uc, vc = samples.get(c["result_id"], (None, []))
    cmp = Comparison(scenario, "unchanged", "", n_base=len(vb), n_cand=len(vc))
    if len(vb) < MIN_SAMPLES or len(vc) < MIN_SAMPLES:
        cmp.verdict, cmp.reason = "inconclusive", f"too few samples ({len(vb)} vs {len(vc)}; need {MIN_SAMPLES})"
        return cmp
    point, lo, hi = bootstrap_median_ratio(vb, vc, seed=seed)
    cmp.change, cmp.ci_low, cmp.ci_high = point, lo, hi
    cmp.base_median, cmp.cand_median = float(np.median(vb)), float(np.median(vc))
    cmp.noise = robust_noise(history) if history else None
    cmp.threshold = max(threshold, NOISE_MULTIPLE * cmp.noise) if cmp.noise is not None else threshold
    worse_up = (uc or ub) not in HIGHER_IS_BETTER_UNITS
    # express the interval as "how much worse": positive = regression, whatever the direction
    w_lo, w_hi = (lo, hi) if worse_up else (-hi, -lo)
    t = cmp.threshold
    if w_lo > t:
        cmp.verdict, cmp.reason = "regressed", f"whole CI beyond +{t:.1%}"
    elif w_hi < -t:
        cmp.verdict, cmp.reason = "improved", f"whole CI beyond -{t:.1%}"
    elif w_lo > 0 or w_hi < 0:
        cmp.verdict, cmp.reason = "inconclusive", f"significant, but the CI reaches inside +-{t:.1%}; measure longer"
    else:
        cmp.reason = "CI includes no change"
    return cmp

"""The regression gate: compare the series two selections share, from their raw samples; fail closed.

Verdicts, in the order a report lists them (the first two fail the gate):

- ``broken``: the candidate failed (status failed, oom, timeout, mismatch, unsupported, or any
  status other than ok/skipped) where the baseline was ok;
- ``regressed`` / ``improved``: the CI of the relative change of the median lies entirely beyond
  the practical threshold, the larger of the configured threshold and NOISE_MULTIPLE x the series'
  own run-to-run noise (from its history);
- ``unchanged``: the whole 90 % CI lies within +-threshold: an equivalence test, the two one-sided
  tests (TOST, Schuirmann 1987) at 5 % each ("change within noise"). Regressed/improved need the
  whole 95 % CI beyond the threshold, so each claim is a test at 5 % or less;
- ``inconclusive``: a CI that straddles the threshold, run-to-run noise that is unknown (no history
  of the series and the sides are not one interleaved ``--ab`` run: the reason names the remedy),
  a side with too few samples, an invalid or skipped result, or a metric not measured;
- ``still_broken``: broken on both sides (reported, not a new failure);
- ``fixed``: broken in the baseline, ok in the candidate.

The interval: with 2+ processes on each side (``--repeats K``, or several runs of the series in a
side's selection, all pooled), a hierarchical bootstrap over processes, then iterations
(:mod:`benchdb.analysis.hierarchy`), so process-to-process variance is in it; a side's value is
then its typical process, the geometric mean of its process medians (a pooled median jumps between
the modes of processes that fall into modes). With one process per side, a bootstrap over one
process's iterations, which cannot see run-to-run shifts.

When run-to-run noise is known. Two ways: the sides are the two halves of one interleaved A/B run
(``benchdb run --ab``: their processes alternate, so each side's spread includes the machine's
drifts), or the series has MIN_HISTORY earlier runs (its noise raises the threshold). Otherwise --
separate invocations without history, whatever their --repeats -- the verdict is inconclusive:
processes of one invocation share one moment of the machine, and A/A pairs of 3-process
invocations minutes apart on a shared VM differed by up to +50 % with a hierarchical CI of
[+36 %, +70 %] (benchmarks/gate_real.py: 10 % false alarms before this rule).

Exit codes: 0 pass (every compared series unchanged, improved or fixed), 1 something regressed or
broke, 2 nothing to compare (no series on both sides, a selector that matches nothing, an unknown
metric) or another usage error, 3 undecided: nothing failed but some verdicts are inconclusive (a
CI step must not read "nothing decided" as a pass; ``--allow-inconclusive`` makes it 0).

Selectors: ``latest~N`` works per hardware and backend: for every (hardware, backend) it picks the
results of the (N+1)-th newest run that measured that backend on that hardware, so machines that
feed one warehouse, and one ``benchdb run`` per backend, are each compared with their own previous
run. The other selectors (run:, commit:, tag:, time:) pick whole runs. Only the same series
(scenario + options + hardware) is ever compared.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from benchdb import sql
from benchdb.engine import duckdb
from benchdb.errors import BenchdbError
from benchdb.schema.options import env_differences

NOISE_MULTIPLE = 3.0
#: Levels of the two intervals: a difference is claimed from the 95 % CI, equivalence from the 90 % one
#: (two one-sided tests at 5 %).
LEVEL, EQUIVALENCE_LEVEL = 0.95, 0.90
#: Points of history before a series' own run-to-run noise is known (stats.robust_noise). Measured
#: on a shared VM (benchmarks/gate_real.py): from 4-5 points the MAD of 3-4 successive changes
#: came out at 0.1-1.4 % where single runs shifted by 10 %, and one process per side then gave
#: 7 % false alarms; 8 points (7 changes) is the least that is used.
MIN_HISTORY = 8
MIN_SAMPLES = 10
HIGHER_IS_BETTER_UNITS = {"items/s", "tokens/s"}
#: Statuses that mean "this scenario does not work" (any status but these two counts as broken).
WORKING_STATUSES = ("ok", "skipped")
#: Every verdict, in report order: failing ones first.
VERDICTS = ("broken", "regressed", "inconclusive", "still_broken", "improved", "fixed", "unchanged")
FAILING = ("broken", "regressed")
EXIT_MEANING = {0: "pass: every compared series is unchanged, improved or fixed",
                1: "fail: a shared series regressed or broke",
                2: "error: nothing to compare (no series on both sides, a selector matching nothing, "
                   "an unknown metric) or another usage error",
                3: "undecided: nothing failed, but some verdicts are inconclusive (--allow-inconclusive "
                   "passes them)"}
#: The exit code of a check whose verdicts leave something undecided (see EXIT_MEANING).
UNDECIDED = 3
#: What a comparison shows of its scenario (the series id, from benchdb.schema.identity, matches them).
SHOWN = ("model_id", "backend", "device", "mode", "precision", "batch_size", "input_shape", "options",
         "hardware_id")


@dataclass
class Comparison:
    scenario: dict[str, Any]
    verdict: str                  # one of VERDICTS
    reason: str
    n_base: int = 0
    n_cand: int = 0
    base_median: float | None = None
    cand_median: float | None = None
    change: float | None = None   # cand / base - 1 of the median
    ci_low: float | None = None    # 95 % interval of the change (regressed / improved)
    ci_high: float | None = None
    eq_low: float | None = None    # 90 % interval (the equivalence test that says unchanged)
    eq_high: float | None = None
    threshold: float | None = None
    noise: float | None = None
    unit: str | None = None
    base_status: str | None = None
    cand_status: str | None = None
    processes: tuple[int, int] | None = None   # processes pooled on each side
    interval: str | None = None                # how the CI was computed

    @property
    def failing(self) -> bool:
        return self.verdict in FAILING


@dataclass
class Side:
    """What one selector picked: the latest result of each series among its results."""
    selector: str
    results: dict[str, dict] = field(default_factory=dict)     # series_id -> result row

    def runs(self) -> list[dict]:
        """The runs behind the picked results, oldest first, with how many results each gave."""
        count = Counter(r["run_id"] for r in self.results.values())
        first = {}
        for r in self.results.values():
            first.setdefault(r["run_id"], r)
        return [{"run_id": rid, "started_at": r["run_started_at"], "git_commit": r["git_commit"],
                 "host": r["host"], "results": count[rid]}
                for rid, r in sorted(first.items(), key=lambda kv: (kv[1]["run_started_at"], kv[0]))]

    def by_hardware_backend(self) -> list[dict]:
        """Series per (hardware, backend); ``label`` is the hardware name, with its id prefix where
        two hardware ids share a name."""
        count = Counter((r["hardware_name"], r["hardware_id"], r["backend"]) for r in self.results.values())
        labels = _labels(self)
        return [{"hardware_name": n, "hardware_id": h, "label": labels[h], "backend": b, "results": k}
                for (n, h, b), k in sorted(count.items())]


@dataclass
class GateResult:
    baseline: str
    candidate: str
    metric: str
    threshold: float
    comparisons: list[Comparison] = field(default_factory=list)
    only_baseline: list[dict] = field(default_factory=list)
    only_candidate: list[dict] = field(default_factory=list)
    base_side: Side | None = None
    cand_side: Side | None = None
    #: Inconclusive verdicts pass (exit 0) instead of leaving the check undecided (exit 3).
    allow_inconclusive: bool = False

    def count(self, verdict: str) -> int:
        return sum(c.verdict == verdict for c in self.comparisons)

    def counts(self) -> dict[str, int]:
        return {v: self.count(v) for v in VERDICTS}

    @property
    def regressed(self) -> bool:
        return self.count("regressed") > 0

    @property
    def failed(self) -> bool:
        """Something regressed or broke: the gate fails (exit code 1)."""
        return any(c.failing for c in self.comparisons)

    @property
    def undecided(self) -> bool:
        """Nothing failed, but some verdicts are inconclusive: no pass can be claimed."""
        return not self.failed and self.count("inconclusive") > 0

    @property
    def outcome(self) -> str:
        """fail, undecided, or pass (undecided counts as pass with ``allow_inconclusive``)."""
        if self.failed:
            return "fail"
        return "undecided" if self.undecided and not self.allow_inconclusive else "pass"

    @property
    def exit_code(self) -> int:
        return {"fail": 1, "undecided": UNDECIDED, "pass": 0}[self.outcome]

    @property
    def exit_meaning(self) -> str:
        return EXIT_MEANING[self.exit_code]


_TIME = re.compile(r"^(\d{4}-\d{2}-\d{2}(?:[ T][\d:]+)?)?\.\.(\d{4}-\d{2}-\d{2}(?:[ T][\d:]+)?)?$")


def resolve_selector(con: duckdb.DuckDBPyConnection, selector: str) -> list[str]:
    """Result ids picked by: latest, latest~N (per hardware and backend: the results of its newest
    run, or of the N-th run before it), run:<id prefix> (or a bare id prefix), commit:<sha prefix>,
    tag:<tag>, time:<from>..<to> (ISO dates, either side open)."""
    sel = selector.strip()
    params: dict[str, Any] = {"kind": "latest", "n": 0, "value": "", "t0": None, "t1": None}
    if sel == "latest" or sel.startswith("latest~"):
        try:
            n = int(sel[7:]) if sel != "latest" else 0
        except ValueError:
            n = -1
        if n < 0:
            raise BenchdbError(f"selector {selector!r}: use latest or latest~N (N runs before the latest "
                               "on each hardware and backend)")
        params["n"] = n
    else:
        kind, _, value = sel.partition(":") if ":" in sel else ("run", "", sel)
        params.update(kind=kind, value=value)
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
    ids = [r[0] for r in con.execute(sql.load("queries/gate_select.sql"), params).fetchall()]
    if not ids:
        more = (f" (no hardware and backend has {params['n'] + 1} runs)" if params["kind"] == "latest" else "")
        raise BenchdbError(f"selector {selector!r} matches no run in the warehouse{more}; list runs with "
                           "`benchdb query \"SELECT run_id, started_at, host, git_commit, tags FROM runs "
                           "ORDER BY started_at\"`")
    return ids


def _side(con, selector: str, ids: list[str]) -> Side:
    cur = con.execute(sql.load("queries/gate_results.sql"), {"results": ids})
    cols = [d[0] for d in cur.description]
    rows = [dict(zip(cols, r)) for r in cur.fetchall()]
    for r in rows:
        opts = r["options"]
        r["options"] = json.loads(opts) if isinstance(opts, str) else (opts or {})
    return Side(selector, {r["series_id"]: r for r in rows})


def _shown_order(rows: dict[str, dict]):
    """Sort series ids by what a reader sees of them (model, backend, device, ...)."""
    return lambda k: tuple(str(rows[k][f]) for f in SHOWN)


def _labels(*sides: Side) -> dict[str, str]:
    """Hardware id -> a readable label: its name, with the id prefix where two share a name."""
    names: dict[str, str] = {}
    for s in sides:
        for r in s.results.values():
            names[r["hardware_id"]] = r["hardware_name"]
    dup = {n for n, k in Counter(names.values()).items() if k > 1}
    return {h: f"{n} [{h[:8]}]" if n in dup else n for h, n in names.items()}


def _describe(side: Side, labels: dict[str, str]) -> str:
    groups = side.by_hardware_backend()
    parts = ", ".join(f"{g['results']} on {labels[g['hardware_id']]}/{g['backend']}" for g in groups)
    runs = len(side.runs())
    return f"{len(side.results)} series from {runs} run(s): {parts}"


def _check_metric(con, metric: str, base: Side, cand: Side) -> None:
    ids = [r["result_id"] for s in (base, cand) for r in s.results.values()]
    have = [m for (m,) in con.execute(sql.load("queries/gate_metrics.sql"), {"ids": ids, "metric": metric})
            .fetchall()]
    if have and metric not in have:
        raise BenchdbError(f"--metric {metric!r} is not measured in the results of --baseline {base.selector!r} "
                           f"or --candidate {cand.selector!r}; metrics there: {', '.join(have)}")


def compare(con: duckdb.DuckDBPyConnection, baseline: str, candidate: str, *, threshold: float = 0.05,
            metric: str = "latency_s", seed: int = 0) -> GateResult:
    base_ids = resolve_selector(con, baseline)
    cand_ids = resolve_selector(con, candidate)
    overlap = set(base_ids) & set(cand_ids)
    if overlap:
        raise BenchdbError(f"selectors {baseline!r} and {candidate!r} pick the same run(s) ({len(overlap)} "
                           "result(s) on both sides); compare disjoint runs")
    bside, cside = _side(con, baseline, base_ids), _side(con, candidate, cand_ids)
    base, cand = bside.results, cside.results
    _check_metric(con, metric, bside, cside)
    shared = sorted(set(base) & set(cand), key=_shown_order(cand))
    if not shared:
        labels = _labels(bside, cside)
        split = _options_split(bside, cside)
        raise BenchdbError(
            f"nothing to compare: no series is on both sides{split}. --baseline {baseline!r} has "
            f"{_describe(bside, labels)}; --candidate {candidate!r} has {_describe(cside, labels)}. "
            "A series is one scenario (model, shape, backend, device, mode, precision, options) on one "
            "hardware: choose selectors whose runs measured the same scenarios on the same hardware "
            "(latest~1 vs latest, tag:, commit: or run:; list runs with `benchdb query \"SELECT run_id, "
            "started_at, host, git_commit, tags FROM runs ORDER BY started_at\"`)")
    out = GateResult(baseline, candidate, metric, threshold, base_side=bside, cand_side=cside)
    out.only_baseline = [base[k] for k in sorted(set(base) - set(cand), key=_shown_order(base))]
    out.only_candidate = [cand[k] for k in sorted(set(cand) - set(base), key=_shown_order(cand))]
    import numpy as np       # only once there is something to compare: the rest of a check stays light

    ids = [base[k]["result_id"] for k in shared] + [cand[k]["result_id"] for k in shared]
    samples = {rid: (unit, vals) for rid, unit, vals in
               con.execute(sql.load("queries/samples_for.sql"), {"ids": ids, "metric": metric}).fetchall()}
    processes = {"base": {}, "cand": {}}
    for side, ids_ in (("base", base_ids), ("cand", cand_ids)):
        for series, _rid, _repeat, vals in con.execute(sql.load("queries/gate_processes.sql"), {
                "results": ids_, "series": shared, "metric": metric}).fetchall():
            processes[side].setdefault(series, []).append(np.asarray(vals, dtype=float))
    before = min(cand[k]["run_started_at"] for k in shared)
    history = dict(con.execute(sql.load("queries/series_history.sql"),
                               {"metric": metric, "before": before, "series": shared}).fetchall())
    interleaved = _ab_pair([base[k] for k in shared], [cand[k] for k in shared])
    for k in shared:
        b, c = base[k], cand[k]
        scenario = {**{f: c[f] for f in SHOWN}, "series_id": k, "hardware_name": c["hardware_name"],
                    "threads": (c["options"] or {}).get("threads"),
                    "base_result_id": b["result_id"], "cand_result_id": c["result_id"],
                    "base_run_id": b["run_id"], "cand_run_id": c["run_id"]}
        # the two sides of one interleaved A/B run measure run-to-run noise themselves; the series'
        # history (which holds earlier A/B candidates, other code by design) must not widen the gate
        out.comparisons.append(judge(scenario, b, c, samples, None if interleaved else history.get(k),
                                      threshold, seed,
                                      (processes["base"].get(k, []), processes["cand"].get(k, [])),
                                      interleaved=interleaved))
    out.comparisons.sort(key=lambda c: VERDICTS.index(c.verdict))     # stable: shown order within a verdict
    return out


_LOOSE = ("model_id", "backend", "device", "mode", "precision", "batch_size", "input_shape", "hardware_id")


def _options_split(base: Side, cand: Side) -> str:
    """Where the two sides measured the same scenarios on the same hardware with different options
    (e.g. --ab-env on a variable a user bench declares in ENV, which is part of identity): which."""
    def loose(r: dict) -> tuple:
        return tuple(str(r.get(k)) for k in _LOOSE)

    cands = {loose(r): r for r in cand.results.values()}
    differ: dict[str, set[str]] = {}
    for r in base.results.values():
        other = cands.get(loose(r))
        if other is None:
            continue
        bo, co = r.get("options") or {}, other.get("options") or {}
        for k in sorted(set(bo) | set(co)):
            if bo.get(k) != co.get(k):
                names = differ.setdefault(k, set())
                if k == "env":             # a user bench's declared ENV: name the variables, not their values
                    names.update(env_differences(bo.get(k), co.get(k)))
    if not differ:
        return ""
    parts = [f"{k} ({', '.join(sorted(v))})" if v else k for k, v in sorted(differ.items())]
    hint = (" -- a variable a bench declares in ENV is part of a series' identity, so --ab-env on it makes "
            "base and cand different series" if "env" in differ else "")
    return f": the same scenarios were measured with different options: {', '.join(parts)}{hint}"


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


def _status(r: dict) -> str:
    err = (r.get("error") or "").strip().splitlines()
    detail = f" ({err[0][:160]})" if err else ""
    return f"{r['status']}{detail}"


def judge(scenario, b, c, samples, history, threshold, seed, groups=None, *, interleaved=False,
           level: float = LEVEL, eq_level: float = EQUIVALENCE_LEVEL) -> Comparison:
    """One series' verdict. ``groups``: (baseline, candidate) lists of per-process sample arrays
    (pooled over the side's results); by default each side is the one process of its result.
    ``interleaved``: the two sides are one interleaved A/B run, whose alternating processes see
    the same drifts of the machine, so their spread is the run-to-run noise. Sides from separate
    invocations see different moments of the machine: without the series' history their
    difference cannot be told from noise (A/A pairs minutes apart on a shared VM: +50 % with a
    3-process CI of [+36 %, +70 %]), and the verdict is inconclusive, naming the remedy."""
    import numpy as np

    from benchdb.analysis import hierarchy
    from benchdb.analysis.stats import bootstrap_median_ratio, robust_noise

    ub, vb = samples.get(b["result_id"], (None, []))
    uc, vc = samples.get(c["result_id"], (None, []))
    if groups is not None:         # every valid process of the series on each side, pooled
        vb = np.concatenate(groups[0]) if groups[0] else np.asarray(vb, dtype=float)
        vc = np.concatenate(groups[1]) if groups[1] else np.asarray(vc, dtype=float)
    cmp = Comparison(scenario, "unchanged", "", n_base=len(vb), n_cand=len(vc), unit=uc or ub,
                     base_status=b["status"], cand_status=c["status"])
    if len(vb):
        cmp.base_median = float(np.median(vb))
    if len(vc):
        cmp.cand_median = float(np.median(vc))
    b_broken, c_broken = b["status"] not in WORKING_STATUSES, c["status"] not in WORKING_STATUSES
    if c_broken and b["status"] == "ok":
        cmp.verdict, cmp.reason = "broken", f"candidate is {_status(c)}; the baseline was ok"
        return cmp
    if b_broken and c_broken:
        cmp.verdict, cmp.reason = "still_broken", f"baseline was {_status(b)}; candidate is {_status(c)}"
        return cmp
    if b_broken and c["status"] == "ok":
        cmp.verdict, cmp.reason = "fixed", f"baseline was {_status(b)}; candidate is ok"
        if c["validity"] != "valid":
            cmp.reason += " (invalid: " + "; ".join(c["validity_reasons"] or []) + ")"
        return cmp
    for side, r in (("baseline", b), ("candidate", c)):
        if r["status"] != "ok" or r["validity"] != "valid":
            why = _status(r) if r["status"] != "ok" else "invalid: " + "; ".join(r["validity_reasons"] or [])
            cmp.verdict, cmp.reason = "inconclusive", f"{side} result is {why}"
            return cmp
    if not len(vb) and not len(vc):
        cmp.verdict, cmp.reason = "inconclusive", "metric not measured on either side"
        return cmp
    if len(vb) < MIN_SAMPLES or len(vc) < MIN_SAMPLES:
        cmp.verdict, cmp.reason = "inconclusive", f"too few samples ({len(vb)} vs {len(vc)}; need {MIN_SAMPLES})"
        return cmp
    gb, gc = groups if groups is not None else ([np.asarray(vb)], [np.asarray(vc)])
    cmp.processes = (len(gb), len(gc))
    worse_up = (uc or ub) not in HIGHER_IS_BETTER_UNITS        # latency-like: a larger value is slower
    aside = ""
    if len(gb) >= 2 and len(gc) >= 2:
        out_b, out_c = hierarchy.outlier_processes(gb, worse_up), hierarchy.outlier_processes(gc, worse_up)
        if out_b or out_c:
            def shift(g, out, i):        # the outlier's median against the pooled median of the others
                return np.median(g[i]) / np.median(np.concatenate([x for j, x in enumerate(g) if j not in out])) - 1
            aside = "; set aside as outlier processes: " + ", ".join(
                [f"baseline {shift(gb, out_b, i):+.0%}" for i in out_b]
                + [f"candidate {shift(gc, out_c, i):+.0%}" for i in out_c])
            gb = [g for i, g in enumerate(gb) if i not in out_b]
            gc = [g for i, g in enumerate(gc) if i not in out_c]
            cmp.n_base, cmp.n_cand = sum(map(len, gb)), sum(map(len, gc))
        # each side's value: its typical process (geometric mean of the process medians), so that
        # the change shown is the one the interval is about
        cmp.base_median, cmp.cand_median = hierarchy.typical(gb), hierarchy.typical(gc)
        interval = lambda level: hierarchy.ratio_ci(gb, gc, level=level, seed=seed)   # noqa: E731
        cmp.interval = ("hierarchical bootstrap over processes and iterations (medians: geometric mean of "
                        "the process medians)")
        if aside:
            cmp.interval += f" ({len(out_b)} + {len(out_c)} outlier process(es) set aside)"
    else:
        interval = lambda level: bootstrap_median_ratio(vb, vc, level=level, seed=seed)   # noqa: E731
        cmp.interval = "bootstrap over one process's iterations"
    point, lo, hi = interval(level)
    _, eq_lo, eq_hi = interval(eq_level)     # same seed: the same resamples, a nested interval
    cmp.change, cmp.ci_low, cmp.ci_high, cmp.eq_low, cmp.eq_high = point, lo, hi, eq_lo, eq_hi
    cmp.noise = robust_noise(history) if history and len(history) >= MIN_HISTORY else None
    cmp.threshold = max(threshold, NOISE_MULTIPLE * cmp.noise) if cmp.noise is not None else threshold
    # express the interval as "how much worse": positive = regression, whatever the direction
    w_lo, w_hi = (lo, hi) if worse_up else (-hi, -lo)
    e_lo, e_hi = (eq_lo, eq_hi) if worse_up else (-eq_hi, -eq_lo)
    t = cmp.threshold
    if cmp.noise is None and (len(gb) < 2 or len(gc) < 2):
        cmp.verdict, cmp.reason = "inconclusive", (
            f"run-to-run noise unknown: {min(len(gb), len(gc))} process on a side and no history of this series "
            f"(a within-process interval cannot see shifts between runs); compare an interleaved "
            f"`benchdb run --ab` run (--repeats 3 or more), or gate once the series has {MIN_HISTORY} runs")
    elif cmp.noise is None and not interleaved:
        cmp.verdict, cmp.reason = "inconclusive", (
            f"run-to-run noise unknown: the sides are separate invocations and the series has no history "
            f"(processes of one invocation share its moment of the machine, so their spread cannot see "
            f"shifts between invocations); compare an interleaved `benchdb run --ab` run, or gate once "
            f"the series has {MIN_HISTORY} runs")
    elif w_lo > t:
        cmp.verdict, cmp.reason = "regressed", f"whole {level:.0%} CI beyond +{t:.1%}"
    elif w_hi < -t:
        cmp.verdict, cmp.reason = "improved", f"whole {level:.0%} CI beyond -{t:.1%}"
    elif e_lo >= -t and e_hi <= t:
        cmp.verdict, cmp.reason = "unchanged", (f"whole {eq_level:.0%} CI [{eq_lo:+.1%}, {eq_hi:+.1%}] within +-{t:.1%} "
                                                "(equivalence: two one-sided tests at 5%)")
    else:
        cmp.verdict, cmp.reason = "inconclusive", f"the {eq_level:.0%} CI [{eq_lo:+.1%}, {eq_hi:+.1%}] straddles +-{t:.1%}; measure longer or with more --repeats"
    cmp.reason += aside
    return cmp

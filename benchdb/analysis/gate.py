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
(scenario + options + hardware) is ever compared, except the two halves of one interleaved A/B of two
serving deployments (``benchdb run --ab-url``), whose scenarios are compared across the hardware, the
device and the server's use of it (accelerators, parallelism) that the run set out to compare.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from benchdb import sql
from benchdb.analysis import selection
from benchdb.analysis.selection import SHOWN, Selection
from benchdb.errors import BenchdbError
from benchdb.startup import duckdb

if TYPE_CHECKING:
    import numpy as np

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
HIGHER_IS_BETTER_UNITS = {"items/s", "tokens/s", "req/s"}
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
class GateResult:
    baseline: str
    candidate: str
    metric: str
    threshold: float
    comparisons: list[Comparison] = field(default_factory=list)
    only_baseline: list[dict] = field(default_factory=list)
    only_candidate: list[dict] = field(default_factory=list)
    base_side: Selection | None = None
    cand_side: Selection | None = None
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


def primary_metric(*sides: Selection) -> str:
    """The metric to compare when none is asked for: the results' own headline (``ttft_s`` for a serving
    load point), latency_s where the selections hold several kinds (the one every timed result has)."""
    found = {r.get("primary_metric") or "latency_s" for s in sides for r in s.results.values()}
    return found.pop() if len(found) == 1 else "latency_s"


def compare(con: duckdb.DuckDBPyConnection, baseline: str, candidate: str, *, threshold: float = 0.05,
            metric: str | None = None, seed: int = 0) -> GateResult:
    base_ids = selection.resolve_selector(con, baseline)
    cand_ids = selection.resolve_selector(con, candidate)
    overlap = set(base_ids) & set(cand_ids)
    if overlap:
        raise BenchdbError(f"selectors {baseline!r} and {candidate!r} pick the same run(s) ({len(overlap)} "
                           "result(s) on both sides); compare disjoint runs")
    bside, cside = selection.load(con, baseline, base_ids), selection.load(con, candidate, cand_ids)
    # the two endpoints of one interleaved A/B (`run --ab-url`) ran the same scenarios on two systems:
    # a candidate series is compared under the id of its baseline series
    renamed = (selection.deployment_pairs(bside, cside)
               if _ab_pair(list(bside.results.values()), list(cside.results.values())) else {})
    if renamed:
        cside = Selection(candidate, {renamed.get(k, k): r for k, r in cside.results.items()})
    base, cand = bside.results, cside.results
    if metric is None:
        metric = primary_metric(bside, cside)
    selection.check_metric(con, metric, bside, cside)
    shared = sorted(set(base) & set(cand), key=selection.shown_order(cand))
    if not shared:
        raise selection.nothing_shared(bside, cside)
    out = GateResult(baseline, candidate, metric, threshold, base_side=bside, cand_side=cside)
    out.only_baseline = [base[k] for k in sorted(set(base) - set(cand), key=selection.shown_order(base))]
    out.only_candidate = [cand[k] for k in sorted(set(cand) - set(base), key=selection.shown_order(cand))]

    before = min(cand[k]["run_started_at"] for k in shared)
    history = dict(con.execute(sql.load("queries/series_history.sql"),
                               {"metric": metric, "before": before, "series": shared}).fetchall())
    interleaved = _ab_pair([base[k] for k in shared], [cand[k] for k in shared])
    own = {b: c for c, b in renamed.items()}          # the candidate's own series ids
    for chunk in _passes(shared, base, cand):
        _judge_chunk(con, out, chunk, base, cand, base_ids, cand_ids, metric, renamed, own, history,
                     interleaved=interleaved, threshold=threshold, seed=seed)
    out.comparisons.sort(key=lambda c: VERDICTS.index(c.verdict))     # stable: shown order within a verdict
    return out


#: Samples (both sides) one pass of the gate holds in memory at most, unless one series alone has
#: more: a whole fleet's night against the next (100M samples) is judged a pass at a time.
PASS_SAMPLES = 4_000_000


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


def _judge_chunk(con: duckdb.DuckDBPyConnection, out: GateResult, shared: list[str], base: dict[str, dict],
                 cand: dict[str, dict], base_ids: list[str], cand_ids: list[str], metric: str,
                 renamed: dict[str, str], own: dict[str, str], history: dict, *, interleaved: bool,
                 threshold: float, seed: int) -> None:
    """Read the samples of the series ``shared`` and judge each into ``out``."""
    ids = [base[k]["result_id"] for k in shared] + [cand[k]["result_id"] for k in shared]
    units = dict(con.execute(sql.load("queries/metric_units.sql"), {"ids": ids, "metric": metric}).fetchall())
    fetched = _measured(con, ids, metric)
    samples = {rid: (units.get(rid), vals) for rid, (vals, _) in fetched.items()}
    cand_processes = _processes(con, cand_ids, [own.get(k, k) for k in shared], metric, fetched)
    processes = {"base": _processes(con, base_ids, shared, metric, fetched),
                 "cand": {renamed.get(k, k): v for k, v in cand_processes.items()}}
    for k in shared:
        b, c = base[k], cand[k]
        hardware_name = c["hardware_name"] if b["hardware_id"] == c["hardware_id"] else \
            f"{b['hardware_name']} → {c['hardware_name']}"
        scenario = {**{f: c[f] for f in SHOWN}, "series_id": k, "hardware_name": hardware_name,
                    "threads": (c["options"] or {}).get("threads"),
                    "base_result_id": b["result_id"], "cand_result_id": c["result_id"],
                    "base_run_id": b["run_id"], "cand_run_id": c["run_id"]}
        # the two sides of one interleaved A/B run measure run-to-run noise themselves; the series'
        # history (which holds earlier A/B candidates, other code by design) must not widen the gate
        out.comparisons.append(judge(scenario, SideSamples.of(b, samples, processes["base"].get(k, [])),
                                     SideSamples.of(c, samples, processes["cand"].get(k, [])),
                                     history=None if interleaved else history.get(k), threshold=threshold,
                                     seed=seed, interleaved=interleaved))


#: A sample's order key is repeat << _REPEAT_SHIFT | iteration (iteration is a 32-bit INTEGER).
_REPEAT_SHIFT = 32


def _segments(cols: dict[str, np.ndarray], keys: tuple[str, ...]
              ) -> Iterator[tuple[tuple[int, ...], tuple[np.ndarray, np.ndarray]]]:
    """(key, (values, their order)) per run of rows sharing ``keys`` in flat fetched columns
    (``repeat``, ``iteration``, ``value`` among them), each run sorted by its order (repeat, then
    iteration). The rows of one key come back together, and in order, from the parts that hold
    them: a run is sorted only when it did not."""
    import numpy as np

    n = len(cols["value"])
    if not n:
        return
    change = np.zeros(n - 1, dtype=bool)
    for key in keys:
        change |= np.diff(cols[key]) != 0
    starts = np.concatenate([[0], np.flatnonzero(change) + 1])
    ends = np.concatenate([starts[1:], [n]])
    order = (cols["repeat"].astype(np.int64) << _REPEAT_SHIFT) + cols["iteration"].astype(np.int64)
    backwards = np.diff(order) < 0
    for start, end in zip(starts.tolist(), ends.tolist(), strict=True):
        values, at = cols["value"][start:end].astype(float), order[start:end]
        if backwards[start:end - 1].any():
            by = np.argsort(at, kind="stable")
            values, at = values[by], at[by]
        yield tuple(int(cols[key][start]) for key in keys), (values, at)


def measured_samples(con: duckdb.DuckDBPyConnection, ids: list[str], metric: str) -> dict[str, np.ndarray]:
    """The samples of ``metric`` of each result in ``ids`` that has any, in measurement order
    (repeat, then iteration), as arrays: one pass over the parts, no per-value Python objects."""
    return {rid: values for rid, (values, _) in _measured(con, ids, metric).items()}


def _measured(con: duckdb.DuckDBPyConnection, ids: list[str], metric: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """:func:`measured_samples` with each sample's order key (see ``_REPEAT_SHIFT``)."""
    cols = con.execute(sql.load("queries/samples_for.sql"), {"ids": ids, "metric": metric}).fetchnumpy()
    pieces: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {}
    for (k,), piece in _segments(cols, ("k",)):
        pieces.setdefault(ids[k - 1], []).append(piece)
    return {rid: _in_order(parts) for rid, parts in pieces.items()}


def _processes(con: duckdb.DuckDBPyConnection, result_ids: list[str], series: list[str], metric: str,
               fetched: dict[str, tuple[np.ndarray, np.ndarray]]) -> dict[str, list[np.ndarray]]:
    """Per series, the samples of each of its valid processes among ``result_ids``, ordered by
    result id and repeat. Split from ``fetched`` (results already read, with their order keys)
    when it holds every such result, the usual case of one result per series and side; read
    otherwise."""
    import numpy as np

    members = sorted((s, r) for r, s in con.execute(sql.load("queries/gate_members.sql"),
                                                    {"results": result_ids, "series": series}).fetchall())
    if all(r in fetched for _, r in members):
        out: dict[str, list[np.ndarray]] = {}
        for name, rid in members:
            values, at = fetched[rid]
            cut = np.flatnonzero(np.diff(at >> _REPEAT_SHIFT)) + 1      # where the repeat (process) changes
            out.setdefault(name, []).extend(np.split(values, cut))
        return out
    cols = con.execute(sql.load("queries/gate_processes.sql"),
                       {"results": result_ids, "series": series, "metric": metric}).fetchnumpy()
    pieces: dict[tuple[str, str, int], list[tuple[np.ndarray, np.ndarray]]] = {}
    for (s, k, repeat), piece in _segments(cols, ("s", "k", "repeat")):
        pieces.setdefault((series[s - 1], result_ids[k - 1], repeat), []).append(piece)
    read: dict[str, list[np.ndarray]] = {}
    for (name, _rid, _repeat) in sorted(pieces):
        read.setdefault(name, []).append(_in_order(pieces[(name, _rid, _repeat)])[0])
    return read


def _in_order(parts: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """One result's (or process's) samples and order keys, in measurement order, from the runs
    they came back in."""
    import numpy as np

    if len(parts) == 1:
        return parts[0]
    values, at = np.concatenate([v for v, _ in parts]), np.concatenate([o for _, o in parts])
    by = np.argsort(at, kind="stable")
    return values[by], at[by]


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


@dataclass(frozen=True)
class SideSamples:
    """One side of a series as :func:`judge` reads it: its result's state and its samples of the metric."""
    status: str
    validity: str | None
    validity_reasons: tuple[str, ...] = ()
    error: str | None = None
    unit: str | None = None
    values: Sequence[float] | np.ndarray = ()
    #: Per-process sample arrays (every valid process of the series on this side, pooled over its
    #: results); None: ``values`` are the one process of the side's result.
    processes: Sequence[np.ndarray] | None = None

    @classmethod
    def of(cls, row: dict[str, Any], samples: Mapping[str, tuple[str | None, Sequence[float] | np.ndarray]],
           processes: Sequence[np.ndarray] | None = None) -> SideSamples:
        """From a result row (status, validity, validity_reasons, error, result_id) and the
        samples of each result id: (unit, values)."""
        unit, values = samples.get(row["result_id"], (None, []))
        return cls(row["status"], row["validity"], tuple(row.get("validity_reasons") or ()), row.get("error"),
                   unit, values, processes)

    def describe_status(self) -> str:
        """The status, with the first line of its error."""
        err = (self.error or "").strip().splitlines()
        detail = f" ({err[0][:160]})" if err else ""
        return f"{self.status}{detail}"


def judge(scenario: dict[str, Any], b: SideSamples, c: SideSamples, *, threshold: float,
          history: Sequence[float] | None = None, seed: int = 0, interleaved: bool = False,
          level: float = LEVEL, eq_level: float = EQUIVALENCE_LEVEL) -> Comparison:
    """One series' verdict on its baseline ``b`` and candidate ``c``. ``history``: the series'
    earlier values (its run-to-run noise, once MIN_HISTORY long). ``interleaved``: the two sides
    are one interleaved A/B run, whose alternating processes see the same drifts of the machine, so
    their spread is the run-to-run noise. Sides from separate invocations see different moments of
    the machine: without the series' history their difference cannot be told from noise (A/A pairs
    minutes apart on a shared VM: +50 % with a 3-process CI of [+36 %, +70 %]), and the verdict is
    inconclusive, naming the remedy."""
    import numpy as np

    from benchdb.analysis.stats import robust_noise

    ub, uc = b.unit, c.unit
    vb = np.concatenate(b.processes) if b.processes else np.asarray(b.values, dtype=float)
    vc = np.concatenate(c.processes) if c.processes else np.asarray(c.values, dtype=float)
    cmp = Comparison(scenario, "unchanged", "", n_base=len(vb), n_cand=len(vc), unit=uc or ub,
                     base_status=b.status, cand_status=c.status)
    if len(vb):
        cmp.base_median = float(np.median(vb))
    if len(vc):
        cmp.cand_median = float(np.median(vc))
    early = _early_verdict(b, c, len(vb), len(vc))
    if early:
        cmp.verdict, cmp.reason = early
        return cmp
    worse_up = (uc or ub) not in HIGHER_IS_BETTER_UNITS        # latency-like: a larger value is slower
    gb, gc, aside, interval = _intervals(cmp, b, c, vb, vc, worse_up, seed)
    wide, narrow = interval(level), interval(eq_level)   # same seed: the same resamples, a nested interval
    if wide is None or narrow is None:
        # ratio_ci has no interval when a side has no process with samples left (all set aside)
        cmp.verdict, cmp.reason = "inconclusive", "no process with samples left on a side"
        return cmp
    point, lo, hi = wide
    _, eq_lo, eq_hi = narrow
    cmp.change, cmp.ci_low, cmp.ci_high, cmp.eq_low, cmp.eq_high = point, lo, hi, eq_lo, eq_hi
    cmp.noise = robust_noise(history) if history and len(history) >= MIN_HISTORY else None
    cmp.threshold = max(threshold, NOISE_MULTIPLE * cmp.noise) if cmp.noise is not None else threshold
    cmp.verdict, cmp.reason = _interval_verdict((lo, hi), (eq_lo, eq_hi), cmp.threshold, worse_up,
                                                noise_known=cmp.noise is not None,
                                                fewest_processes=min(len(gb), len(gc)), interleaved=interleaved,
                                                level=level, eq_level=eq_level)
    cmp.reason += aside
    return cmp


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


#: The (point, low, high) interval of the change at a level; None when a side has no samples.
_IntervalAt = Callable[[float], "tuple[float, float, float] | None"]


def _intervals(cmp: Comparison, b: SideSamples, c: SideSamples, vb: np.ndarray, vc: np.ndarray,
               worse_up: bool, seed: int) -> tuple[list[np.ndarray], list[np.ndarray], str, _IntervalAt]:
    """Each side's processes (outliers set aside), the note naming those set aside, and the
    interval of the change at a level; fills in the comparison's processes, medians and method."""
    import numpy as np

    from benchdb.analysis import hierarchy
    from benchdb.analysis.stats import bootstrap_median_ratio

    gb = list(b.processes) if b.processes is not None else [vb]
    gc = list(c.processes) if c.processes is not None else [vc]
    cmp.processes = (len(gb), len(gc))
    if len(gb) < 2 or len(gc) < 2:
        cmp.interval = "bootstrap over one process's iterations"
        return gb, gc, "", lambda level: bootstrap_median_ratio(vb, vc, level=level, seed=seed)
    aside = ""
    out_b, out_c = hierarchy.outlier_processes(gb, worse_up), hierarchy.outlier_processes(gc, worse_up)
    if out_b or out_c:
        def shift(g: list[np.ndarray], out: list[int], i: int) -> float:
            # the outlier's median against the pooled median of the others
            return float(np.median(g[i]) / np.median(np.concatenate([x for j, x in enumerate(g) if j not in out]))
                         - 1)
        aside = "; set aside as outlier processes: " + ", ".join(
            [f"baseline {shift(gb, out_b, i):+.0%}" for i in out_b]
            + [f"candidate {shift(gc, out_c, i):+.0%}" for i in out_c])
        gb = [g for i, g in enumerate(gb) if i not in out_b]
        gc = [g for i, g in enumerate(gc) if i not in out_c]
        cmp.n_base, cmp.n_cand = sum(map(len, gb)), sum(map(len, gc))
    # each side's value: its typical process (geometric mean of the process medians), so that
    # the change shown is the one the interval is about
    cmp.base_median, cmp.cand_median = hierarchy.typical(gb), hierarchy.typical(gc)
    cmp.interval = ("hierarchical bootstrap over processes and iterations (medians: geometric mean of "
                    "the process medians)")
    if aside:
        cmp.interval += f" ({len(out_b)} + {len(out_c)} outlier process(es) set aside)"
    return gb, gc, aside, lambda level: hierarchy.ratio_ci(gb, gc, level=level, seed=seed)


def _interval_verdict(ci: tuple[float, float], eq: tuple[float, float], t: float, worse_up: bool, *,
                      noise_known: bool, fewest_processes: int, interleaved: bool, level: float,
                      eq_level: float) -> tuple[str, str]:
    """(verdict, reason) from the change's ``level`` CI, its ``eq_level`` CI and the threshold ``t``."""
    (lo, hi), (eq_lo, eq_hi) = ci, eq
    # express the interval as "how much worse": positive = regression, whatever the direction
    w_lo, w_hi = (lo, hi) if worse_up else (-hi, -lo)
    e_lo, e_hi = (eq_lo, eq_hi) if worse_up else (-eq_hi, -eq_lo)
    if not noise_known and fewest_processes < 2:
        return "inconclusive", (
            f"run-to-run noise unknown: {fewest_processes} process on a side and no history of this series "
            f"(a within-process interval cannot see shifts between runs); compare an interleaved "
            f"`benchdb run --ab` run (--repeats 3 or more), or gate once the series has {MIN_HISTORY} runs")
    if not noise_known and not interleaved:
        return "inconclusive", (
            f"run-to-run noise unknown: the sides are separate invocations and the series has no history "
            f"(processes of one invocation share its moment of the machine, so their spread cannot see "
            f"shifts between invocations); compare an interleaved `benchdb run --ab` run, or gate once "
            f"the series has {MIN_HISTORY} runs")
    if w_lo > t:
        return "regressed", f"whole {level:.0%} CI beyond +{t:.1%}"
    if w_hi < -t:
        return "improved", f"whole {level:.0%} CI beyond -{t:.1%}"
    if e_lo >= -t and e_hi <= t:
        return "unchanged", (f"whole {eq_level:.0%} CI [{eq_lo:+.1%}, {eq_hi:+.1%}] within +-{t:.1%} "
                             "(equivalence: two one-sided tests at 5%)")
    return "inconclusive", (f"the {eq_level:.0%} CI [{eq_lo:+.1%}, {eq_hi:+.1%}] straddles +-{t:.1%}; "
                            "measure longer or with more --repeats")

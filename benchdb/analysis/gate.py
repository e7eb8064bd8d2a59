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
(:mod:`benchdb.analysis.hierarchy`), so process-to-process variance is in it (widened to the
Student-t interval of K processes where K is small: resampling 3 processes alone gave 11.7 % false
alarms on simulated A/A pairs whose processes differ by 20 %); a side's value is
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

Serving load points: with no ``--metric``, a series whose every process on both sides found a
steady-state window is judged on the TTFT within it, its history read on that metric too; each
comparison names the window it was judged over and a side that found none
(:mod:`benchdb.analysis.gate_window`).

This module holds the gate's vocabulary: its verdicts, exit codes and results. The gate runs in
:mod:`benchdb.analysis.check`, judges a series in :mod:`benchdb.analysis.verdict` and reads samples
through :mod:`benchdb.analysis.gate_samples`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from benchdb.analysis.selection import Selection

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
EXIT_MEANING = {
    0: "pass: every compared series is unchanged, improved or fixed",
    1: "fail: a shared series regressed or broke",
    2: "error: nothing to compare (no series on both sides, a selector matching nothing, "
    "an unknown metric) or another usage error",
    3: "undecided: nothing failed, but some verdicts are inconclusive (--allow-inconclusive passes them)",
}
#: The exit code of a check whose verdicts leave something undecided (see EXIT_MEANING).
UNDECIDED = 3


@dataclass
class Comparison:
    scenario: dict[str, Any]
    verdict: str  # one of VERDICTS
    reason: str
    n_base: int = 0
    n_cand: int = 0
    base_median: float | None = None
    cand_median: float | None = None
    change: float | None = None  # cand / base - 1 of the median
    ci_low: float | None = None  # 95 % interval of the change (regressed / improved)
    ci_high: float | None = None
    eq_low: float | None = None  # 90 % interval (the equivalence test that says unchanged)
    eq_high: float | None = None
    threshold: float | None = None
    noise: float | None = None
    unit: str | None = None
    base_status: str | None = None
    cand_status: str | None = None
    processes: tuple[int, int] | None = None  # processes pooled on each side
    interval: str | None = None  # how the CI was computed
    #: The metric this series was judged on: the gate's, or its steady-state figure
    #: (:mod:`benchdb.analysis.gate_window`).
    metric: str | None = None
    #: "steady state" or "whole window" for a serving load point with a steady-state test; else None.
    window: str | None = None
    #: A side whose load point found no steady state, and why (e.g. "none on candidate: drifting up: ...").
    steady_state: str | None = None

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
    #: Which window the serving series were judged over (empty where none is a serving load point).
    window_note: str = ""

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


@dataclass(frozen=True)
class SideSamples:
    """One side of a series as :func:`benchdb.analysis.verdict.judge` reads it: its result's state and its
    samples of the metric."""

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
    def of(
        cls,
        row: dict[str, Any],
        samples: Mapping[str, tuple[str | None, Sequence[float] | np.ndarray]],
        processes: Sequence[np.ndarray] | None = None,
    ) -> SideSamples:
        """From a result row (status, validity, validity_reasons, error, result_id) and the
        samples of each result id: (unit, values)."""
        unit, values = samples.get(row["result_id"], (None, []))
        return cls(
            row["status"],
            row["validity"],
            tuple(row.get("validity_reasons") or ()),
            row.get("error"),
            unit,
            values,
            processes,
        )

    def describe_status(self) -> str:
        """The status, with the first line of its error."""
        err = (self.error or "").strip().splitlines()
        detail = f" ({err[0][:160]})" if err else ""
        return f"{self.status}{detail}"

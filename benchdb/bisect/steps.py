"""The steps of `benchdb bisect` (:mod:`benchdb.bisect.search`): the commits it measures, what one
step's measurement said, and how that one verdict is read from the gate's per-scenario ones."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Commit:
    sha: str
    subject: str
    date: str

    @property
    def short(self) -> str:
        return self.sha[:10]

    def line(self) -> str:
        return f"{self.short} {self.subject} ({self.date[:10]})"


@dataclass
class Verdict:
    """What one step's measurement said: regressed | unchanged | inconclusive | skipped, with the
    change of the median, its 95 % interval, the scenario it is about and the A/B run's id."""

    verdict: str
    change: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    scenario: str | None = None
    ab_id: str | None = None
    note: str = ""


@dataclass(kw_only=True)
class Step(Verdict):
    number: int
    base: Commit  # what it was measured against (the current good commit)
    tested: Commit


def verdict(gate, ab_id: str) -> Verdict:
    """One verdict for a step from the gate's per-scenario ones: any regression is one; a scenario
    broken on the tested side makes it unmeasurable (skipped); any inconclusive one leaves it open."""
    by = {
        v: [c for c in gate.comparisons if c.verdict == v]
        for v in ("regressed", "broken", "still_broken", "inconclusive")
    }
    if by["regressed"]:
        verdict, c = "regressed", by["regressed"][0]
    elif by["broken"] or by["still_broken"]:
        c = (by["broken"] or by["still_broken"])[0]
        return Verdict("skipped", ab_id=ab_id, scenario=_label(c), note=f"its bench fails: {c.reason}")
    elif by["inconclusive"]:
        verdict, c = "inconclusive", by["inconclusive"][0]
    else:
        verdict = "unchanged"
        c = max(gate.comparisons, key=lambda x: abs(x.change or 0.0))
    # an inconclusive step says why (the interval straddling the threshold, or no noise estimate),
    # so that a bisect that stops there names what to change
    note = c.reason if verdict == "inconclusive" else "" if c.verdict == verdict else f"{c.verdict}: {c.reason}"
    return Verdict(verdict, c.change, c.ci_low, c.ci_high, _label(c), ab_id, note)


def _label(c) -> str:
    s = c.scenario
    return f"{s.get('model_id')} {s.get('backend')}/{s.get('device')} bs={s.get('batch_size')} {s.get('input_shape')}"

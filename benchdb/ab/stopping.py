"""When an adaptive A/B run (``--ab-max-trials``) may stop measuring a group: its sequential
statistics, the gate's verdict on the trials so far at levels made stricter for every look."""

from __future__ import annotations

from benchdb.ab.process import Group, Measured
from benchdb.harness.scenario import merge_repeats


def decided(group: Group, base: list[list[Measured]], cand: list[list[Measured]], threshold: float, looks: int) -> bool:
    """Whether more trials could not change the gate's verdict on any of the group's scenarios: a side
    failed or is invalid (more trials would not mend it), or the verdict on the trials so far is
    regressed, improved or unchanged at the gate's levels made stricter for ``looks`` looks
    (Bonferroni: a run that looks after every two trials must not find a change more often than
    one that looks once; ``benchdb check`` then judges the written trials at its usual levels)."""
    import numpy as np

    from benchdb.analysis import gate, verdict

    level = 1 - (1 - gate.LEVEL) / looks
    eq_level = 1 - (1 - gate.EQUIVALENCE_LEVEL) / looks
    for i in range(len(group.planned["base"])):
        sides = {}
        for side, trials in (("base", base), ("cand", cand)):
            outcomes = [trial[i].outcome for trial in trials]
            merged = merge_repeats(outcomes)
            if merged.status != "ok" or merged.validity != "valid":
                return True
            metric = merged.primary_metric
            unit = next((r[1] for o in outcomes for r in o.rows if r[0] == metric), None)
            sides[side] = gate.SideSamples(
                "ok",
                "valid",
                unit=unit,
                processes=[np.asarray([r[4] for r in o.rows if r[0] == metric], dtype=float) for o in outcomes],
            )
        cmp = verdict.judge(
            {},
            sides["base"],
            sides["cand"],
            threshold=threshold,
            seed=0,
            interleaved=True,
            level=level,
            eq_level=eq_level,
        )
        if cmp.verdict == "inconclusive":
            return False
    return True

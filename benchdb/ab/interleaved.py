"""Interleaved A/B runs for pull-request gates: ``benchdb run ... --ab BASE CAND``.

Each side is a Python interpreter (the virtual environment of the main branch, the one of the pull
request) with optional environment variables of its own (``--ab-env cand:NAME=VALUE``). For every
planned scenario, the two sides are measured in K trials (``--repeats K``, default 5): in each
trial every scenario runs once per side, each in a fresh process, the scenarios in a fresh random
order and the two sides of a scenario back to back in a random order that is counterbalanced over
the trials (each side goes first in half of them): randomised multiple interleaved trials (Abedi &
Brecht, ICPE 2017), so a drift of a shared machine lands on both sides alike.

The sides may run different benchdb versions, so only the stable Parquet contract crosses between
them: this process plans the scenarios with its own code (the same plan as a normal run of the same
options), runs ``<side python> -m benchdb run ... --repeats 1`` for each (trial, scenario, side)
with the scenario's own axes and stopping rule, reads the one contract file it wrote, and when a
scenario has all its K trials writes one file per side: two runs (one run id per side) tagged
``ab-<id>`` and ``ab-<id>-base`` / ``ab-<id>-cand``, whose samples carry their trial in the
``repeat`` column. ``benchdb check --baseline tag:ab-<id>-base --candidate tag:ab-<id>-cand``
then compares exactly them with the hierarchical interval.

Identity: a side's environment variables are not part of a scenario's key. A variable a user bench
declares in ``ENV`` is (docs/guides/user-benches.md), so each side is planned under its own
environment; the sides' keys then differ and they are different series, which the gate reports as
nothing to compare. The key written is the one both sides' processes reported when they agree
(e.g. an OpenVINO throughput result's request count, known once compiled), else each side's
planned key (sides running benchdb versions that key options differently are still one series).

Two deployments (``--ab-url BASE_URL CAND_URL``): both sides are this interpreter, each measuring
its own endpoint on the hardware its file describes (``Group.side_opts``); their scenarios are the
same but for the device the server's system is named by, and the gate compares the two halves of
the run across their hardware (:func:`benchdb.analysis.selection.deployment_pairs`).

A user bench function's parameter combinations cannot be selected one by one on the command line:
its process runs the whole function and the result of each planned scenario is picked by its key.

This module runs the trials; :mod:`benchdb.ab.plan` plans and schedules them and
:mod:`benchdb.ab.write` writes each side's files.
"""

from __future__ import annotations

import random
import secrets
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from benchdb.ab.plan import Step, extension, need_trials, schedule
from benchdb.ab.process import SIDES, Group, Measured, Side, run_process
from benchdb.ab.stopping import decided
from benchdb.ab.write import SideWriter, write_group
from benchdb.errors import BenchdbError
from benchdb.plan.files import RunReport
from benchdb.schema import contract


@dataclass
class AbReport:
    ab_id: str
    sides: dict[str, Side]
    reports: dict[str, RunReport] = field(default_factory=dict)  # side -> the run it wrote
    steps: list[Step] = field(default_factory=list)

    @property
    def tags(self) -> dict[str, str]:
        return {s: f"ab-{self.ab_id}-{s}" for s in SIDES}


def run_ab(
    groups: list[Group],
    sides: dict[str, Side],
    *,
    config: dict,
    out,
    tags=(),
    seed: int | None = None,
    progress: Callable[[Step, str, Group, list[Measured], int, int, float], None] | None = None,
    ab_id: str | None = None,
    max_trials: int = 0,
    threshold: float = 0.05,
    duet: list | None = None,
) -> AbReport:
    """Measure every group in interleaved A/B trials and write one file per scenario and side.
    ``max_trials`` above a group's trials: after them, a group whose verdict (``decided``, at
    ``threshold``) is still open gets two more trials at a time, up to ``max_trials``.
    ``duet`` (two :class:`benchdb.plan.parallel.Worker` on equivalent cores or devices): a trial runs
    both sides' processes at the same time, one on each, the sides swapping workers every trial."""
    if not groups:
        raise BenchdbError("the plan has no scenarios; give at least one --model and batch size")
    for g in groups:
        need_trials(g.trials)
    ab_id = ab_id or secrets.token_hex(4)
    seed = seed if seed is not None else random.SystemRandom().randrange(2**31)
    rng = random.Random(seed)
    steps = schedule([g.trials for g in groups], rng)
    adaptive = any(max_trials > g.trials for g in groups)
    report = AbReport(ab_id, sides, steps=steps)
    started = datetime.now(timezone.utc).isoformat()
    stopping = {"max_trials": max_trials, "threshold": threshold} if adaptive else {}
    duet_record = {"duet": [w.record() for w in duet]} if duet else {}
    writers = _side_writers(sides, report, {"seed": seed, **stopping, **duet_record}, started, out, tags, config)

    def record_order() -> None:  # the trials' order, in the runs' config (before their first file)
        for name in SIDES:
            writers[name].config["ab"].update(_order_record(groups, steps))

    record_order()
    got: dict[tuple[int, str], list[list[Measured]]] = {}
    tmp = Path(tempfile.mkdtemp(prefix="benchdb-ab-"))
    done = 0
    try:

        def run_steps(todo: list[Step]) -> None:
            nonlocal done
            for step in todo:
                group = groups[step.group]
                results = _duet_step(step, group, sides, duet, tmp) if duet else None
                for name in step.order:
                    t0 = time.perf_counter()
                    measured = (
                        results[name]
                        if results
                        else run_process(sides[name], group, tmp / name / f"t{step.trial}" / f"g{step.group}")
                    )
                    for m in measured:
                        if m.meta is not None:
                            writers[name].note(m.meta)
                    got.setdefault((step.group, name), []).append(measured)
                    done += 1
                    if progress:
                        progress(step, name, group, measured, done, 2 * len(steps), time.perf_counter() - t0)
                if not adaptive and len(got[(step.group, "base")]) == group.trials:
                    write_group(group, step.group, steps, got, writers)

        run_steps(steps)
        if adaptive:
            _extend_until_decided(groups, got, steps, run_steps, max_trials=max_trials, threshold=threshold, rng=rng)
            record_order()
            for gi, g in enumerate(groups):
                write_group(replace(g, opts=replace(g.opts, repeats=len(got[(gi, "base")]))), gi, steps, got, writers)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        report.reports = {s: writers[s].report for s in SIDES}
    return report


def _duet_step(step: Step, group: Group, sides: dict[str, Side], duet: list, tmp: Path) -> dict[str, list[Measured]]:
    """Both sides' processes of one trial at the same time, each on one of the two workers: base on
    worker ``trial % 2``, cand on the other, so the sides swap workers every trial."""
    from functools import partial

    from benchdb.plan.parallel import together

    where = {"base": duet[step.trial % 2], "cand": duet[(step.trial + 1) % 2]}
    measured = together(
        [
            partial(
                run_process, sides[name], group, tmp / name / f"t{step.trial}" / f"g{step.group}", where[name].placement
            )
            for name in step.order
        ]
    )
    out = dict(zip(step.order, measured, strict=True))
    for name in SIDES:
        other = "cand" if name == "base" else "base"
        record = {**where[name].record(), "beside": [f"{other} side of this trial (duet)"]}
        for m in out[name]:
            m.outcome = replace(m.outcome, extra={**m.outcome.extra, "placement": record})
    return out


def _side_writers(
    sides: dict[str, Side], report: AbReport, settings: dict[str, Any], started: str, out, tags, config: dict
) -> dict[str, SideWriter]:
    """Each side's writer; its run's config records the A/B run: its id, both sides and the
    run's ``settings`` (seed, and the adaptive stopping when used)."""
    writers = {}
    for name in SIDES:
        other = "cand" if name == "base" else "base"
        ab = {
            "id": report.ab_id,
            "side": name,
            **sides[name].record(),
            "other": {"side": other, **sides[other].record()},
            **settings,
        }
        writers[name] = SideWriter(
            sides[name],
            contract.new_run_id(),
            started,
            out,
            [*tags, f"ab-{report.ab_id}", report.tags[name]],
            {**config, "ab": ab},
        )
    return writers


def _extend_until_decided(
    groups: list[Group],
    got: dict[tuple[int, str], list[list[Measured]]],
    steps: list[Step],
    run_steps: Callable[[list[Step]], None],
    *,
    max_trials: int,
    threshold: float,
    rng: random.Random,
) -> None:
    """Two more trials at a time for every group whose verdict is still open, up to ``max_trials``
    (appended to ``steps`` as they run)."""
    looks = 1 + max(-(-(max_trials - g.trials) // 2) for g in groups)
    while True:
        open_ = [
            gi
            for gi, g in enumerate(groups)
            if len(got[(gi, "base")]) < max_trials
            and not decided(g, got[(gi, "base")], got[(gi, "cand")], threshold, looks)
        ]
        if not open_:
            break
        more = extension(open_, {gi: len(got[(gi, "base")]) for gi in open_}, max_trials, rng)
        steps.extend(more)
        run_steps(more)


def _order_record(groups: list[Group], steps: list[Step]) -> dict[str, Any]:
    """The runs' record of the trials: per group its scenarios and which side went first in each
    trial, and per trial the groups in the order they ran."""
    trials = 1 + max((s.trial for s in steps), default=-1)
    return {
        "trials": trials,
        "order": [
            {
                "scenarios": [sc.label() for sc in g.planned["base"]],
                "first": [s.order[0] for s in steps if s.group == gi],
            }
            for gi, g in enumerate(groups)
        ],
        "sequence": [[s.group for s in steps if s.trial == r] for r in range(trials)],
    }

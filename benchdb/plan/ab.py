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
"""

from __future__ import annotations

import itertools
import platform
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

from benchdb.errors import BenchdbError
from benchdb.harness import hardware
from benchdb.harness.scenario import Outcome, RunOptions, Scenario, merge_repeats
from benchdb.plan.ab_process import (
    SIDES,
    Group,
    Measured,
    Side,
    full_key,
    loose_key,
    run_process,
    side_environ,
    side_imports,
)
from benchdb.plan.ab_stats import decided
from benchdb.plan.files import RunReport, Sink, Writer
from benchdb.plan.planning import PlanItem, build_plan, load_backend
from benchdb.schema import contract

#: Trials per scenario when neither --repeats nor the config says.
DEFAULT_TRIALS = 5
#: Seconds a side's process may take beyond its model's load timeout and its scenarios' timeouts.
SLACK_S = 120.0
_ROW_COLUMNS = ("metric", "unit", "iteration", "t_offset_s", "value")


@dataclass
class Step:
    trial: int
    group: int
    order: tuple[str, str]                    # the sides in the order their processes run


@dataclass
class AbReport:
    ab_id: str
    sides: dict[str, Side]
    reports: dict[str, RunReport] = field(default_factory=dict)   # side -> the run it wrote
    steps: list[Step] = field(default_factory=list)

    @property
    def tags(self) -> dict[str, str]:
        return {s: f"ab-{self.ab_id}-{s}" for s in SIDES}


def _groups_of(item: PlanItem) -> list[tuple[dict[str, tuple], list[int]]]:
    """The item's scenarios grouped by the smallest command-line axes that plan them: each
    (mode, precision, batch size, sequence length) is planned alone and a scenario belongs to
    the first one whose plan has it. Scenarios no single combination plans run with all axes."""
    opts = item.opts
    backend = load_backend(opts.backend)
    wanted = {full_key(sc): i for i, sc in enumerate(item.scenarios)}
    groups: dict[tuple, list[int]] = {}
    axes_of: dict[tuple, dict[str, tuple]] = {}
    for mode, precision, bs, seq in itertools.product(opts.modes, opts.precisions, opts.batch_sizes, opts.seq_lens):
        if not wanted:
            break
        axes: dict[str, tuple] = {"modes": (mode,), "precisions": (precision,), "batch_sizes": (bs,),
                                  "seq_lens": (seq,)}
        one = replace(opts, models=(item.model,), modes=(mode,), precisions=(precision,), batch_sizes=(bs,),
                      seq_lens=(seq,))
        for _, scenarios in backend.plan(one):
            for sc in scenarios:
                i = wanted.pop(full_key(sc), None)
                if i is not None:
                    combo = (mode, precision, bs, seq)
                    groups.setdefault(combo, []).append(i)
                    axes_of[combo] = axes
    out = [(axes_of[c], sorted(ix)) for c, ix in groups.items()]
    if wanted:
        everything = {"modes": opts.modes, "precisions": opts.precisions, "batch_sizes": opts.batch_sizes,
                      "seq_lens": opts.seq_lens}
        out.append((everything, sorted(wanted.values())))
    return sorted(out, key=lambda g: g[1][0])


def plan_ab(runs: list[RunOptions] | dict[str, list[RunOptions]], sides: dict[str, Side], *, exclude=None,
            shard=None, unmatched: Callable[[dict], None] | None = None, deployments: bool = False) -> list[Group]:
    """The groups to measure: the plan of a normal run of ``runs``, made once per side in that
    side's environment (so a user bench's declared ENV keys each side's scenarios). ``runs`` may
    differ per side (``{side: runs}``: `benchdb bisect` runs each side's own bench files; --ab-url
    each side's endpoint), as long as they plan the same scenarios; ``deployments``: on devices
    that may differ (two servers' systems)."""
    plans = {}
    for name in SIDES:
        with side_environ(sides[name].env), side_imports(sides[name].import_path):
            plans[name] = build_plan(runs[name] if isinstance(runs, dict) else runs, exclude=exclude, shard=shard,
                                     unmatched=unmatched if name == "base" else None)
    base, cand = plans["base"], plans["cand"]

    def shape(plan: list[PlanItem]) -> list[list[tuple]]:
        return [[loose_key(replace(sc, device="")) if deployments else loose_key(sc) for sc in i.scenarios]
                for i in plan]

    if shape(base) != shape(cand):
        n_b, n_c = (sum(len(i.scenarios) for i in p) for p in (base, cand))
        raise BenchdbError(f"the plan differs between the sides' environments ({n_b} vs {n_c} scenarios, or "
                           "other shapes or parameters): --ab compares the same scenarios; set variables "
                           "that change what a bench file plans in the environment of both sides")
    groups = []
    for bi, ci in zip(base, cand, strict=True):      # same shape: checked above
        with side_environ(sides["base"].env), side_imports(sides["base"].import_path):
            parts = _groups_of(bi)
        for axes, ix in parts:
            groups.append(Group(bi.opts, bi.model, axes, {"base": [bi.scenarios[i] for i in ix],
                                                          "cand": [ci.scenarios[i] for i in ix]},
                                models={"base": bi.model, "cand": ci.model} if bi.model != ci.model else None,
                                side_opts={"base": bi.opts, "cand": ci.opts} if deployments else None))
    return groups


def need_trials(k: int) -> None:
    if k < 2:
        raise BenchdbError(f"--ab needs at least 2 trials per scenario (found --repeats {k}; default "
                           f"{DEFAULT_TRIALS}): the gate's interval between processes needs 2+ on each side")


def schedule(trials: list[int], rng: random.Random) -> list[Step]:
    """Every process pair, in run order. Trial r runs every group with more than r trials once, in a
    fresh random order; a group's two sides run back to back, and over its K trials each side goes
    first floor(K/2) or ceil(K/2) times, in random trials (counterbalanced: A B, B A, B A, A B, ...)."""
    first = []
    for k in trials:
        seq = ["base", "cand"] * (k // 2) + ([rng.choice(SIDES)] if k % 2 else [])
        rng.shuffle(seq)
        first.append(seq)
    steps = []
    for r in range(max(trials, default=0)):
        order = [g for g, k in enumerate(trials) if k > r]
        rng.shuffle(order)
        for g in order:
            a = first[g][r]
            steps.append(Step(r, g, (a, "cand" if a == "base" else "base")))
    return steps


def _keys(planned: dict[str, Scenario], got: dict[str, list[Measured]]) -> dict[str, Scenario]:
    """Each side's key: the one every process of both sides reported when they agree (and the
    sides were planned alike or both reported), else the side's planned key."""
    reported = {s: {full_key(m.outcome.scenario): m.outcome.scenario for m in got[s] if m.meta is not None}
                for s in SIDES}
    union = {**reported["base"], **reported["cand"]}
    alike = full_key(planned["base"]) == full_key(planned["cand"]) or all(reported[s] for s in SIDES)
    if len(union) == 1 and alike:
        (sc,) = union.values()
        return {s: sc for s in SIDES}
    return {s: planned[s] for s in SIDES}


def _settings(key: Scenario, got: list[Measured], planned: Scenario) -> Scenario:
    """The key's scenario with the settings its side recorded (the planned ones without a file)."""
    settings = next((m.outcome.scenario.settings for m in got if m.meta is not None), planned.settings)
    return replace(key, options=dict(key.options), settings=dict(settings))


class _SideWriter:
    """One side's run: made when its first file is written (after the first trial has run every
    scenario, so the software and commit its processes recorded are known)."""

    def __init__(self, side: Side, run_id: str, started: str, out, tags: list[str], config: dict):
        self.side, self.run_id, self.started, self.out = side, run_id, started, out
        self.tags, self.config = tags, config
        self.runs: list[dict] = []              # the run metadata of the side's files until the run is made
        self.hardware: dict[tuple[str, str], dict] = {}     # (backend, device) -> what its processes recorded
        self.writer: Writer | None = None

    def note(self, meta: dict) -> None:
        """A file one of the side's processes wrote."""
        sc = meta["scenario"]
        self.hardware.setdefault((sc["backend"], sc["device"]), meta["hardware"])
        if self.writer is None:
            self.runs.append(meta["run"])

    def write(self, outcome: Outcome, opts: RunOptions) -> None:
        if self.writer is None:
            first = self.runs[0] if self.runs else {}
            software: dict[str, Any] = {}
            for run in self.runs:
                for k, v in (run.get("software") or {}).items():
                    software.setdefault(k, v)
            software.setdefault("python", platform.python_version())
            run_meta = {"run_id": self.run_id, "started_at": self.started, "host": hardware.host(),
                        "benchdb_version": first.get("benchdb_version") or self.side.version or "unknown",
                        "git_commit": first.get("git_commit") if self.runs else hardware.git_commit(),
                        "software": software, "config": self.config, "tags": self.tags}
            self.writer = Writer(run_meta, Sink(str(self.out), self.run_id))
            self.runs = []
        for key, hw in self.hardware.items():
            self.writer.hardware.setdefault(key, hw)
        self.writer.write(outcome, opts)

    @property
    def report(self) -> RunReport:
        return self.writer.report if self.writer else RunReport(self.run_id, self.out)


def run_ab(groups: list[Group], sides: dict[str, Side], *, config: dict, out, tags=(), seed: int | None = None,
           progress: Callable[[Step, str, Group, list[Measured], int, int, float], None] | None = None,
           ab_id: str | None = None, max_trials: int = 0, threshold: float = 0.05,
           duet: list | None = None) -> AbReport:
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

    def record_order() -> None:     # the trials' order, in the runs' config (before their first file)
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
                    measured = results[name] if results else \
                        run_process(sides[name], group, tmp / name / f"t{step.trial}" / f"g{step.group}")
                    for m in measured:
                        if m.meta is not None:
                            writers[name].note(m.meta)
                    got.setdefault((step.group, name), []).append(measured)
                    done += 1
                    if progress:
                        progress(step, name, group, measured, done, 2 * len(steps), time.perf_counter() - t0)
                if not adaptive and len(got[(step.group, "base")]) == group.trials:
                    _write_group(group, step.group, steps, got, writers)

        run_steps(steps)
        if adaptive:
            _extend_until_decided(groups, got, steps, run_steps, max_trials=max_trials, threshold=threshold,
                                  rng=rng)
            record_order()
            for gi, g in enumerate(groups):
                _write_group(replace(g, opts=replace(g.opts, repeats=len(got[(gi, "base")]))), gi, steps, got,
                             writers)
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
    measured = together([
        partial(run_process, sides[name], group, tmp / name / f"t{step.trial}" / f"g{step.group}",
                where[name].placement) for name in step.order])
    out = dict(zip(step.order, measured, strict=True))
    for name in SIDES:
        other = "cand" if name == "base" else "base"
        record = {**where[name].record(), "beside": [f"{other} side of this trial (duet)"]}
        for m in out[name]:
            m.outcome = replace(m.outcome, extra={**m.outcome.extra, "placement": record})
    return out


def _side_writers(sides: dict[str, Side], report: AbReport, settings: dict[str, Any], started: str, out,
                  tags, config: dict) -> dict[str, _SideWriter]:
    """Each side's writer; its run's config records the A/B run: its id, both sides and the
    run's ``settings`` (seed, and the adaptive stopping when used)."""
    writers = {}
    for name in SIDES:
        other = "cand" if name == "base" else "base"
        ab = {"id": report.ab_id, "side": name, **sides[name].record(),
              "other": {"side": other, **sides[other].record()}, **settings}
        writers[name] = _SideWriter(sides[name], contract.new_run_id(), started, out,
                                    [*tags, f"ab-{report.ab_id}", report.tags[name]], {**config, "ab": ab})
    return writers


def _extend_until_decided(groups: list[Group], got: dict[tuple[int, str], list[list[Measured]]], steps: list[Step],
                          run_steps: Callable[[list[Step]], None], *, max_trials: int, threshold: float,
                          rng: random.Random) -> None:
    """Two more trials at a time for every group whose verdict is still open, up to ``max_trials``
    (appended to ``steps`` as they run)."""
    looks = 1 + max(-(-(max_trials - g.trials) // 2) for g in groups)
    while True:
        open_ = [gi for gi, g in enumerate(groups)
                 if len(got[(gi, "base")]) < max_trials
                 and not decided(g, got[(gi, "base")], got[(gi, "cand")], threshold, looks)]
        if not open_:
            break
        more = extension(open_, {gi: len(got[(gi, "base")]) for gi in open_}, max_trials, rng)
        steps.extend(more)
        run_steps(more)


def _order_record(groups: list[Group], steps: list[Step]) -> dict[str, Any]:
    """The runs' record of the trials: per group its scenarios and which side went first in each
    trial, and per trial the groups in the order they ran."""
    trials = 1 + max((s.trial for s in steps), default=-1)
    return {"trials": trials,
            "order": [{"scenarios": [sc.label() for sc in g.planned["base"]],
                       "first": [s.order[0] for s in steps if s.group == gi]} for gi, g in enumerate(groups)],
            "sequence": [[s.group for s in steps if s.trial == r] for r in range(trials)]}


def extension(open_groups: list[int], done: dict[int, int], max_trials: int, rng: random.Random) -> list[Step]:
    """Two more trials for each open group (one if only one is left before ``max_trials``): each
    side goes first in one of the two, in random order; the groups in a fresh random order per trial."""
    firsts = {}
    for g in open_groups:
        seq = list(SIDES)
        rng.shuffle(seq)
        firsts[g] = seq[:min(2, max_trials - done[g])]
    steps = []
    for k in range(2):
        order = [g for g in open_groups if len(firsts[g]) > k]
        rng.shuffle(order)
        for g in order:
            a = firsts[g][k]
            steps.append(Step(done[g] + k, g, (a, "cand" if a == "base" else "base")))
    return steps


def _write_group(group: Group, gi: int, steps: list[Step], got, writers: dict[str, _SideWriter]) -> None:
    orders = [",".join(s.order) for s in steps if s.group == gi]
    opts = replace(group.opts, repeats=group.trials)
    for i in range(len(group.planned["base"])):
        per_side = {s: [trial[i] for trial in got[(gi, s)]] for s in SIDES}
        planned = {s: group.planned[s][i] for s in SIDES}
        keys = _keys(planned, per_side)
        for s in SIDES:
            merged = merge_repeats([m.outcome for m in per_side[s]])
            merged = replace(merged, scenario=_settings(keys[s], per_side[s], planned[s]),
                             extra={**merged.extra, "ab_side": s, "ab_order": orders})
            writers[s].write(merged, opts)
    for s in SIDES:
        got.pop((gi, s), None)

"""What an interleaved A/B run (:mod:`benchdb.ab.interleaved`) measures and in what order: the groups of
scenarios each side's process runs, the trials' counterbalanced schedule and its extensions."""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable
from dataclasses import dataclass, replace

from benchdb.ab.process import SIDES, Group, Side, full_key, loose_key, side_environ, side_imports
from benchdb.errors import BenchdbError
from benchdb.harness.scenario import RunOptions
from benchdb.plan.planning import PlanItem, build_plan, load_backend

#: Trials per scenario when neither --repeats nor the config says.
DEFAULT_TRIALS = 5


@dataclass
class Step:
    trial: int
    group: int
    order: tuple[str, str]  # the sides in the order their processes run


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
        axes: dict[str, tuple] = {
            "modes": (mode,),
            "precisions": (precision,),
            "batch_sizes": (bs,),
            "seq_lens": (seq,),
        }
        one = replace(
            opts, models=(item.model,), modes=(mode,), precisions=(precision,), batch_sizes=(bs,), seq_lens=(seq,)
        )
        for _, scenarios in backend.plan(one):
            for sc in scenarios:
                i = wanted.pop(full_key(sc), None)
                if i is not None:
                    combo = (mode, precision, bs, seq)
                    groups.setdefault(combo, []).append(i)
                    axes_of[combo] = axes
    out = [(axes_of[c], sorted(ix)) for c, ix in groups.items()]
    if wanted:
        everything = {
            "modes": opts.modes,
            "precisions": opts.precisions,
            "batch_sizes": opts.batch_sizes,
            "seq_lens": opts.seq_lens,
        }
        out.append((everything, sorted(wanted.values())))
    return sorted(out, key=lambda g: g[1][0])


def plan_ab(
    runs: list[RunOptions] | dict[str, list[RunOptions]],
    sides: dict[str, Side],
    *,
    exclude=None,
    shard=None,
    unmatched: Callable[[dict], None] | None = None,
    deployments: bool = False,
) -> list[Group]:
    """The groups to measure: the plan of a normal run of ``runs``, made once per side in that
    side's environment (so a user bench's declared ENV keys each side's scenarios). ``runs`` may
    differ per side (``{side: runs}``: `benchdb bisect` runs each side's own bench files; --ab-url
    each side's endpoint), as long as they plan the same scenarios; ``deployments``: on devices
    that may differ (two servers' systems)."""
    plans = {}
    for name in SIDES:
        with side_environ(sides[name].env), side_imports(sides[name].import_path):
            plans[name] = build_plan(
                runs[name] if isinstance(runs, dict) else runs,
                exclude=exclude,
                shard=shard,
                unmatched=unmatched if name == "base" else None,
            )
    base, cand = plans["base"], plans["cand"]

    def shape(plan: list[PlanItem]) -> list[list[tuple]]:
        return [
            [loose_key(replace(sc, device="")) if deployments else loose_key(sc) for sc in i.scenarios] for i in plan
        ]

    if shape(base) != shape(cand):
        n_b, n_c = (sum(len(i.scenarios) for i in p) for p in (base, cand))
        raise BenchdbError(
            f"the plan differs between the sides' environments ({n_b} vs {n_c} scenarios, or "
            "other shapes or parameters): --ab compares the same scenarios; set variables "
            "that change what a bench file plans in the environment of both sides"
        )
    groups = []
    for bi, ci in zip(base, cand, strict=True):  # same shape: checked above
        with side_environ(sides["base"].env), side_imports(sides["base"].import_path):
            parts = _groups_of(bi)
        for axes, ix in parts:
            groups.append(
                Group(
                    bi.opts,
                    bi.model,
                    axes,
                    {"base": [bi.scenarios[i] for i in ix], "cand": [ci.scenarios[i] for i in ix]},
                    models={"base": bi.model, "cand": ci.model} if bi.model != ci.model else None,
                    side_opts={"base": bi.opts, "cand": ci.opts} if deployments else None,
                )
            )
    return groups


def need_trials(k: int) -> None:
    if k < 2:
        raise BenchdbError(
            f"--ab needs at least 2 trials per scenario (found --repeats {k}; default "
            f"{DEFAULT_TRIALS}): the gate's interval between processes needs 2+ on each side"
        )


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


def extension(open_groups: list[int], done: dict[int, int], max_trials: int, rng: random.Random) -> list[Step]:
    """Two more trials for each open group (one if only one is left before ``max_trials``): each
    side goes first in one of the two, in random order; the groups in a fresh random order per trial."""
    firsts = {}
    for g in open_groups:
        seq = list(SIDES)
        rng.shuffle(seq)
        firsts[g] = seq[: min(2, max_trials - done[g])]
    steps = []
    for k in range(2):
        order = [g for g in open_groups if len(firsts[g]) > k]
        rng.shuffle(order)
        for g in order:
            a = firsts[g][k]
            steps.append(Step(done[g] + k, g, (a, "cand" if a == "base" else "base")))
    return steps

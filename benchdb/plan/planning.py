"""The scenario plan: every scenario of a run's entries, less the excluded ones, a shard of it, and
what the plan's series are (their ids, the ones to skip, how long they should take)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from benchdb.backends import registry
from benchdb.backends.protocol import Backend
from benchdb.harness.scenario import RunOptions, Scenario
from benchdb.schema import identity


def backend_names() -> list[str]:
    return registry.names()


def load_backend(name: str) -> Backend:
    return registry.load(name)


@dataclass
class PlanItem:
    opts: RunOptions
    model: str
    scenarios: list[Scenario]


def build_plan(
    runs: list[RunOptions],
    *,
    exclude: list[dict] | None = None,
    shard: tuple[int, int] | None = None,
    unmatched: Callable[[dict], None] | None = None,
) -> list[PlanItem]:
    """Every scenario of every run entry, minus exclusions; with a shard, a deterministic slice:
    scenario k (in plan order) belongs to shard (k mod n) + 1, so n shards partition the plan.
    ``unmatched(rule)`` is called for each exclude rule that matched no scenario (a typo)."""
    from benchdb.backends.core_options import identity_options
    from benchdb.backends.shared import quantize
    from benchdb.plan.config import matching_rules
    from benchdb.schema.identity import canonical_options

    exclude = exclude or []
    used: set[int] = set()
    items: list[PlanItem] = []
    for opts in runs:
        quantize.check_applies(opts)
        backend = load_backend(opts.backend)
        declared = identity_options(opts)
        for model, scenarios in backend.plan(opts):
            kept = []
            for sc in scenarios:
                if declared:  # a backend's identity options are in its scenarios' identity, set or not
                    sc.options = canonical_options({**declared, **sc.options})
                hits = matching_rules(exclude, sc)
                used.update(hits)
                if not hits:
                    kept.append(sc)
            if kept:
                items.append(PlanItem(opts, model, kept))
    for i, rule in enumerate(exclude):
        if i not in used and unmatched is not None:
            unmatched(rule)
    if shard is not None:
        index, count = shard
        k = 0
        for item in items:
            mine = []
            for sc in item.scenarios:
                if k % count == index - 1:
                    mine.append(sc)
                k += 1
            item.scenarios = mine
        items = [i for i in items if i.scenarios]
    return items


def hardware_ids(items: list[PlanItem]) -> dict[tuple[str, str], str]:
    """(backend, device) -> the hardware id its results will carry, for every scenario device."""
    out = {}
    for item in items:
        for sc in item.scenarios:
            key = (sc.backend, sc.device)
            if key not in out:
                out[key] = identity.hardware_id(load_backend(sc.backend).hardware_of(sc.device))
    return out


def series_ids(items: list[PlanItem]) -> list[str]:
    """The series id of every planned scenario, in plan order (for --skip-fresh)."""
    hw = hardware_ids(items)
    return [identity.series_id(sc.key(), hw[(sc.backend, sc.device)]) for item in items for sc in item.scenarios]


def skip_series(items: list[PlanItem], skip: set[str]) -> int:
    """Drop the planned scenarios whose series id is in ``skip`` (in place); returns how many."""
    ids = iter(series_ids(items))  # plan order
    dropped = 0
    for item in items:
        kept = [sc for sc in item.scenarios if next(ids) not in skip]
        dropped += len(item.scenarios) - len(kept)
        item.scenarios = kept
    return dropped


def estimate_seconds(items: list[PlanItem], history: dict[str, float]) -> tuple[float, int]:
    """Seconds the plan should take (each scenario's last measurement, else its minimum time,
    plus 1 s of set-up) and how many scenarios had a history to go by."""
    seconds, known = 0.0, 0
    ids = series_ids(items) if history else []
    k = 0
    for item in items:
        for _ in item.scenarios:
            past = history.get(ids[k]) if ids else None
            k += 1
            known += past is not None
            seconds += (past if past is not None else item.opts.rule.min_time_s) + 1.0
    return seconds, known

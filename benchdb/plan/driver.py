"""Drive a backend over its scenario plan (:mod:`benchdb.plan.planning`) and write one contract file per
scenario."""

from __future__ import annotations

import platform
import random
from collections.abc import Callable, Iterator
from dataclasses import replace
from datetime import datetime, timezone

import pyarrow as pa

from benchdb import __version__
from benchdb.backends import registry
from benchdb.backends.core_options import recorded_config
from benchdb.errors import BenchdbError
from benchdb.harness import hardware
from benchdb.harness.isolation import run_isolated
from benchdb.harness.monitors import frozen_heap
from benchdb.harness.sample_stats import Stats
from benchdb.harness.scenario import Outcome, RunOptions, Scenario, merge_repeats
from benchdb.plan.files import RunReport, Sink, Writer
from benchdb.plan.planning import PlanItem, build_plan, load_backend
from benchdb.plan.prestart import isolated_modules, mark_root
from benchdb.plan.resume import Resume, write_plan
from benchdb.schema import contract, identity
from benchdb.text import redact_config


class Interrupted(BenchdbError):
    """Ctrl-C during a run: every scenario finished before it is kept in its file."""

    exit_code = 130

    def __init__(self, report: RunReport, total: int):
        self.report = report
        self.total = total
        super().__init__(f"interrupted: kept {len(report.files)} of {total} scenario file(s) in {report.out_dir}")


def _servers_ready(items: list[PlanItem]) -> None:
    """Wait until every fork server the plan uses has finished importing: nothing imports while
    something measures."""
    # the summary's engine, imported now beside the servers' imports rather than after the last scenario
    import duckdb  # noqa: F401

    from benchdb.harness import isolation

    isolation.ready(isolated_modules(i.opts for i in items))


def run(opts: RunOptions, *, progress: Callable[[Outcome, int, int], None] | None = None) -> RunReport:
    """Measure every scenario of ``opts`` and write its files under ``opts.out/<run_id>/``."""
    return run_plan(build_plan([opts]), config=recorded_config(opts), out=opts.out, tags=opts.tags, progress=progress)


def run_plan(
    items: list[PlanItem],
    *,
    config: dict,
    out,
    tags=(),
    progress: Callable[[Outcome, int, int], None] | None = None,
    seed: int | None = None,
    resume: Resume | None = None,
    workers: list | None = None,
) -> RunReport:
    """Measure every planned scenario and write one file per scenario under ``out/<run_id>/``.

    Scenarios of entries with ``repeats`` K > 1 are measured in K separate processes, in K rounds:
    each round measures every such model in a new child, models and their scenarios in a freshly
    shuffled order (randomised multiple interleaved trials), so slow drifts of the machine spread
    over all of them; a scenario's file is written when its last process ends. ``seed`` fixes that
    order (recorded in the run).
    """
    total = sum(len(i.scenarios) for i in items)
    if total == 0:
        raise BenchdbError("the plan has no scenarios; give at least one --model and batch size")
    _check_repeats(items)
    mark_root()
    started = datetime.now(timezone.utc)
    run_id = contract.new_run_id()
    if resume is not None:
        run_id, started, seed = resume.run_id, datetime.fromisoformat(resume.started_at), resume.seed
    software = _software(items)
    repeated = [i for i in items if i.opts.repeats > 1]
    if repeated:
        seed = seed if seed is not None else random.SystemRandom().randrange(2**31)
        config = {**config, "interleave_seed": seed}
    run_meta = {
        "run_id": run_id,
        "started_at": started.isoformat(),
        "host": hardware.host(),
        "benchdb_version": __version__,
        "git_commit": hardware.git_commit(),
        "software": software,
        "config": redact_config(config),
        "tags": list(tags),
    }
    writer = Writer(run_meta, Sink(str(out), run_id))
    if resume is None and not writer.sink.remote:
        write_plan(writer.sink.local, {**run_meta, "config": config}, seed, items)  # as given: --resume runs it
    counter = _Counter(progress, sum(len(i.scenarios) * i.opts.repeats for i in items))
    _servers_ready(items)
    if workers:
        try:
            _measure_parallel(items, workers, random.Random(seed), writer, counter)
        except KeyboardInterrupt:
            raise Interrupted(writer.report, total) from None
        return writer.report
    try:
        for item in items:
            if item.opts.repeats > 1:
                continue
            for outcome in _outcomes(item, item.scenarios):
                writer.write(outcome, item.opts)
                counter.tick(outcome)
        _measure_interleaved(repeated, random.Random(seed), writer, counter)
    except KeyboardInterrupt:
        raise Interrupted(writer.report, total) from None
    return writer.report


def _check_repeats(items: list[PlanItem]) -> None:
    for item in items:
        if item.opts.repeats < 1:
            raise BenchdbError(f"repeats must be at least 1, found {item.opts.repeats}")
        if item.opts.repeats > 1 and not item.opts.isolate:
            raise BenchdbError("--repeats needs separate processes; drop --no-isolation (isolate: false)")


def _software(items: list[PlanItem]) -> dict[str, object]:
    """The run's software record: Python, benchdb and each planned backend's own versions."""
    software: dict[str, object] = {"python": platform.python_version(), "benchdb": __version__}
    for name in dict.fromkeys(i.opts.backend for i in items):
        software[name] = load_backend(name).software()
    return software


class _Counter:
    """Outcomes measured so far, each reported to ``progress`` as (outcome, done, units)."""

    def __init__(self, progress: Callable[[Outcome, int, int], None] | None, units: int):
        self.progress, self.units, self.done = progress, units, 0

    def tick(self, outcome: Outcome) -> None:
        self.done += 1
        if self.progress:
            self.progress(outcome, self.done, self.units)


def _rounds(items: list[PlanItem], rng: random.Random) -> Iterator[tuple[int, int, list[int]]]:
    """(item, round, its scenarios in order) of the items with repeats K > 1: K rounds, each a new
    child per item, items and their scenarios in a fresh random order (randomised multiple
    interleaved trials)."""
    for r in range(max((i.opts.repeats for i in items if i.opts.repeats > 1), default=0)):
        order = [ii for ii, item in enumerate(items) if item.opts.repeats > 1 and item.opts.repeats > r]
        rng.shuffle(order)
        for ii in order:
            picks = list(range(len(items[ii].scenarios)))
            rng.shuffle(picks)
            yield ii, r, picks


class _Repeats:
    """The processes of scenarios measured in several: a scenario's file is written when its last
    process ends."""

    def __init__(self, writer: Writer):
        self.writer = writer
        self.pending: dict[tuple[int, int], list[Outcome]] = {}

    def add(self, key: tuple[int, int], item: PlanItem, outcome: Outcome) -> None:
        got = self.pending.setdefault(key, [])
        got.append(outcome)
        if len(got) == item.opts.repeats:
            self.writer.write(merge_repeats(self.pending.pop(key)), item.opts)


def _measure_interleaved(repeated: list[PlanItem], rng: random.Random, writer: Writer, counter: _Counter) -> None:
    """Measure the items with repeats K > 1 in K rounds (:func:`_rounds`)."""
    repeats = _Repeats(writer)
    for ii, _r, picks in _rounds(repeated, rng):
        item = repeated[ii]
        # _outcomes yields exactly one outcome per scenario, whatever happens to the child
        for si, outcome in zip(picks, _outcomes(item, [item.scenarios[si] for si in picks]), strict=True):
            repeats.add((ii, si), item, outcome)
            counter.tick(outcome)


def _measure_parallel(
    items: list[PlanItem], workers: list, rng: random.Random, writer: Writer, counter: _Counter
) -> None:
    """Every item on parallel workers (:mod:`benchdb.plan.parallel`): single-process items whole,
    repeated ones round by round in the serial run's interleaved order."""
    from benchdb.plan import parallel

    def label(item: PlanItem) -> str:
        return f"{item.scenarios[0].model_id} {item.opts.backend}/{item.opts.device}"

    units = [
        parallel.Unit(ii, 0, list(range(len(item.scenarios))), label(item))
        for ii, item in enumerate(items)
        if item.opts.repeats == 1
    ]
    units += [
        parallel.Unit(ii, r, picks, f"{label(items[ii])} (process {r + 1})") for ii, r, picks in _rounds(items, rng)
    ]
    repeats = _Repeats(writer)

    def done(unit, outcomes: list[Outcome], record: dict) -> None:
        item = items[unit.item]
        for si, outcome in zip(unit.scenarios, outcomes, strict=True):
            outcome = replace(outcome, extra={**outcome.extra, "placement": record})
            counter.tick(outcome)
            if item.opts.repeats == 1:
                writer.write(outcome, item.opts)
            else:
                repeats.add((unit.item, si), item, outcome)

    parallel.measure(items, units, workers, _outcomes, done)


def _outcomes(item: PlanItem, scenarios: list[Scenario], placement=None) -> list[Outcome]:
    """Measure scenarios of one model: in a child process (with timeouts) unless isolation is off;
    ``placement``: a parallel worker's cores and device."""
    backend = load_backend(item.opts.backend)
    if item.opts.isolate:
        return list(
            run_isolated(
                registry.info(item.opts.backend).implementation,
                item.model,
                scenarios,
                item.opts,
                backend.model_info(item.model),
                placement,
            )
        )
    with frozen_heap():
        return list(backend.run_model(item.model, scenarios, item.opts))


def _clip(text: str, n: int = 110) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def summary_rows(report: RunReport) -> list[dict]:
    """Per scenario: label, status, median and p90 of its primary metric (a serving point's: TTFT), throughput."""
    stats = Stats()
    try:
        by_id, measured_tp = {}, {}
        primary = {identity.scenario_id(report.run_id, o.scenario.key()): o.primary_metric for o in report.outcomes}
        if report.tables:
            for row in stats.compute(pa.concat_tables(report.tables)):
                sid = row["scenario_id"]
                if row["metric"] == primary.get(sid, "latency_s"):
                    by_id[sid] = row
                elif row["metric"] in ("throughput_items_s", "request_throughput"):  # measured, not 1/latency
                    measured_tp[sid] = row["median"]
    finally:
        stats.close()
    out = []
    for o in report.outcomes:
        sid = identity.scenario_id(report.run_id, o.scenario.key())
        st = by_id.get(sid, {})
        med = st.get("median")
        items_per_s = measured_tp.get(sid) or (o.scenario.batch_size / med if med else None)
        out.append(
            {
                "scenario": o.scenario.label(),
                "status": o.status if o.status != "ok" else o.validity,
                "median_ms": med * 1e3 if med else None,
                "p90_ms": st["p90"] * 1e3 if st.get("p90") else None,
                "items_per_s": items_per_s,
                "n": st.get("n", 0),
                "note": _clip(o.error or "; ".join(o.validity_reasons) or ""),
            }
        )
    return out

"""`benchdb run` as calls of the Python API: some runs (:func:`benchdb.plan.config.runs_from`) planned,
the series measured recently left out, and measured, on parallel workers or not; an interrupted
run finished. Each returns what was planned and measured; what a person reads goes to ``note``
(the command line's standard error) as it happens.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchdb.errors import BenchdbError
from benchdb.harness.scenario import Outcome, RunOptions
from benchdb.plan.files import RunReport
from benchdb.plan.planning import PlanItem
from benchdb.plan.resume import Resume
from benchdb.text import plural

Progress = Callable[[Outcome, int, int], None]
Note = Callable[[str], None]


def _quiet(text: str) -> None:
    pass


@dataclass
class Measured:
    """What a run planned (``items``) and, unless a dry run or nothing was left, measured (``report``)."""

    items: list[PlanItem] = field(default_factory=list)
    report: RunReport | None = None
    #: A resumed run: the plan it recorded.
    resumed: Resume | None = None


def workers(runs: list[RunOptions], n: str, flag: str = "--parallel", note: Note = _quiet):
    """The workers of ``--parallel N`` (``flag`` names it in errors), said to ``note``, and the runs with
    each worker's thread count where none was given (:func:`benchdb.plan.parallel.workers_for`)."""
    from benchdb.plan import parallel

    if any(not o.isolate for o in runs):
        raise BenchdbError("--parallel measures in separate processes; drop --no-isolation")
    found, runs = parallel.workers_for(runs, n, flag)
    note(f"parallel: {plural(len(found), 'worker')}: " + "; ".join(w.label() for w in found))
    return found, runs


def run(
    runs: list[RunOptions],
    exclude: Sequence[dict] = (),
    source: str = "python",
    *,
    shard: str | None = None,
    skip_fresh: str | None = None,
    db: Any = None,
    dry_run: bool = False,
    workers: list | None = None,
    progress: Progress | None = None,
    note: Note = _quiet,
) -> Measured:
    """Plan ``runs`` (minus the ``exclude`` rules; slice ``shard`` "i/n"; without the series measured
    on this hardware within ``skip_fresh``, a duration, by warehouse ``db``) and measure the plan
    (on ``workers``, from :func:`workers`), one contract file per scenario under the runs' ``out``:
    the Python API of `benchdb run`. ``dry_run`` plans only (:func:`plan_total` counts it).
    ``source`` is recorded as where the runs came from."""
    from benchdb.backends.core_options import recorded_config
    from benchdb.plan import config as cfgmod
    from benchdb.plan.planning import build_plan
    from benchdb.plan.prestart import prestart

    cut = cfgmod.parse_shard(shard) if shard else None
    if not dry_run:
        prestart(runs)
    items = build_plan(
        runs,
        exclude=list(exclude),
        shard=cut,
        unmatched=lambda rule: note(
            f"warning: exclude rule {rule} matches no scenario of the plan; check its keys and values"
        ),
    )
    if skip_fresh:
        skipped = _skip_fresh(items, skip_fresh, db)
        items = [i for i in items if i.scenarios]
        note(f"skipped {skipped} scenario(s) with a valid result newer than {skip_fresh}")
    if dry_run or not items:
        return Measured(items)
    config: dict[str, Any] = {
        "source": source,
        "runs": [recorded_config(o) for o in runs],
        "exclude": list(exclude),
        "shard": shard,
        "skip_fresh": skip_fresh,
    }
    if workers:
        config["parallel"] = [w.record() for w in workers]
    report = measure(items, config, runs[0].out, runs[0].tags, db, workers=workers, progress=progress)
    return Measured(items, report)


def from_options(
    values: Mapping[str, Any], given: Collection[str] = (), *, progress: Progress | None = None, note: Note = _quiet
) -> Measured:
    """`benchdb run`'s options as one call: the runs they describe (:func:`benchdb.plan.config.runs_from`:
    ``values`` by parameter name, ``given`` naming those set on purpose), the combinations checked, the
    ``parallel`` workers found, and :func:`run`. An A/B (``ab``, ``ab_url``) is
    :func:`benchdb.ab.compare.from_options`."""
    from benchdb.plan.config import check_combinations, runs_from

    runs, exclude, source = runs_from(values, given)
    check_combinations(values)
    if values.get("ab") or values.get("ab_url"):
        raise BenchdbError("an A/B measures two sides: benchdb.ab.compare.from_options takes these options")
    if values.get("ab_env") or values.get("ab_env_public"):
        raise BenchdbError("--ab-env sets a variable for one side of --ab BASE CAND; give --ab too")
    if values.get("ab_max_trials"):
        raise BenchdbError("--ab-max-trials extends the trials of --ab BASE CAND; give --ab too")
    found = None
    if values.get("parallel"):
        found, runs = workers(runs, values["parallel"], "--parallel", note)
    return run(
        runs,
        exclude,
        source,
        shard=values.get("shard"),
        skip_fresh=values.get("skip_fresh"),
        db=values.get("db"),
        dry_run=bool(values.get("dry_run")),
        workers=found,
        progress=progress,
        note=note,
    )


def resume(
    folder: str | Path, *, out: str = "results", db: Any = None, progress: Progress | None = None, note: Note = _quiet
) -> Measured:
    """Finish an interrupted run: measure the scenarios of the plan it recorded in ``folder`` (its
    RESULTS_DIR/RUN_ID, or a RUN_ID under ``out``) that have no file yet, into the same run; the
    Python API of `benchdb run --resume`. Nothing left: no report."""
    from benchdb.plan.prestart import prestart
    from benchdb.plan.resume import resume_plan

    folder = Path(folder)
    if not folder.is_dir() and len(folder.parts) == 1 and (Path(out) / folder).is_dir():
        folder = Path(out) / folder  # a run id: the run's folder under --out
    plan = resume_plan(folder)
    left = sum(len(i.scenarios) for i in plan.items)
    if not left:
        return Measured(plan.items, resumed=plan)
    note(
        f"resuming run {plan.run_id}: {left} of {plural(plan.planned, 'planned scenario')} left "
        f"({plan.done} measured before)"
    )
    runs = [i.opts for i in plan.items]
    found = None
    co_runners = max((o.co_runners or 0 for o in runs), default=0)
    if co_runners:  # a --parallel run goes on in parallel: its scenarios' identity says so
        found, _ = workers(runs, str(co_runners + 1), f"--resume of a --parallel {co_runners + 1} run", note)
    prestart(runs)
    report = measure(plan.items, plan.config, plan.folder.parent, plan.tags, db, plan, found, progress)
    return Measured(plan.items, report, resumed=plan)


def measure(items, config, out, tags, db, resume=None, workers=None, progress=None) -> RunReport:
    """Run the plan; after Ctrl-C, an error (exit 130) that names the command finishing it."""
    from benchdb.plan.driver import Interrupted, run_plan

    try:
        return run_plan(items, config=config, out=out, tags=tags, progress=progress, resume=resume, workers=workers)
    except Interrupted as stop:
        raise BenchdbError(f"{stop}; resume with: {resume_command(stop.report.out_dir, db)}", exit_code=130) from None


def check_succeeded(report: RunReport) -> None:
    """Refuse (exit 3) a run in which no scenario succeeded, counting each status."""
    if any(o.status == "ok" for o in report.outcomes):
        return
    from collections import Counter

    why = ", ".join(f"{n} {status}" for status, n in Counter(o.status for o in report.outcomes).most_common())
    raise BenchdbError(
        f"no scenario succeeded ({why}); the files record each error: ingest them to keep "
        "the record, and see the note column above",
        exit_code=3,
    )


def resume_command(out_dir, db) -> str:
    """The commands that finish an interrupted run (exactly its missing scenarios), then ingest it."""
    from benchdb.warehouse import resolve_db

    folder = shlex.quote(str(out_dir))
    if "://" in str(out_dir):  # a remote --out records no plan: ingest what was kept
        return f"benchdb ingest {folder} --db {shlex.quote(str(resolve_db(db)))}"
    return f"benchdb run --resume {folder} && benchdb ingest {folder} --db {shlex.quote(str(resolve_db(db)))}"


def _skip_fresh(items: list[PlanItem], duration: str, db) -> int:
    from datetime import datetime, timedelta, timezone

    from benchdb import parsing
    from benchdb.plan.planning import skip_series
    from benchdb.warehouse import READ_WAIT_S, Warehouse

    if not db:
        raise BenchdbError("--skip-fresh needs --db FILE (the warehouse that holds earlier results)")
    since = datetime.now(timezone.utc).replace(tzinfo=None) - timedelta(seconds=parsing.duration(duration))
    return skip_series(items, Warehouse(db, wait_s=READ_WAIT_S).fresh_series(since))


def plan_total(items: list[PlanItem], db=None) -> str:
    """How many scenarios a plan holds and, given warehouse ``db``, about how long they take to
    measure (from the series' history): a dry run's last line."""
    from benchdb.plan.planning import estimate_seconds
    from benchdb.warehouse import READ_WAIT_S, Warehouse

    total = sum(len(i.scenarios) for i in items)
    if not db:
        return plural(total, "scenario")
    seconds, known = estimate_seconds(items, Warehouse(db, wait_s=READ_WAIT_S).measured_seconds())
    return f"{plural(total, 'scenario')}, about {seconds / 60:.1f} min ({known} estimated from history)"

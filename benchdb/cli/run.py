"""Measuring: `benchdb run` (its flags are built in :mod:`benchdb.cli.run_flags`).

Runners, backends and the warehouse are imported inside the commands, so `benchdb --help` stays
light (no torch, onnxruntime, openvino or duckdb).
"""

from __future__ import annotations

from pathlib import Path

import click

from benchdb import parsing
from benchdb.cli.help import command
from benchdb.cli.run_flags import ab_stop_options, run_options, with_run_options
from benchdb.cli.shared_options import READ_WAIT_S, Quantity, db_option, plural, progress_printer
from benchdb.errors import BenchdbError

#: --skip-fresh: a duration checked now and kept as written (it is echoed and recorded as given).
AS_WRITTEN = Quantity(lambda v: (parsing.duration(v), str(v))[1], "DURATION")


@command(
    "run",
    examples=(
        (
            "a matrix product at two batch sizes (numpy: no ML library needed)",
            "benchdb run --backend numpy --model matmul:256 --batch-size 1,8",
        ),
        (
            "a tiny BERT (random weights, no download), eager and compiled",
            "benchdb run --backend pytorch --model tiny:bert --mode eager,compile",
        ),
        (
            "A/B two environments' interpreters on the same scenarios (prints the check command)",
            "benchdb run --ab a/bin/python b/bin/python --backend numpy --model matmul:256",
        ),
    ),
    exit_codes={
        0: "at least one scenario succeeded (failed, unsupported or timed-out ones are recorded in their "
        "files, so `benchdb run ... && benchdb ingest ...` keeps working for partial failures)",
        3: "no scenario succeeded (every file records why)",
        130: "interrupted (Ctrl-C): the finished scenarios' files are kept, and the line printed says how to resume",
    },
)
@click.option(
    "--ab",
    nargs=2,
    default=None,
    metavar="BASE CAND",
    help="A/B gate: measure every scenario with two Python interpreters (e.g. the main branch's and "
    "the PR's venv) in interleaved trials (--repeats, default 5); prints the check command.",
)
@click.option(
    "--ab-url",
    "ab_url",
    nargs=2,
    default=None,
    metavar="BASE_URL CAND_URL",
    help="A/B of two serving deployments (--backend openai): measure every load point against both "
    "endpoints in interleaved trials (--repeats, default 5), each with its hardware "
    "(--ab-hardware-file); prints the check command.",
)
@click.option(
    "--ab-hardware-file",
    "ab_hardware_file",
    nargs=2,
    default=None,
    metavar="BASE CAND",
    help="With --ab-url: each endpoint's hardware file (YAML/JSON system and how the server uses it).",
)
@click.option(
    "--ab-env",
    "ab_env",
    multiple=True,
    metavar="SIDE:NAME=VALUE",
    help="Environment variable for one --ab side (repeatable): base:NAME=VALUE or cand:NAME=VALUE. "
    "The run records its value hashed (it may be a token) unless --ab-env-public NAME.",
)
@click.option(
    "--ab-env-public",
    "ab_env_public",
    multiple=True,
    metavar="NAME",
    help="Record this --ab-env variable's value as given in the run's config (repeatable).",
)
@ab_stop_options(max_trials=0)
@click.option(
    "--duet",
    is_flag=True,
    help="With --ab: run the two sides' processes at the same time on two disjoint, equivalent core "
    "sets (or two GPUs), swapping sets between trials, so machine-wide noise hits both alike.",
)
@click.option(
    "--parallel",
    default=None,
    metavar="auto|N",
    help="Measure N models at once on workers that share no core or device: whole physical cores "
    "each (threads = its cores), or one GPU each. auto: one worker per NUMA node, or as many "
    "--threads T workers as fit; one per GPU.",
)
@click.option(
    "--config",
    "config_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="YAML or JSON file describing the runs; command-line options override it.",
)
@click.option("--suite", default=None, help="A predefined suite (see `benchdb suites`).")
@click.option("--dry-run", is_flag=True, help="Print the scenario plan and stop.")
@click.option("--shard", default=None, help="Run only slice i of n of the plan, e.g. 2/4.")
@click.option(
    "--skip-fresh",
    default=None,
    type=AS_WRITTEN,
    help="Skip scenarios with a valid result on this hardware newer than this (30m, 12h, 7d); needs --db.",
)
@click.option(
    "--resume",
    "resume_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    metavar="RUN_DIR",
    help="Finish an interrupted run: measure the scenarios of its plan that have no "
    "file in RUN_DIR (RESULTS_DIR/RUN_ID, or a RUN_ID under --out) yet, into the "
    "same run; no other plan options.",
)
@db_option(help="Warehouse for --skip-fresh and the --dry-run time estimate.")
@click.option(
    "--bench",
    "benches",
    multiple=True,
    metavar="PATH",
    help="Your own bench_* functions (repeatable): a .py file, a folder of bench_*.py files, or "
    "FILE::FUNCTION. Implies --backend userbench; replaces --model (docs: guides/user-benches.md).",
)
def run(**params):
    """Measure models on this machine (one file per scenario).

    Give --backend and --model (or --config FILE, --suite NAME or --bench PATH); --dry-run
    prints the plan. Options marked [backend] apply to that backend's runs only.
    """
    from benchdb.plan import config as cfgmod

    ctx = click.get_current_context()
    if params["resume_dir"] is not None:
        return _resume(ctx, params)
    runs, exclude, source = run_options(ctx, params)
    if params["parallel"] is not None and (
        params["parallel"] != "auto" and not params["parallel"].isdigit() or params["parallel"] == "0"
    ):
        raise BenchdbError(f"--parallel {params['parallel']}: give auto or a number of workers (1 or more)")
    if params["ab"] and params["ab_url"]:
        raise BenchdbError(
            "give --ab BASE CAND (two interpreters) or --ab-url BASE_URL CAND_URL (two endpoints), not both"
        )
    if params["ab_hardware_file"] and not params["ab_url"]:
        raise BenchdbError("--ab-hardware-file gives the hardware of the two --ab-url endpoints; give --ab-url too")
    if params["ab_url"] and params["duet"]:
        raise BenchdbError("--duet runs two interpreters' processes at once; --ab-url alternates two endpoints")
    if params["ab"] or params["ab_url"]:
        from benchdb.cli import ab

        if params["parallel"]:
            raise BenchdbError(
                "--parallel runs one side's scenarios at once; for --ab use --duet (both sides "
                "at once on mirrored cores)"
            )
        return ab.cli(ctx, params, runs, exclude, source)
    if params["duet"]:
        raise BenchdbError("--duet runs the two sides of --ab BASE CAND at the same time; give --ab too")
    workers = None
    if params["parallel"]:
        workers, runs = _workers(runs, params["parallel"], "--parallel")
    if params["ab_env"] or params.get("ab_env_public"):
        raise BenchdbError("--ab-env sets a variable for one side of --ab BASE CAND; give --ab too")
    if params["ab_max_trials"]:
        raise BenchdbError("--ab-max-trials extends the trials of --ab BASE CAND; give --ab too")
    shard = cfgmod.parse_shard(params["shard"]) if params["shard"] else None
    if not params["dry_run"]:
        from benchdb.plan.prestart import prestart

        prestart(runs)
    return _plan_and_run(params, runs, exclude, source, shard, workers)


def _workers(runs, n: str, flag: str):
    """The workers of --parallel N (``flag`` names it in errors), said on stderr, and the runs with
    each worker's thread count where none was given (:func:`benchdb.plan.parallel.workers_for`)."""
    from benchdb.plan import parallel

    if any(not o.isolate for o in runs):
        raise BenchdbError("--parallel measures in separate processes; drop --no-isolation")
    workers, runs = parallel.workers_for(runs, n, flag)
    click.echo(f"parallel: {plural(len(workers), 'worker')}: " + "; ".join(w.label() for w in workers), err=True)
    return workers, runs


def _plan_and_run(params, runs, exclude, source, shard, workers=None):
    from benchdb.backends.core_options import recorded_config
    from benchdb.plan.planning import build_plan

    items = build_plan(
        runs,
        exclude=exclude,
        shard=shard,
        unmatched=lambda rule: click.echo(
            f"warning: exclude rule {rule} matches no scenario of the plan; check its keys and values", err=True
        ),
    )
    if params["skip_fresh"]:
        skipped = _skip_fresh(items, params["skip_fresh"], params["db"])
        items = [i for i in items if i.scenarios]
        click.echo(f"skipped {skipped} scenario(s) with a valid result newer than {params['skip_fresh']}", err=True)
    if params["dry_run"]:
        _print_plan(items, params["db"])
        return
    if not items:
        click.echo("0 scenarios to run")
        return

    config = {
        "source": source,
        "runs": [recorded_config(o) for o in runs],
        "exclude": exclude,
        "shard": params["shard"],
        "skip_fresh": params["skip_fresh"],
    }
    if workers:
        config["parallel"] = [w.record() for w in workers]
    _measure(items, config, runs[0].out, runs[0].tags, params["db"], workers=workers)


def _measure(items, config, out, tags, db, resume=None, workers=None) -> None:
    """Run the plan, print what each scenario gave, and say how to resume after Ctrl-C."""
    from benchdb.plan.driver import Interrupted, run_plan, summary_rows
    from benchdb.reports.tabular import run_summary

    try:
        report = run_plan(
            items, config=config, out=out, tags=tags, progress=progress_printer(), resume=resume, workers=workers
        )
    except Interrupted as stop:
        raise BenchdbError(f"{stop}; resume with: {_resume_command(stop.report.out_dir, db)}", exit_code=130) from None
    click.echo(run_summary(summary_rows(report)))
    click.echo(f"run {report.run_id}: {plural(len(report.files), 'file')} in {report.out_dir}")
    ok = sum(o.status == "ok" for o in report.outcomes)
    if ok == 0:
        from collections import Counter

        why = ", ".join(f"{n} {status}" for status, n in Counter(o.status for o in report.outcomes).most_common())
        raise BenchdbError(
            f"no scenario succeeded ({why}); the files record each error: ingest them to keep "
            "the record, and see the note column above",
            exit_code=3,
        )


def _resume_command(out_dir, db) -> str:
    """The commands that finish an interrupted run (exactly its missing scenarios), then ingest it."""
    import shlex

    from benchdb.warehouse import resolve_db

    folder = shlex.quote(str(out_dir))
    if "://" in str(out_dir):  # a remote --out records no plan: ingest what was kept
        return f"benchdb ingest {folder} --db {shlex.quote(str(resolve_db(db)))}"
    return f"benchdb run --resume {folder} && benchdb ingest {folder} --db {shlex.quote(str(resolve_db(db)))}"


def _resume(ctx, params) -> None:
    from click.core import ParameterSource

    from benchdb.plan.prestart import prestart
    from benchdb.plan.resume import resume_plan

    plan_options = {
        "backend",
        "models",
        "benches",
        "config_file",
        "suite",
        "ab",
        "ab_url",
        "ab_hardware_file",
        "ab_env",
        "ab_env_public",
        "ab_max_trials",
        "shard",
        "skip_fresh",
        "dry_run",
        "repeats",
        "parallel",
        "duet",
    }
    given = sorted(k for k in plan_options if ctx.get_parameter_source(k) == ParameterSource.COMMANDLINE)
    if given:
        raise BenchdbError(
            f"--resume finishes the plan the interrupted run recorded; leave out "
            f"{', '.join('--' + k.replace('_', '-') for k in given)}"
        )
    folder = params["resume_dir"]
    if not folder.is_dir() and len(folder.parts) == 1 and (Path(params["out"]) / folder).is_dir():
        folder = Path(params["out"]) / folder  # a run id: the run's folder under --out
    resume = resume_plan(folder)
    left = sum(len(i.scenarios) for i in resume.items)
    if not left:
        click.echo(
            f"nothing left to measure: all {plural(resume.planned, 'planned scenario')} of run "
            f"{resume.run_id} have their files in {resume.folder}"
        )
        return
    click.echo(
        f"resuming run {resume.run_id}: {left} of {plural(resume.planned, 'planned scenario')} left "
        f"({resume.done} measured before)",
        err=True,
    )
    runs = [i.opts for i in resume.items]
    workers = None
    co_runners = max((o.co_runners or 0 for o in runs), default=0)
    if co_runners:  # a --parallel run goes on in parallel: its scenarios' identity says so
        workers, _ = _workers(runs, str(co_runners + 1), f"--resume of a --parallel {co_runners + 1} run")
    prestart(runs)
    _measure(resume.items, resume.config, resume.folder.parent, resume.tags, params["db"], resume, workers=workers)


def _skip_fresh(items, duration: str, db) -> int:
    from datetime import datetime, timedelta, timezone

    from benchdb.plan.planning import skip_series
    from benchdb.warehouse import Warehouse

    if not db:
        raise BenchdbError("--skip-fresh needs --db FILE (the warehouse that holds earlier results)")
    since = datetime.now(timezone.utc).replace(tzinfo=None) - timedelta(seconds=parsing.duration(duration))
    return skip_series(items, Warehouse(db, wait_s=READ_WAIT_S).fresh_series(since))


def _print_plan(items, db) -> None:
    from benchdb.plan.planning import estimate_seconds
    from benchdb.warehouse import Warehouse

    for item in items:
        for sc in item.scenarios:
            click.echo(sc.label())
    total = sum(len(i.scenarios) for i in items)
    if db:
        seconds, known = estimate_seconds(items, Warehouse(db, wait_s=READ_WAIT_S).measured_seconds())
        click.echo(f"{plural(total, 'scenario')}, about {seconds / 60:.1f} min ({known} estimated from history)")
    else:
        click.echo(plural(total, "scenario"))


COMMANDS = (with_run_options(run),)

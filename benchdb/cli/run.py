"""Measuring: `benchdb run` (its flags are built in :mod:`benchdb.cli.run_flags`). Each form is one call
of the library: :func:`benchdb.plan.measure.from_options`, an A/B :func:`benchdb.ab.compare.from_options`,
a resumed run :func:`benchdb.plan.measure.resume`.

Runners, backends and the warehouse are imported inside the commands, so `benchdb --help` stays
light (no torch, onnxruntime, openvino or duckdb).
"""

from __future__ import annotations

from pathlib import Path

import click

from benchdb import parsing
from benchdb.cli.help import command
from benchdb.cli.run_flags import ab_stop_options, with_run_options
from benchdb.cli.shared_options import Quantity, db_option, given, plural, progress_printer
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
    from benchdb.plan import measure

    ctx = click.get_current_context()
    if params["resume_dir"] is not None:
        return _resume(ctx, params)
    if params["ab"] or params["ab_url"]:
        return _ab(params, given(ctx))
    done = measure.from_options(params, given(ctx), progress=progress_printer(), note=_note)
    if params["dry_run"]:
        for item in done.items:
            for sc in item.scenarios:
                click.echo(sc.label())
        click.echo(measure.plan_total(done.items, params["db"]))
    elif done.report is None:
        click.echo("0 scenarios to run")
    else:
        _print_run(done.report)


def _ab(params: dict, given_: set) -> None:
    """`benchdb run ... --ab BASE CAND` (or --ab-url BASE_URL CAND_URL): plan, measure both sides, print
    the check command."""
    from benchdb.ab.compare import from_options
    from benchdb.reports.tabular import AB_SUMMARY, for_people

    done = from_options(params, given_, note=_note)
    if params["dry_run"]:
        for line in done.plan_lines():
            click.echo(line)
        return
    click.echo(for_people(AB_SUMMARY, done.rows))
    for line in done.side_lines():
        click.echo(line)
    done.check_succeeded()
    click.echo(f"check with: {done.check}")


def _note(text: str) -> None:
    click.echo(text, err=True)


def _print_run(report) -> None:
    """What each scenario gave, where its files are; exit 3 when none succeeded."""
    from benchdb.plan.driver import summary_rows
    from benchdb.plan.measure import check_succeeded
    from benchdb.reports.tabular import run_summary

    click.echo(run_summary(summary_rows(report)))
    click.echo(f"run {report.run_id}: {plural(len(report.files), 'file')} in {report.out_dir}")
    check_succeeded(report)


#: Options of a plan: --resume measures the plan the interrupted run recorded, and takes none.
PLAN_OPTIONS = (
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
)


def _resume(ctx, params) -> None:
    from benchdb.plan import measure

    refused = sorted(set(PLAN_OPTIONS) & given(ctx))
    if refused:
        raise BenchdbError(
            f"--resume finishes the plan the interrupted run recorded; leave out "
            f"{', '.join('--' + k.replace('_', '-') for k in refused)}"
        )
    done = measure.resume(
        params["resume_dir"], out=params["out"], db=params["db"], progress=progress_printer(), note=_note
    )
    if done.report is not None:
        _print_run(done.report)
        return
    plan = done.resumed
    assert plan is not None  # resume() always says which plan it read
    click.echo(
        f"nothing left to measure: all {plural(plan.planned, 'planned scenario')} of run "
        f"{plan.run_id} have their files in {plan.folder}"
    )


COMMANDS = (with_run_options(run),)

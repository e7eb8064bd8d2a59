"""`benchdb bisect`: find the commit that made a benchmark slower (one call of
:func:`benchdb.bisect.find.culprit`; its answer written by :mod:`benchdb.bisect.answer`)."""

from __future__ import annotations

import os
from pathlib import Path

import click

from benchdb.cli.help import command
from benchdb.cli.run_flags import ab_stop_options, with_run_options
from benchdb.cli.shared_options import Formats, append_summary, db_option, given
from benchdb.errors import BenchdbError


@command(
    "bisect",
    examples=(
        (
            "the commit after v0.1.0 up to HEAD that made a matrix product slower",
            "benchdb bisect --good v0.1.0 --bad HEAD --backend numpy --model matmul:256",
        ),
        (
            "the commits and scenario of a change point (an id from `benchdb report --regressions`)",
            "benchdb bisect 3f2a9c1e --db team.duckdb",
        ),
        (
            "your own bench functions, each commit measuring its own copy of the file",
            "benchdb bisect --good main~20 --bad main --bench benches/bench_tokenize.py",
        ),
    ),
    exit_codes={
        0: "culprit found",
        1: "no regression between good and bad",
        3: "stopped by noise or failures (the answer names the range it could not narrow)",
    },
)
@click.argument("change_id", required=False)
@click.option("--good", default=None, metavar="REV", help="A commit whose speed is fine.")
@click.option("--bad", default=None, metavar="REV", help="A later commit that is slower.")
@click.option(
    "--repo",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("."),
    show_default=True,
    help="The git repository to bisect.",
)
@click.option(
    "--setup",
    default=None,
    metavar="CMD",
    help="Shell command that makes a commit's environment, run in its worktree: it makes the folder "
    "$BENCHDB_ENV (also {env} in CMD) with a Python that has benchdb at $BENCHDB_ENV/bin/python. "
    "Default: a venv seeing this Python's packages, plus `pip install --no-deps .`. Cached per "
    "commit and command.",
)
@ab_stop_options(max_trials=15)
@click.option(
    "--config",
    "config_file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="YAML or JSON file describing the runs (relative: read from each commit's checkout).",
)
@click.option(
    "--bench",
    "benches",
    multiple=True,
    metavar="PATH",
    help="Your own bench_* functions (relative: each commit runs its own copy).",
)
@click.option(
    "--format",
    "fmt",
    type=Formats(["table", "md", "json"], old={"text": "table"}),
    default="table",
    show_default=True,
    help="table: the answer for a terminal; md: the same as Markdown.",
)
@click.option("--github-summary", is_flag=True, help="Also append the Markdown answer to $GITHUB_STEP_SUMMARY.")
@db_option(help="Warehouse holding CHANGE_ID.")
def bisect(**params):
    """Find the commit that made the scenarios slower.

    Between --good and --bad (or the commits and scenario of change point CHANGE_ID), each step an
    interleaved A/B of two commits' environments. The run options below are those of `benchdb
    run` that apply to it.
    """
    from benchdb.bisect import answer
    from benchdb.bisect.find import culprit

    ctx = click.get_current_context()
    if params["github_summary"] and not os.environ.get("GITHUB_STEP_SUMMARY"):
        raise BenchdbError(
            "--github-summary: $GITHUB_STEP_SUMMARY is not set (it is set inside GitHub Actions "
            "jobs); leave it out, or use --format md"
        )
    result = culprit(
        params,
        given(ctx),
        repo=params["repo"],
        good=params["good"],
        bad=params["bad"],
        change_id=params["change_id"],
        db=params["db"],
        setup=params["setup"],
        max_trials=params["ab_max_trials"],
        threshold=params["ab_threshold"],
        note=lambda text: click.echo(text, err=True),
    )
    click.echo({"table": answer.text, "md": answer.markdown, "json": answer.as_json}[params["fmt"]](result))
    if params["github_summary"]:
        append_summary(answer.markdown(result) + "\n")
    ctx.exit(result.exit_code)


#: Run options that do not apply to a bisect: it measures each step as an interleaved A/B of two
#: commits' interpreters on this machine, always timing (not --verify-only), never beside other
#: measurements (--co-runners), and not a serving endpoint (the openai backend's options).
LEFT_OUT = ("co_runners", "verify_only")
CHANGED: dict[str, dict[str, object]] = {
    "backend": {
        "help": "Required unless --config, --bench or CHANGE_ID: numpy, pytorch, onnxruntime, openvino, "
        "or an installed plug-in's name (`benchdb hardware` lists them)."
    },
    "repeats": {
        "default": 5,
        "help": "Trials per step: each commit's side measured in K processes, interleaved "
        "(then more while the verdict is open, up to --ab-max-trials).",
    },
}

COMMANDS = (with_run_options(bisect, leave_out=LEFT_OUT, backends_left_out=("openai",), changed=CHANGED),)

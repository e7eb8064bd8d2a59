"""`benchdb bisect`: find the commit that made a benchmark slower (:mod:`benchdb.bisect.search`)."""

from __future__ import annotations

import json
import os
import shlex
import tempfile
from pathlib import Path

import click

from benchdb.cli.help import command
from benchdb.cli.run_flags import ab_stop_options, run_options, with_run_options
from benchdb.cli.shared_options import READ_WAIT_S, Formats, append_summary, db_option
from benchdb.errors import BenchdbError
from benchdb.parsing import percent_text


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
    from click.core import ParameterSource

    from benchdb.bisect import search as b

    ctx = click.get_current_context()
    if params["github_summary"] and not os.environ.get("GITHUB_STEP_SUMMARY"):
        raise BenchdbError(
            "--github-summary: $GITHUB_STEP_SUMMARY is not set (it is set inside GitHub Actions "
            "jobs); leave it out, or use --format md"
        )
    params["suite"] = None
    params["filled"] = set()  # run options a change point gave
    repo = params["repo"].resolve()
    if params["change_id"]:
        if params["good"] or params["bad"]:
            raise BenchdbError("give CHANGE_ID or --good/--bad, not both: a change point names both commits")
        good_rev, bad_rev = _from_change_point(ctx, params, repo)
    else:
        if not params["good"] or not params["bad"]:
            raise BenchdbError("give --good REV and --bad REV (or a CHANGE_ID from `benchdb report --regressions`)")
        good_rev, bad_rev = params["good"], params["bad"]
    good, bad = b.resolve(repo, good_rev, "--good"), b.resolve(repo, bad_rev, "--bad")
    commits = b.between(repo, good, bad)
    if ctx.get_parameter_source("repeats") != ParameterSource.COMMANDLINE and params["repeats"] <= 1:
        params["repeats"] = 5
    runs_for = _runs_for(ctx, params)
    runs_for(repo)  # the options are checked once, before any setup
    bisect_id = b.new_id()
    out = Path(params["out"]) / f"bisect-{bisect_id}"

    def log(text: str) -> None:
        click.echo(text, err=True)

    result = b.Bisection(bisect_id, str(repo), good, bad, out=str(out))
    log(
        f"bisect {bisect_id}: {len(commits) - 1} commits after {good.short} up to {bad.short}, "
        f"{params['repeats']}-{max(params['ab_max_trials'], params['repeats'])} trials a step"
    )
    with tempfile.TemporaryDirectory(prefix="benchdb-bisect-") as work:
        checkouts = b.Checkouts(repo, params["setup"], Path(work), log)
        measurer = b.Measurer(
            checkouts,
            runs_for,
            out=out,
            tags=[*params["tags"], f"bisect-{bisect_id}"],
            max_trials=params["ab_max_trials"],
            threshold=params["ab_threshold"],
            log=log,
        )
        try:
            b.search(commits, measurer, result, on_step=lambda s: log(_step_line(s)))
        finally:
            measurer.close()
            checkouts.close()
    result.reproduce = _reproduce(ctx, params, result)
    text = {"table": _text, "md": _markdown, "json": _json}[params["fmt"]](result)
    click.echo(text)
    if params["github_summary"]:
        append_summary(_markdown(result) + "\n")
    ctx.exit(result.exit_code)


def _runs_for(ctx, params):
    """The scenarios as each commit's checkout gives them: relative bench and config paths inside it."""

    def runs_for(root: Path):
        p = dict(params)
        p["benches"] = tuple(_inside(root, s) for s in params["benches"])
        if params["config_file"] is not None:
            p["config_file"] = Path(_inside(root, str(params["config_file"])))
        runs, _exclude, _source = run_options(ctx, p)
        return runs

    return runs_for


def _inside(root: Path, spec: str) -> str:
    return spec if os.path.isabs(spec) else str(root / spec)


def _from_change_point(ctx, params, repo: Path) -> tuple[str, str]:
    """(good, bad) commits of change point ``CHANGE_ID``; its scenario fills the run options not given."""
    from benchdb.bisect import change_point

    cp = change_point.find(params["db"], params["change_id"], wait_s=READ_WAIT_S)
    explicit = {k for k in params if ctx.get_parameter_source(k) == click.core.ParameterSource.COMMANDLINE}
    if not explicit & {"backend", "models", "benches", "config_file"}:
        for k, v in change_point.run_options(cp, repo).items():
            if k not in explicit and v is not None:
                params[k] = v
                if k not in ("backend", "models", "benches"):
                    params["filled"].add(k)
    click.echo(
        f"change point {cp['change_id'][:12]} ({cp['model_id']} {cp['backend']}/{cp['device']}, "
        f"{cp['change']:+.1%}): good {cp['good_commit'][:10]}, bad {cp['bad_commit'][:10]}",
        err=True,
    )
    return cp["good_commit"].removesuffix("-dirty"), cp["bad_commit"].removesuffix("-dirty")


def _reproduce(ctx, params, r) -> str:
    """The command that measures the final comparison again: a bisect of exactly those two commits."""
    pair = None
    if r.culprit is not None:
        before = next((s.base for s in reversed(r.steps) if s.tested.sha == r.culprit.sha), None)
        pair = (before, r.culprit) if before is not None else None
    elif r.steps:
        pair = (r.steps[-1].base, r.steps[-1].tested)
    if pair is None or pair[0] is None:
        return ""
    args = ["benchdb", "bisect", "--repo", r.repo, "--good", pair[0].sha[:12], "--bad", pair[1].sha[:12]]
    if params["setup"]:
        args += ["--setup", params["setup"]]
    if params["benches"]:
        for bench in params["benches"]:
            args += ["--bench", bench]
    elif params["config_file"]:
        args += ["--config", str(params["config_file"])]
    else:
        args += ["--backend", params["backend"]]
        for model in params["models"]:  # --model takes one spec; it repeats
            args += ["--model", model]
    args += _run_flags(ctx, params)
    args += [
        "--repeats",
        str(params["repeats"]),
        "--ab-max-trials",
        str(params["ab_max_trials"]),
        "--ab-threshold",
        percent_text(params["ab_threshold"]),
    ]
    return " ".join(shlex.quote(str(a)) for a in args)


def _run_flags(ctx, params) -> list[str]:
    """The run options given on the command line (or taken from a change point), as flags again."""
    from click.core import ParameterSource

    from benchdb.backends import core_options as options

    out: list[str] = []
    for opt, _owners in options.every():
        if opt.param in ("backend", "models", "out", "tags", "repeats"):
            continue
        value = params.get(opt.param)
        given = ctx.get_parameter_source(opt.param) == ParameterSource.COMMANDLINE or opt.param in params["filled"]
        if not given or value is None:
            continue
        out += options.argument(opt, (not value) if opt.negate else value)  # a negated flag's param is the flag
    return out


def _pct(x) -> str:
    return "n/a" if x is None else f"{x:+.1%}"


def _step_line(s) -> str:
    ci = f" [{_pct(s.ci_low)}, {_pct(s.ci_high)}]" if s.ci_low is not None else ""
    note = f"; {s.note}" if s.note else ""
    return f"step {s.number}: {s.tested.short} against {s.base.short}: {s.verdict} {_pct(s.change)}{ci}{note}"


def _text(r) -> str:
    lines = [f"bisect {r.bisect_id} of {r.repo}: {r.good.short}..{r.bad.short}"]
    lines += [_step_line(s) for s in r.steps]
    for c, why in r.skipped:
        lines.append(f"skipped {c.short} {c.subject}: {why}")
    lines.append(r.message)
    if r.culprit:
        lines.append(f"culprit: {r.culprit.sha} {r.culprit.subject} ({r.culprit.date})")
    if r.reproduce:
        lines.append(f"reproduce: {r.reproduce}")
    lines.append(f"measurements: benchdb ingest {shlex.quote(r.out)} (tag bisect-{r.bisect_id})")
    return "\n".join(lines)


def _markdown(r) -> str:
    head = {
        "culprit": f"First slow commit: `{r.culprit.short}` {r.culprit.subject}" if r.culprit else "",
        "no_regression": "No regression between the good and the bad commit",
        "stopped": "Bisect stopped",
    }[r.status]
    out = [
        f"### benchdb bisect {r.bisect_id}: {head}",
        "",
        r.message,
        "",
        "| step | tested | against | verdict | change | 95 % CI | note |",
        "|---|---|---|---|---|---|---|",
    ]
    for s in r.steps:
        ci = f"[{_pct(s.ci_low)}, {_pct(s.ci_high)}]" if s.ci_low is not None else ""
        out.append(
            f"| {s.number} | `{s.tested.short}` {s.tested.subject} | `{s.base.short}` | {s.verdict} | "
            f"{_pct(s.change)} | {ci} | {s.note.replace('|', '/')} |"
        )
    if r.skipped:
        out += ["", "Skipped: " + "; ".join(f"`{c.short}` ({why})" for c, why in r.skipped)]
    if r.reproduce:
        out += ["", "Reproduce the final comparison:", "", f"```\n{r.reproduce}\n```"]
    return "\n".join(out)


def _json(r) -> str:
    return json.dumps(r.as_dict(), indent=2)


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

"""Getting started: `benchdb suites`, `quickstart` and `hardware`."""

from __future__ import annotations

import json
from pathlib import Path

import click

from benchdb.cli.help import INTERRUPTED, command
from benchdb.cli.shared_options import Formats, db_option, progress_printer


@command(
    "suites",
    examples=(
        ("list them", "benchdb suites"),
        ("the scenarios of one, without measuring", "benchdb run --suite smoke --dry-run"),
    ),
)
def suites():
    """The predefined suites (for `benchdb run --suite NAME`)."""
    from benchdb.plan import config as cfgmod

    for name in cfgmod.suite_names():
        cfg = cfgmod.load_suite(name)
        backends = ", ".join(dict.fromkeys(o.backend for o in cfg.runs))
        click.echo(f"{name:<16} {cfg.description} [{backends}]")


@command(
    "quickstart",
    examples=(
        ("measure, ingest and report (about a minute on 2 cores)", "benchdb quickstart"),
        (
            "one process per model: faster, but no winner can be confirmed",
            "benchdb quickstart --repeats 1 --report quick.html",
        ),
        ("only the CPU backends that need no export", "benchdb quickstart --backend numpy --backend pytorch"),
    ),
    exit_codes=INTERRUPTED,
)
@db_option()
@click.option("--out", default="results", show_default=True, help="Folder for the measurement files.")
@click.option(
    "--report",
    "report_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=Path("report.html"),
    show_default=True,
    help="Where to write the HTML report.",
)
@click.option(
    "--repeats",
    type=click.IntRange(min=1),
    default=3,
    show_default=True,
    help="Processes per scenario, interleaved (each with 1/K of the suite's time); 1: one process "
    "per model, and no winner can be confirmed.",
)
@click.option(
    "--backend",
    "backends",
    multiple=True,
    metavar="NAME",
    help="Only this backend of the smoke suite (repeatable; default: every installed one).",
)
def quickstart(db, out, report_path, repeats, backends):
    """Measure, ingest and report the smoke suite on this machine.

    Every installed backend runs the smoke suite; the results are ingested into the warehouse and
    an HTML report is written."""
    from benchdb import quickstart as qs
    from benchdb.warehouse import Warehouse

    path = Warehouse(db).path
    result = qs.run(
        str(path),
        out,
        report_path,
        progress=progress_printer(),
        note=lambda text: click.echo(text, err=True),
        repeats=repeats,
        backends=backends,
    )
    click.echo(result.ingest_line)
    click.echo(result.optimal_markdown)
    if result.left_out:
        click.echo("not compared in the answer, and why:")
        for line in result.left_out:
            click.echo(f"  {line}")
    click.echo(f"report: {result.report_path.resolve()} (open it in a browser)")
    click.echo(next_steps(path))


def next_steps(path) -> str:
    """quickstart's last lines: the warehouse, and two commands that read it, runnable as printed."""
    import shlex

    db = shlex.quote(str(path))
    query = shlex.quote("SELECT model_id, backend, batch_size, median FROM results")
    return f"warehouse: {path}; next:\n  benchdb report --matrix --db {db}\n  benchdb query {query} --db {db}"


@command(
    "hardware",
    examples=(
        ("what this machine has", "benchdb hardware"),
        ("the same for scripts", "benchdb hardware --format json"),
        ("this machine as a hardware file (--hardware-file of run --url and import)", "benchdb hardware --format yaml"),
    ),
)
@click.option(
    "--format",
    "fmt",
    type=Formats(["table", "json", "yaml"], old={"text": "table"}),
    default="table",
    show_default=True,
    help="json: machine-readable; yaml: this machine as a system, in the form of a "
    "hardware file (--hardware-file of run --url and import).",
)
@click.option("--json", "as_json", is_flag=True, hidden=True, help="Same as --format json (kept for scripts).")
def hardware_cmd(fmt, as_json):
    """This machine's CPU, memory, devices and backends.

    With the installed backends' and libraries' versions, and how --parallel would split it."""
    from benchdb.harness import machine_report as machine

    if fmt == "yaml" and not as_json:
        click.echo(machine.as_hardware_file())
        return
    from benchdb.backends import registry

    rep = machine.report(registry.backends().values())
    if as_json or fmt == "json":
        click.echo(json.dumps(rep, indent=1, default=str))
        return
    click.echo(machine.as_text(rep))


COMMANDS = (suites, quickstart, hardware_cmd)

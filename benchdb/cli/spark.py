"""Other engines: `benchdb sql --dialect spark` (the views and report queries, translated).

Commands import their library modules inside the command body: `benchdb --help` stays light.
"""

from __future__ import annotations

import sys

import click

from benchdb.cli.help import command


@command(
    "sql",
    examples=(("every view and report query in Spark SQL", "benchdb sql --dialect spark"),),
    exit_codes={1: "a view has no faithful form in that dialect: left out and named on standard error"},
)
@click.option(
    "--dialect",
    type=click.Choice(["spark"]),
    required=True,
    help="Print benchdb's views and every report query in this SQL dialect.",
)
def sql_cmd(dialect):
    """Print the views and report queries in another SQL dialect.

    Translated from benchdb's DuckDB SQL (macros inlined), generated from the same .sql files
    DuckDB runs. A view with no faithful Spark form is left out and named on standard error."""
    from benchdb.spark import translate

    skipped: list = []
    click.echo(translate.script(skipped), nl=False)
    for view, why in skipped:
        click.echo(f"benchdb: error: view {view} not translated: {why}", err=True)
    if skipped:
        sys.exit(1)


COMMANDS: list = [sql_cmd]

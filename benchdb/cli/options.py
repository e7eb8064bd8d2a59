"""Options, parsers and output helpers shared by the commands (each declared once).

Only click and the standard library at import time: `benchdb --help` stays light.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from benchdb.errors import BenchdbError
from benchdb.text import plural  # noqa: F401  (the command modules take it from here)

DB_HELP = "DuckDB warehouse file (default: $BENCHDB_DB, else ./benchdb.duckdb)."

#: seconds a reading command waits for a writer that holds the warehouse
READ_WAIT_S = 10.0


def db_option(help: str = DB_HELP):
    """``--db FILE`` (the parameter is ``db``)."""
    return click.option("--db", "db", default=None, help=help)


# --------------------------------------------------------------------------- parsers
def csv_ints(ctx, param, value):
    if value is None:
        return None
    parts = [v.strip() for v in str(value).split(",")]
    if any(not v for v in parts):
        raise click.BadParameter(f"{value!r} has an empty item; write positive integers separated by "
                                 "single commas, e.g. 1,4,8")
    try:
        out = tuple(int(v) for v in parts)
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a comma-separated list of integers, e.g. 1,4,8") from None
    if not out or any(v < 1 for v in out):
        raise click.BadParameter(f"{value!r}: give positive integers, e.g. 1,4,8")
    return out


def csv_words(ctx, param, value):
    if value is None:
        return None
    parts = [v.strip() for v in str(value).split(",")]
    if any(not v for v in parts):
        raise click.BadParameter(f"{value!r} has an empty item; separate values with single commas")
    return tuple(parts)


def fraction(ctx, param, value):
    text = str(value).strip()
    try:
        v = float(text[:-1]) / 100.0 if text.endswith("%") else float(text)
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a threshold like 5% or 0.05") from None
    if not 0 <= v < 10:
        raise click.BadParameter(f"{value!r} is out of range")
    return v


# --------------------------------------------------------------------------- output
def write_atomic(path: Path, text: str) -> None:
    if path.parent and not path.parent.exists():
        raise BenchdbError(f"folder {path.parent} does not exist; create it or choose another --out")
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def append_summary(text: str) -> None:
    """Append to the GitHub Actions job summary ($GITHUB_STEP_SUMMARY)."""
    target = os.environ.get("GITHUB_STEP_SUMMARY")
    if not target:
        raise BenchdbError("--github-summary: $GITHUB_STEP_SUMMARY is not set (it is set inside GitHub Actions jobs)")
    with open(target, "a", encoding="utf-8") as fh:
        fh.write(text)


def progress_printer():
    """A progress bar over scenarios on a terminal; one line per scenario in logs and pipes."""
    tty = sys.stderr.isatty()

    def progress(outcome, done, total):
        state = outcome.status if outcome.status != "ok" else outcome.validity
        if tty:
            width = 30
            filled = width * done // total
            line = f"[{'#' * filled}{'.' * (width - filled)}] {done}/{total} {outcome.scenario.label()}: {state}"
            click.echo("\r\033[K" + line[:200], err=True, nl=done == total)
        else:
            click.echo(f"[{done}/{total}] {outcome.scenario.label()}: {state}", err=True)

    return progress

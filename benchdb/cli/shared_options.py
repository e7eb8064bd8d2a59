"""Options, parsers and output helpers shared by the commands (each declared once).

Only click and the standard library at import time: `benchdb --help` stays light.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from pathlib import Path

import click

from benchdb import parsing as quantity
from benchdb import paths
from benchdb.errors import BenchdbError
from benchdb.text import plural  # noqa: F401  (the command modules take it from here)

DB_HELP = "DuckDB warehouse file (default: $BENCHDB_DB, else ./benchdb.duckdb)."


def given(ctx: click.Context) -> set[str]:
    """The parameters the command line set (not a default or the environment)."""
    from click.core import ParameterSource

    return {k for k in ctx.params if ctx.get_parameter_source(k) == ParameterSource.COMMANDLINE}


def db_option(help: str = DB_HELP):
    """``--db FILE`` (the parameter is ``db``)."""
    return click.option("--db", "db", default=None, help=help)


# --------------------------------------------------------------------------- parsers
def csv_ints(ctx, param, value):
    if value is None:
        return None
    parts = [v.strip() for v in str(value).split(",")]
    if any(not v for v in parts):
        raise click.BadParameter(
            f"{value!r} has an empty item; write positive integers separated by single commas, e.g. 1,4,8"
        )
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


class Quantity(click.ParamType):
    """A share, duration or size option (:mod:`benchdb.parsing`): ``parse`` turns its text into
    the number the command takes. A bad value is one line naming the option and the forms to write
    (a BenchdbError, as every other bad option value: exit 2, no usage text)."""

    name = "quantity"

    def __init__(self, parse: Callable[[str], float | str], metavar: str):
        self.parse, self.metavar = parse, metavar

    def get_metavar(self, param, ctx=None) -> str:
        return self.metavar

    def convert(self, value, param, ctx):
        if isinstance(value, float):  # already converted: click may convert a value twice
            return value
        try:
            return self.parse(value)
        except quantity.QuantityError as exc:
            raise BenchdbError(f"{param.opts[0] if param is not None else 'value'} {exc}") from None


def share_type(minimum: float = 0.0, maximum: float = 1.0) -> Quantity:
    """``5%`` or ``0.05`` as the fraction 0.05 (bounds are fractions)."""
    return Quantity(lambda v: quantity.share(v, minimum=minimum, maximum=maximum), "PCT")


def duration_type(bare: str = "s", minimum: float = 0.0, unit: str | None = None) -> Quantity:
    """``500ms``, ``2s``, ``12h`` as a number of ``unit`` (default ``bare``); a bare number is in ``bare``
    (seconds; ms only for an old ``...-ms`` name)."""
    scale = quantity.duration(1, bare=unit or bare)
    return Quantity(lambda v: quantity.duration(v, bare=bare, minimum=minimum) / scale, "DURATION")


def size_type(unit: str = "B", minimum: float = 0.0, bare: str | None = None) -> Quantity:
    """``512MiB``, ``2GB`` as a number of ``unit`` (``minimum`` in bytes); a bare number is refused
    ("did you mean 512MiB?"), or read in ``bare`` (MiB only for an old ``...-mb`` name)."""
    scale = quantity.size(1, bare=unit)
    return Quantity(lambda v: quantity.size(v, bare=bare, minimum=minimum) / scale, "SIZE")


#: The forms --format names (docs/reference/option-rules.md): ``table`` is what a terminal shows.
FORMATS = ("table", "md", "json", "csv", "html")


class Formats(click.Choice):
    """A --format choice that still reads old values (``text``: now ``table``) without listing them."""

    def __init__(self, choices, old: dict[str, str] | None = None):
        super().__init__(choices)
        self.old = old or {}

    def convert(self, value, param, ctx):
        return super().convert(self.old.get(value, value), param, ctx)


class Normalisations(click.Choice):
    """--per's choices: the normalisations the SQL defines (reports.optimal.normalisations), read when
    first asked for, so that a command that never shows or checks them opens no DuckDB."""

    def __init__(self) -> None:
        super().__init__(())

    @property
    def choices(self) -> tuple[str, ...]:
        from benchdb.reports.optimal import normalisations

        return tuple(n.name for n in normalisations())

    @choices.setter
    def choices(self, _given) -> None:
        pass  # click.Choice sets them; they are read from the SQL instead


class Renamed(click.Option):
    """An option renamed by the option rules (docs/reference/option-rules.md): its later names are
    the old spellings, still read (scripts keep working) but not shown in the help."""

    def get_help_record(self, ctx):
        shown, self.opts = self.opts, self.opts[:1]
        try:
            return super().get_help_record(ctx)
        finally:
            self.opts = shown


def old_name(flag: str, new_flag: str, param: str, type: click.ParamType):
    """A hidden option under an old name (``flag``) whose value goes to ``param``, the parameter of
    ``new_flag``: for a rename that changes how a bare number is read (``--max-memory-mb 512`` is
    MiB, ``--max-memory 512`` is refused), so the two cannot be one option. Both given: refused."""
    hidden = "renamed_" + flag.lstrip("-").replace("-", "_")

    def decorate(f):
        @functools.wraps(f)
        def command(*args, **kwargs):
            value = kwargs.pop(hidden)
            if value is not None:
                from click.core import ParameterSource

                if click.get_current_context().get_parameter_source(param) == ParameterSource.COMMANDLINE:
                    raise BenchdbError(f"give {new_flag} (or its old name {flag}), not both")
                kwargs[param] = value
            return f(*args, **kwargs)

        return click.option(flag, hidden, type=type, default=None, hidden=True, help=f"Old name of {new_flag}.")(
            command
        )

    return decorate


#: ``--threshold`` and ``--ab-threshold``: the smallest change that matters (up to 1000 %).
THRESHOLD = share_type(maximum=10.0)
THRESHOLD_HELP = f" Write {quantity.SHARE_FORMS} (a bare 5 is refused: 5% or 500%?)."


# --------------------------------------------------------------------------- output
def write_atomic(path: Path, text: str) -> None:
    if path.parent and not path.parent.exists():
        raise BenchdbError(f"folder {path.parent} does not exist; create it or choose another --out")
    paths.write_atomic(path, text)


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

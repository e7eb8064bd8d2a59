"""The `benchdb` command line. Thin: parse options, call the library, print.

Commands live in submodules by theme: :mod:`~benchdb.cli.run` (run; its flags in
:mod:`~benchdb.cli.run_flags`), :mod:`~benchdb.cli.getting_started` (suites,
quickstart, hardware), :mod:`~benchdb.cli.db` (ingest, db status/upgrade, query,
ack), :mod:`~benchdb.cli.report` (report, check), :mod:`~benchdb.cli.interop` (import, export),
:mod:`~benchdb.cli.publish`, :mod:`~benchdb.cli.perfmodel` (calibrate, predict) and
:mod:`~benchdb.cli.spark` (sql), :mod:`~benchdb.cli.web` (serve, site) and
:mod:`~benchdb.cli.bisect`; shared options and output helpers are in :mod:`~benchdb.cli.shared_options`. Everything
done to a warehouse goes through :class:`benchdb.warehouse.Warehouse`.

Runners, ingest, backends and DuckDB are imported inside commands, so `benchdb --help` stays light
(no torch, onnxruntime, openvino or duckdb).
"""

from __future__ import annotations

import sys

import click

from benchdb import __version__
from benchdb.cli.help import INTERRUPTED, Group, UsageLine
from benchdb.errors import BenchdbError, clip, printable, refused_write

#: click >= 8.2 raises this (a UsageError) for a bare group, to print its help: let it through. Older
#: click prints the help itself, and an empty tuple catches nothing.
_NO_ARGS_IS_HELP: type[Exception] | tuple[()] = getattr(click.exceptions, "NoArgsIsHelpError", ())


class _Group(Group):
    """Turns BenchdbError (and a DuckDB error while querying) and click's usage errors into one
    line and an exit code.

    Commands are registered when first looked up: running one imports only its module
    (:data:`WHERE`); --help, completion and an unknown name import them all.
    """

    def make_context(self, info_name, args, parent=None, **extra):
        try:
            return super().make_context(info_name, args, parent, **extra)
        except _NO_ARGS_IS_HELP:
            raise
        except click.UsageError as exc:  # benchdb's own options (--debug): one line too
            raise UsageLine(exc) from None

    def list_commands(self, ctx):
        _register(self)
        return super().list_commands(ctx)

    def get_command(self, ctx, name):
        if name not in self.commands:
            _register(self, [WHERE[name]] if name in WHERE else MODULES)
            if name not in self.commands:
                _register(self)
        return super().get_command(ctx, name)

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except BenchdbError as exc:
            if ctx.obj and ctx.obj.get("debug"):
                raise
            click.echo(f"benchdb: error: {printable(str(exc))}", err=True)
            ctx.exit(exc.exit_code)
        except KeyboardInterrupt:
            _interrupted(ctx)
        except BrokenPipeError:  # `benchdb suites | head -1`: the reader has what it wanted
            import os

            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no error at exit's flush
            ctx.exit(141)  # as a shell reports a process ended by SIGPIPE
        except _NO_ARGS_IS_HELP:
            raise
        except click.UsageError as exc:  # a command's unknown option, bad value, missing argument
            raise UsageLine(exc) from None
        except (click.exceptions.Exit, click.ClickException, click.exceptions.Abort, SystemExit):
            raise
        except Exception as exc:  # a bug, not the user's fault: still one line unless --debug
            if _query_interrupted(exc):
                _interrupted(ctx)
            if ctx.obj and ctx.obj.get("debug"):
                raise
            refused = refused_write(exc)
            if refused is not None:  # a full disk or read-only file system is the machine's, not a bug
                click.echo(
                    f"benchdb: error: a write failed ({printable(refused)}); make room there (or "
                    "choose another place) and run the command again",
                    err=True,
                )
                ctx.exit(BenchdbError.exit_code)
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
            click.echo(
                f"benchdb: internal error: {type(exc).__name__}: {printable(clip(first))} "
                "(run with --debug for the traceback and please report it)",
                err=True,
            )
            ctx.exit(70)


def _interrupted(ctx) -> None:
    click.echo(
        "benchdb: interrupted; nothing half-written was kept (warehouse writes are "
        "published whole), run the command again to finish",
        err=True,
    )
    ctx.exit(130)


def _query_interrupted(exc: Exception) -> bool:
    """Ctrl-C during a DuckDB query: DuckDB stops the query and raises its own error in place of
    KeyboardInterrupt (a RuntimeError "Query interrupted" in duckdb 2.0, InterruptException in
    others). Told by name: this module imports no DuckDB."""
    return type(exc).__name__ == "InterruptException" or (
        isinstance(exc, RuntimeError) and str(exc).strip() == "Query interrupted"
    )


@click.group(
    cls=_Group,
    context_settings={"help_option_names": ["-h", "--help"]},
    examples=(
        ("measure, load and report on this machine (about a minute on 2 cores)", "benchdb quickstart"),
        (
            "measure at two batch sizes (then: benchdb ingest results)",
            "benchdb run --backend numpy --model matmul:256 --batch-size 1,8 --out results",
        ),
        ("which hardware and backend serve each model best", "benchdb report --optimal-hardware"),
    ),
    exit_codes={
        1: 'a command\'s own "no": a regression (check, bisect), nothing to report, a file '
        "rejected (ingest, import); each command's help says when",
        3: "undecided or nothing measured (check, bisect, run)",
        70: "internal error: a bug in benchdb (--debug shows the traceback; please report it)",
        **INTERRUPTED,
        141: "the output's reader stopped reading (benchdb ... | head)",
    },
)
@click.version_option(__version__, prog_name="benchdb")
@click.option("--debug", is_flag=True, help="Show tracebacks instead of one-line errors.")
@click.pass_context
def main(ctx, debug):
    """benchdb: a benchmark data warehouse for ML inference across hardware.

    Runners write raw Parquet measurements (`benchdb run`), `benchdb ingest` loads them into a
    versioned DuckDB file, and `benchdb query` / reports read it. `benchdb COMMAND --help` shows
    a command's options, examples and exit codes.
    """
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug


def entry() -> None:
    """The ``benchdb`` command (``python -m benchdb`` too).

    A command that imported torch, or measured in children (its fork servers hold torch), ends
    without the interpreter's teardown (:func:`benchdb.startup.exit_now`: ~0.75 s saved after
    torch, ~0.1 s after a run whose children held it); any other command ends normally.
    """
    from benchdb import ctrl_c

    ctrl_c.install()
    try:
        main(prog_name="benchdb")
        code: str | int | None = 0
    except SystemExit as exc:
        code = exc.code
    measured = "torch" in sys.modules or "benchdb.harness.isolation" in sys.modules
    # 130 ends the process here too: a Ctrl-C that met C code running Python (DuckDB does) leaves
    # CPython's "unhandled KeyboardInterrupt" mark set, and the teardown would then replace 130
    # with death by SIGINT
    if (measured and (code is None or isinstance(code, int))) or code == 130:
        from benchdb.startup import exit_now

        exit_now(code)
    raise SystemExit(code)


#: The modules under benchdb.cli whose COMMANDS make up the command line.
MODULES = ("run", "getting_started", "db", "report", "interop", "publish", "perfmodel", "spark", "web", "bisect")
#: Where each command lives, so running one imports only its module (start-up time). A command
#: missing here still works: an unknown name imports every module (tests/test_startup.py keeps
#: this table true).
WHERE = {
    "run": "run",
    "suites": "getting_started",
    "quickstart": "getting_started",
    "hardware": "getting_started",
    "ingest": "db",
    "db": "db",
    "query": "db",
    "ack": "db",
    "report": "report",
    "check": "report",
    "import": "interop",
    "export": "interop",
    "publish": "publish",
    "calibrate": "perfmodel",
    "predict": "perfmodel",
    "dashboard": "web",
    "serve": "web",
    "site": "web",
    "bisect": "bisect",
}


def _register(group: click.Group, names=MODULES) -> None:
    import importlib

    for name in names:
        for command in importlib.import_module(f"benchdb.cli.{name}").COMMANDS:
            if command.name not in group.commands:
                group.add_command(command)


__all__ = ["main"]

"""What every command's help is made of, declared once: the command classes whose help ends with
its examples and exit codes, the one-line form of click's usage errors, and "did you mean" for a
mistyped choice.

A command is declared with :func:`command` (or ``@group.command`` of a :class:`Group`) and gives
``examples`` (1-3 invocations that run as written, each with what it does) and ``exit_codes``
(:data:`BAD_INPUT` and the others it uses). tests/cli/test_help.py walks every command and checks
both, and that every example parses.

Only click and the standard library at import time: `benchdb --help` stays light.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import click

from benchdb.errors import closest, did_you_mean

#: Exit 2, which every command uses: one line says what was refused and what to do.
BAD_INPUT = {2: "bad input: an option, value, file or warehouse benchdb refuses (one line says which and what to do)"}
#: Exit 130: Ctrl-C.
INTERRUPTED = {130: "interrupted (Ctrl-C); nothing half-written is kept"}


class Choice(click.Choice):
    """A click choice whose refusal names the closest choice ("did you mean 'md'?")."""

    def get_invalid_choice_message(self, value: Any, ctx: click.Context | None) -> str:
        text = super().get_invalid_choice_message(value, ctx).rstrip(".")
        return text + did_you_mean(str(value), [str(c) for c in self.choices]) + "."


class HelpSections:
    """Examples and exit codes, written after the options (click's epilog place), for a command
    or a group. Plain click choices become :class:`Choice`, so a mistyped value is answered with
    the closest one wherever it is declared."""

    examples: tuple[tuple[str, str], ...]
    exit_codes: dict[int, str]

    def _sections(self, examples: Sequence[tuple[str, str]], exit_codes: Mapping[int, str]) -> None:
        self.examples = tuple(examples)
        self.exit_codes = {0: "success", **BAD_INPUT, **exit_codes}
        for param in getattr(self, "params", ()):
            if type(param.type) is click.Choice:
                param.type = Choice(param.type.choices, case_sensitive=param.type.case_sensitive)

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        super().format_epilog(ctx, formatter)  # type: ignore[misc]
        if self.examples:
            with formatter.section("Examples"):
                for i, (what, line) in enumerate(self.examples):
                    if i:
                        formatter.write("\n")
                    width = max(formatter.width - formatter.current_indent, 40)
                    for part in textwrap.wrap(what, width, initial_indent="# ", subsequent_indent="# "):
                        formatter.write(f"{'':>{formatter.current_indent}}{part}\n")
                    # an example is copied whole: written as is, never rewrapped
                    formatter.write(f"{'':>{formatter.current_indent}}{line}\n")
        with formatter.section("Exit codes"):
            first = max(len(str(code)) for code in self.exit_codes) + 2
            width = max(formatter.width - formatter.current_indent - first, 30)
            for code, text in sorted(self.exit_codes.items()):
                # an option named in the text (--allow-inconclusive) is never split at its hyphens
                lines = textwrap.wrap(text, width, break_on_hyphens=False, break_long_words=False)
                for i, line in enumerate(lines):
                    head = str(code) if i == 0 else ""
                    formatter.write(f"{'':>{formatter.current_indent}}{head:<{first}}{line}\n")


class Command(HelpSections, click.Command):
    """A benchdb command (see the module's docstring)."""

    def __init__(
        self,
        *args: Any,
        examples: Sequence[tuple[str, str]] = (),
        exit_codes: Mapping[int, str] | None = None,
        **kwargs: Any,
    ):
        super().__init__(*args, **kwargs)
        self._sections(examples, exit_codes or {})


class Group(HelpSections, click.Group):
    """A benchdb group of commands; its subcommands are :class:`Command` s."""

    command_class = Command

    def __init__(
        self,
        *args: Any,
        examples: Sequence[tuple[str, str]] = (),
        exit_codes: Mapping[int, str] | None = None,
        **kwargs: Any,
    ):
        super().__init__(*args, **kwargs)
        self._sections(examples, exit_codes or {})


def command(
    name: str, *, examples: Sequence[tuple[str, str]], exit_codes: Mapping[int, str] | None = None, **kwargs: Any
) -> Callable[[Callable[..., Any]], Command]:
    """``@click.command(name)`` as a :class:`Command` with its examples and exit codes."""
    return click.command(name, cls=Command, examples=examples, exit_codes=exit_codes or {}, **kwargs)


def group(
    name: str, *, examples: Sequence[tuple[str, str]], exit_codes: Mapping[int, str] | None = None, **kwargs: Any
) -> Callable[[Callable[..., Any]], Group]:
    """``@click.group(name)`` as a :class:`Group` with its examples and exit codes."""
    return click.group(name, cls=Group, examples=examples, exit_codes=exit_codes or {}, **kwargs)


_SUGGESTION = re.compile(r"\.?\s*\(?Did you mean (?:one of: )?(.+?)\?\)?$")


def usage_line(exc: click.UsageError) -> str:
    """Click's usage error as benchdb's one line: what was refused (with click's "did you mean")
    and the help to read, e.g. ``no such option '--repeat' (did you mean '--repeats'?); see
    `benchdb run --help```."""
    text = " ".join(exc.format_message().split())
    if isinstance(exc, click.NoSuchOption) and exc.ctx is not None:
        # click compares whole flags, so the shared "--" makes '--ep' as close to '--repeat' as
        # '--repeats' is: compare the names, and name the closest one
        flags = {
            o.lstrip("-"): o
            for p in exc.ctx.command.get_params(exc.ctx)
            if isinstance(p, click.Option)
            for o in (*p.opts, *p.secondary_opts)
        }
        name = closest(exc.option_name.lstrip("-"), flags)
        text = f"no such option {exc.option_name!r}" + (f" (did you mean {flags[name]!r}?)" if name else "")
    text = _SUGGESTION.sub(lambda m: f" (did you mean {m.group(1)}?)", text).rstrip(".")
    text = text.replace(". (did you mean", " (did you mean")
    if "did you mean" not in text and exc.ctx is not None:  # click < 8.2 suggests neither of these
        command = re.search(r"[Nn]o such command '([^']*)'", text)
        choice = re.search(r"'([^']*)' is not one of", text)
        options: list[str] = []
        if command and isinstance(exc.ctx.command, click.Group):
            options = list(exc.ctx.command.list_commands(exc.ctx))
        elif (
            choice
            and isinstance(exc, click.BadParameter)
            and exc.param is not None
            and isinstance(exc.param.type, click.Choice)
        ):
            options = [str(c) for c in exc.param.type.choices]
        found = command or choice
        name = closest(found.group(1), options) if found and options else None
        if name:
            text += f" (did you mean {name!r}?)"
    if text[:1].isupper() and text[1:2].islower():  # "Missing option", not "SQL"
        text = text[0].lower() + text[1:]
    path = exc.ctx.command_path if exc.ctx is not None else "benchdb"
    return f"benchdb: error: {text}; see `{path} --help`"


class UsageLine(click.ClickException):
    """A usage error shown as one line (:func:`usage_line`); exit 2 as click's."""

    exit_code = 2

    def __init__(self, exc: click.UsageError):
        super().__init__(usage_line(exc))

    def show(self, file: Any = None) -> None:
        click.echo(self.message, err=True)

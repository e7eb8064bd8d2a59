"""The flags of `benchdb run` (and of `bisect`, which measures like it), built from the declared
run options (:mod:`benchdb.backends.core_options` and each backend's own); the runs they describe
are :func:`benchdb.plan.config.runs_from`'s."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

import click

from benchdb.cli.shared_options import THRESHOLD, THRESHOLD_HELP, Quantity, Renamed, csv_ints, csv_words

AB_MAX_TRIALS_HELP = (
    "Trials of each A/B scenario (--ab, or a bisect step) at most: after the --repeats trials, two "
    "more at a time while its verdict is inconclusive, up to N in all (0: exactly --repeats)."
)
AB_THRESHOLD_HELP = (
    "The smallest change that counts (the gate's threshold): the A/B verdicts --ab-max-trials waits on "
    "and each bisect step are judged by it, and the `benchdb check` printed after --ab gates at it." + THRESHOLD_HELP
)


def ab_stop_options(max_trials: int):
    """``--ab-max-trials`` and ``--ab-threshold``: when an interleaved A/B stops measuring, the same
    options on `benchdb run --ab` and `benchdb bisect` (each of its steps is such an A/B); each
    command gives its own default number of trials."""

    def decorate(command):
        command = click.option(
            "--ab-threshold", "ab_threshold", type=THRESHOLD, default="5%", show_default=True, help=AB_THRESHOLD_HELP
        )(command)
        return click.option(
            "--ab-max-trials",
            "ab_max_trials",
            type=click.IntRange(min=0),
            default=max_trials,
            show_default=True,
            metavar="N",
            help=AB_MAX_TRIALS_HELP,
        )(command)

    return decorate


def _click_option(opt, owners: list[str]) -> click.Option:
    """The `benchdb run` option of a declared run option (benchdb.backends.core_options)."""
    from functools import partial

    from benchdb.backends import core_options as options

    text = (f"[{', '.join(owners)}] " if owners else "") + opt.help
    names = [opt.cli_flag, *opt.old_flags, opt.param]  # old flags: read, not shown
    kw: dict = {"help": text, "metavar": opt.metavar}
    shown = options.default_text(opt)  # a default that differs per backend, in words
    if shown:  # as click writes a default, without its parentheses
        kw["help"] = f"{text}  [default: {shown}]"
    if opt.kind == "bool":
        return Renamed(names, is_flag=True, **kw)
    if opt.repeat:
        kw["metavar"] = opt.metavar or opt.cli_flag[2:].upper().replace("-", "_")
        return Renamed(names, multiple=True, **kw)
    if opt.kind in ("words", "ints"):
        default = ",".join(map(str, opt.default)) if opt.default else None
        kw["metavar"] = (opt.metavar or opt.cli_flag[2:].upper().replace("-", "_")) + ",..."
        return Renamed(
            names,
            default=default,
            show_default=not shown and default is not None,
            callback=csv_ints if opt.kind == "ints" else csv_words,
            **kw,
        )
    if opt.kind in options.QUANTITIES:
        kw["help"] = f"{text} Write {options.QUANTITIES[opt.kind]}."
        kw["metavar"] = opt.metavar or ("DURATION" if opt.kind == "duration" else "PCT")
        return Renamed(
            names,
            type=Quantity(partial(options.quantity_of, opt), kw["metavar"]),
            default=None if opt.default is None else options.quantity_text(opt, opt.default),
            show_default=not shown and opt.default is not None,
            **kw,
        )
    kind = {
        "int": click.IntRange(min=opt.minimum, max=opt.maximum),
        "float": click.FloatRange(min=opt.minimum, max=opt.maximum),
    }.get(opt.kind, click.STRING)
    if opt.kind in ("int", "float") and opt.minimum is None and opt.maximum is None:
        kind = click.INT if opt.kind == "int" else click.FLOAT
    return Renamed(names, type=kind, default=opt.default, show_default=not shown and opt.default is not None, **kw)


def with_run_options(
    command: click.Command,
    *,
    leave_out: Collection[str] = (),
    backends_left_out: Collection[str] = (),
    changed: Mapping[str, Mapping[str, Any]] | None = None,
) -> click.Command:
    """Adds the declared run options, core and backends' own, before the command's other options:
    every one (`benchdb run`), or, for a command that measures otherwise (`bisect`), all but the
    options named in ``leave_out`` and those only ``backends_left_out`` take, with the fields in
    ``changed`` (by option name: its default, its help) its own."""
    from dataclasses import replace

    from benchdb.backends import core_options as options

    changed = changed or {}
    command.params[:0] = [
        _click_option(replace(opt, **changed.get(opt.name, {})), owners)
        for opt, owners in options.every()
        if opt.name not in leave_out and not (owners and set(owners) <= set(backends_left_out))
    ]
    return command

"""`benchdb bisect` as one call of the Python API: the commits (given, or a change point's), the
run options each commit's checkout gives, the search (:mod:`benchdb.bisect.search`), and the
command that measures its final comparison again. What a person reads while it runs goes to
``note`` (the command line's stderr)."""

from __future__ import annotations

import os
import shlex
import tempfile
from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from typing import Any

from benchdb.bisect import search as b
from benchdb.bisect.answer import step_line
from benchdb.errors import BenchdbError

Note = Callable[[str], None]

#: The options that say what to measure: a change point's scenario fills them when none is given.
WHAT = frozenset({"backend", "models", "benches", "config_file"})


def _quiet(text: str) -> None:
    pass


def culprit(
    options: Mapping[str, Any],
    given: Collection[str] = (),
    *,
    repo: str | Path = ".",
    good: str | None = None,
    bad: str | None = None,
    change_id: str | None = None,
    db: Any = None,
    setup: str | None = None,
    max_trials: int = 15,
    threshold: float = 0.05,
    note: Note = _quiet,
) -> b.Bisection:
    """Find the commit between ``good`` and ``bad`` (or the commits and scenario of change point
    ``change_id`` in warehouse ``db``) in git repository ``repo`` that made the scenarios slower,
    each step an interleaved A/B of two commits' environments (made by ``setup``, a shell command;
    default: a venv seeing this Python's packages); the Python API of `benchdb bisect`. ``options``
    are the run options by parameter name, as :func:`benchdb.plan.config.runs_from` takes them
    (relative ``benches`` and ``config_file`` are read in each commit's checkout), ``given`` those
    set on purpose; ``max_trials`` and ``threshold`` bound each step's A/B. The answer's
    ``reproduce`` is the command that measures its final comparison again."""
    values = {**options, "suite": None}
    given = set(given)
    root = Path(repo).resolve()
    filled: set[str] = set()  # run options a change point gave
    if change_id:
        if good or bad:
            raise BenchdbError("give CHANGE_ID or --good/--bad, not both: a change point names both commits")
        good, bad = _from_change_point(values, given, filled, db, change_id, root, note)
    elif not good or not bad:
        raise BenchdbError("give --good REV and --bad REV (or a CHANGE_ID from `benchdb report --regressions`)")
    first, last = b.resolve(root, good, "--good"), b.resolve(root, bad, "--bad")
    commits = b.between(root, first, last)
    if "repeats" not in given and values.get("repeats", 1) <= 1:
        values["repeats"] = 5
    runs_for = _runs_for(values, given)
    runs_for(root)  # the options are checked once, before any setup
    bisect_id = b.new_id()
    out = Path(values.get("out") or "results") / f"bisect-{bisect_id}"
    result = b.Bisection(bisect_id, str(root), first, last, out=str(out))
    note(
        f"bisect {bisect_id}: {len(commits) - 1} commits after {first.short} up to {last.short}, "
        f"{values['repeats']}-{max(max_trials, values['repeats'])} trials a step"
    )
    with tempfile.TemporaryDirectory(prefix="benchdb-bisect-") as work:
        checkouts = b.Checkouts(root, setup, Path(work), note)
        measurer = b.Measurer(
            checkouts,
            runs_for,
            out=out,
            tags=[*values.get("tags", ()), f"bisect-{bisect_id}"],
            max_trials=max_trials,
            threshold=threshold,
            log=note,
        )
        try:
            b.search(commits, measurer, result, on_step=lambda s: note(step_line(s)))
        finally:
            measurer.close()
            checkouts.close()
    flags = _run_flags(values, given | filled)
    result.reproduce = reproduce(result, values, setup=setup, flags=flags, max_trials=max_trials, threshold=threshold)
    return result


def _runs_for(values: Mapping[str, Any], given: Collection[str]):
    """The scenarios as each commit's checkout gives them: relative bench and config paths inside it."""
    from benchdb.plan.config import runs_from

    def runs_for(root: Path):
        p = dict(values)
        p["benches"] = tuple(_inside(root, s) for s in values.get("benches", ()))
        if values.get("config_file") is not None:
            p["config_file"] = Path(_inside(root, str(values["config_file"])))
        runs, _exclude, _source = runs_from(p, given)
        return runs

    return runs_for


def _inside(root: Path, spec: str) -> str:
    return spec if os.path.isabs(spec) else str(root / spec)


def _from_change_point(values, given, filled, db, change_id, repo: Path, note: Note) -> tuple[str, str]:
    """(good, bad) commits of change point ``change_id``; its scenario fills the run options not given."""
    from benchdb.bisect import change_point
    from benchdb.warehouse import READ_WAIT_S

    cp = change_point.find(db, change_id, wait_s=READ_WAIT_S)
    if not given & WHAT:
        for k, v in change_point.run_options(cp, repo).items():
            if k not in given and v is not None:
                values[k] = v
                if k not in ("backend", "models", "benches"):
                    filled.add(k)
    note(
        f"change point {cp['change_id'][:12]} ({cp['model_id']} {cp['backend']}/{cp['device']}, "
        f"{cp['change']:+.1%}): good {cp['good_commit'][:10]}, bad {cp['bad_commit'][:10]}"
    )
    return cp["good_commit"].removesuffix("-dirty"), cp["bad_commit"].removesuffix("-dirty")


def reproduce(
    r: b.Bisection, values: Mapping[str, Any], *, setup: str | None, flags: list[str], max_trials: int, threshold: float
) -> str:
    """The command that measures the final comparison again: a bisect of exactly those two commits."""
    from benchdb.parsing import percent_text

    pair = None
    if r.culprit is not None:
        before = next((s.base for s in reversed(r.steps) if s.tested.sha == r.culprit.sha), None)
        pair = (before, r.culprit) if before is not None else None
    elif r.steps:
        pair = (r.steps[-1].base, r.steps[-1].tested)
    if pair is None or pair[0] is None:
        return ""
    args = ["benchdb", "bisect", "--repo", r.repo, "--good", pair[0].sha[:12], "--bad", pair[1].sha[:12]]
    if setup:
        args += ["--setup", setup]
    if values.get("benches"):
        for bench in values["benches"]:
            args += ["--bench", bench]
    elif values.get("config_file"):
        args += ["--config", str(values["config_file"])]
    else:
        args += ["--backend", values["backend"]]
        for model in values["models"]:  # --model takes one spec; it repeats
            args += ["--model", model]
    args += flags
    args += ["--repeats", str(values["repeats"]), "--ab-max-trials", str(max_trials)]
    args += ["--ab-threshold", percent_text(threshold)]
    return " ".join(shlex.quote(str(a)) for a in args)


def _run_flags(values: Mapping[str, Any], given: Collection[str]) -> list[str]:
    """The run options given (or taken from a change point), as flags again."""
    from benchdb.backends import core_options as options

    out: list[str] = []
    for opt, _owners in options.every():
        if opt.param in ("backend", "models", "out", "tags", "repeats"):
            continue
        value = values.get(opt.param)
        if opt.param not in given or value is None:
            continue
        out += options.argument(opt, (not value) if opt.negate else value)  # a negated flag's param is the flag
    return out

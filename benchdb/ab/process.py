"""One side of an A/B run (:mod:`benchdb.ab.interleaved`): its interpreter, and the processes it runs.

A side is a Python interpreter with benchdb installed (probed once) and environment variables of
its own. A *group* is what one process of a side measures: the scenarios one `benchdb run` command
line selects. This module builds that command line, runs it under a timeout, and reads back the
contract file it wrote (only the stable Parquet contract crosses between benchdb versions).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from benchdb.errors import BenchdbError
from benchdb.harness.isolation import Placement
from benchdb.harness.scenario import Conditions, Outcome, RunOptions, Scenario
from benchdb.plan.planning import load_backend
from benchdb.schema import contract, identity
from benchdb.text import hashed

SIDES = ("base", "cand")
#: Seconds a side's process may take beyond its model's load timeout and its scenarios' timeouts.
SLACK_S = 120.0
_ROW_COLUMNS = ("metric", "unit", "iteration", "t_offset_s", "value")


@dataclass(frozen=True)
class Side:
    name: str  # base | cand
    python: str  # absolute path as given (a venv's python is a symlink: never resolved)
    env: dict[str, str]
    version: str  # what `<python> -m benchdb --version` says
    #: Variables whose values may be recorded as given (--ab-env-public); the others are recorded hashed.
    public: frozenset[str] = frozenset()
    #: The folder its processes run in (`benchdb bisect`: the side's checkout, whose commit they record).
    cwd: str | None = None
    #: Import folders of its interpreter that this one lacks (`benchdb bisect`: the commit's installed
    #: project), put first while this process plans the side's scenarios (a bench file imports it).
    import_path: tuple[str, ...] = ()

    def record(self) -> dict[str, Any]:
        """What the run's config keeps of the side: an --ab-env value (possibly a token) only as a
        hash, unless its name was marked public; the files are published with the config."""
        return {
            "python": self.python,
            "benchdb_version": self.version,
            "env": {k: v if k in self.public else hashed(v) for k, v in self.env.items()},
            **({"cwd": self.cwd} if self.cwd else {}),
        }


@dataclass
class Group:
    """What one process of a side measures: the scenarios one `benchdb run` command line selects.
    One scenario, except a user bench function's parameter combinations, which run together."""

    opts: RunOptions
    model: str
    axes: dict[str, tuple]  # batch_sizes, seq_lens, modes, precisions
    planned: dict[str, list[Scenario]]  # side -> the scenarios as planned in its environment
    #: side -> its own model argument, where the sides' differ (a user bench in each side's checkout)
    models: dict[str, str] | None = None
    #: side -> its own run options, where the sides' differ (--ab-url: each side's endpoint and hardware)
    side_opts: dict[str, RunOptions] | None = None

    @property
    def trials(self) -> int:
        return self.opts.repeats

    def label(self) -> str:
        first, n = self.planned["base"][0], len(self.planned["base"])
        return first.label() if n == 1 else f"{first.model_id} {first.backend}/{first.device} ({n} scenarios)"


# --- sides -----------------------------------------------------------------------------------


def parse_env(values) -> dict[str, dict[str, str]]:
    """``--ab-env`` values (``base:NAME=VALUE`` / ``cand:NAME=VALUE``) -> side -> {NAME: VALUE}."""
    out: dict[str, dict[str, str]] = {s: {} for s in SIDES}
    for text in values or ():
        side, colon, rest = text.partition(":")
        name, eq, value = rest.partition("=")
        if side not in SIDES or not colon or not eq or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            raise BenchdbError(
                f"--ab-env {text!r}: write base:NAME=VALUE or cand:NAME=VALUE (e.g. --ab-env cand:BENCH_SCALE=1.1)"
            )
        out[side][name] = value
    return out


def child_env(side: Side) -> dict[str, str]:
    """This environment plus the side's variables. PYTHONSAFEPATH (Python 3.11+): `python -m benchdb`
    must not import packages from the working directory (a checkout) instead of the side's venv."""
    env = {**os.environ, **side.env}
    env.setdefault("PYTHONSAFEPATH", "1")
    return env


def probe(name: str, python: str, env: dict[str, str], public: frozenset[str] = frozenset()) -> Side:
    """The side's interpreter, checked: it exists, starts, and has benchdb (one-line errors)."""
    path = python if os.sep in python else (shutil.which(python) or python)
    if not os.path.exists(path):
        raise BenchdbError(
            f"--ab {name} interpreter {python} does not exist; give the path of a Python "
            "with benchdb installed, e.g. .venv-main/bin/python"
        )
    if os.path.isdir(path) or not os.access(path, os.X_OK):
        raise BenchdbError(
            f"--ab {name} interpreter {python} is not an executable file; give the path of a "
            "Python with benchdb installed, e.g. .venv-main/bin/python"
        )
    path = os.path.abspath(path)
    side = Side(name, path, dict(env), "", frozenset(public))
    try:
        proc = subprocess.run(
            [path, "-m", "benchdb", "--version"],
            env=child_env(side),
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
        )
    except OSError as exc:
        raise BenchdbError(f"--ab {name} interpreter {python} cannot be started ({exc.strerror or exc})") from None
    except subprocess.TimeoutExpired:
        raise BenchdbError(f"--ab {name} interpreter {python}: `-m benchdb --version` took over 120 s") from None
    if proc.returncode != 0:
        why = last_line(proc.stderr) or f"exit code {proc.returncode}"
        if "No module named" in why and "benchdb" in why:
            raise BenchdbError(
                f"--ab {name} interpreter {python} has no benchdb installed ({why}); "
                f"install it there: {python} -m pip install benchdb"
            )
        raise BenchdbError(f"--ab {name} interpreter {python} cannot run benchdb: {why}")
    m = re.search(r"version\s+(\S+)", proc.stdout)
    return replace(side, version=m.group(1) if m else proc.stdout.strip()[:80])


def last_line(text: str, n: int = 300) -> str:
    """The line of a process's output that says what went wrong: its last ``benchdb:`` error line,
    else its last line, clipped to ``n`` characters ("" for no output)."""
    lines = [ln.strip() for ln in (text or "").splitlines() if ln.strip()]
    if not lines:
        return ""
    errors = [ln for ln in lines if ln.startswith("benchdb: ")]
    line = (errors or lines)[-1]
    return line if len(line) <= n else line[: n - 1] + "…"


def own_import_path(python: str, cwd: str | None = None) -> tuple[str, ...]:
    """The import folders of interpreter ``python`` that this interpreter does not have."""
    import json
    import sys

    proc = subprocess.run(
        [python, "-c", "import json, sys; print(json.dumps(sys.path))"],
        cwd=cwd,
        env={**os.environ, "PYTHONSAFEPATH": "1"},
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    if proc.returncode != 0:
        return ()
    mine = {os.path.realpath(p) for p in sys.path}
    return tuple(p for p in json.loads(proc.stdout) if p and os.path.isdir(p) and os.path.realpath(p) not in mine)


@contextlib.contextmanager
def side_imports(paths: tuple[str, ...]) -> Iterator[None]:
    """Imports first from ``paths`` while planning one side; the modules they gave are forgotten
    afterwards, so the other side's plan imports its own version of them."""
    import importlib
    import sys

    if not paths:
        yield
        return
    saved = list(sys.path)
    before = set(sys.modules)
    sys.path[:0] = list(paths)
    importlib.invalidate_caches()
    roots = tuple(os.path.realpath(p) + os.sep for p in paths)
    try:
        yield
    finally:
        sys.path[:] = saved
        for name in set(sys.modules) - before:
            where = getattr(sys.modules.get(name), "__file__", None) or ""
            if os.path.realpath(where).startswith(roots):
                del sys.modules[name]
        importlib.invalidate_caches()


@contextlib.contextmanager
def side_environ(env: dict[str, str]) -> Iterator[None]:
    """os.environ with the side's variables set (user benches read declared ENV at plan time)."""
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


# --- the plan --------------------------------------------------------------------------------


def child_args(group: Group, out: Path, side: str = "base") -> list[str]:
    """`benchdb run` options that measure exactly the group, once, as this process planned it."""
    from benchdb.backends import core_options as options

    return options.child_args(
        (group.side_opts or {}).get(side, group.opts),
        {
            "models": ((group.models or {}).get(side, group.model),),
            "batch_sizes": group.axes["batch_sizes"],
            "seq_lens": group.axes["seq_lens"],
            "modes": group.axes["modes"],
            "precisions": group.axes["precisions"],
            "repeats": 1,
            "out": str(out),
            "tags": (),
        },
    )


# --- one process -----------------------------------------------------------------------------


@dataclass
class Measured:
    """What one side's process gave for one planned scenario."""

    outcome: Outcome
    meta: dict[str, Any] | None = None  # the contract metadata of its file (None: no file)


def _from_file(path: Path) -> Measured:
    meta = contract.read_footer(path).metadata
    sc = meta["scenario"]
    table = pq.read_table(path, columns=list(_ROW_COLUMNS))
    rows = list(zip(*(table.column(c).to_pylist() for c in _ROW_COLUMNS), strict=True))  # one table's columns
    settings = dict(sc.get("settings") or {})
    busy = settings.pop("background_cpu_pct", None)
    scenario = Scenario(
        sc["model_id"],
        sc["backend"],
        sc["device"],
        sc["mode"],
        sc["precision"],
        sc["batch_size"],
        sc["input_shape"],
        dict(sc.get("options") or {}),
        settings,
    )
    cond = (
        Conditions(sc.get("load_avg_1m"), float(busy), sc["threads"])
        if busy is not None and sc.get("threads")
        else None
    )
    return Measured(
        Outcome(
            scenario,
            meta["model"],
            status=sc["status"],
            error=sc.get("error"),
            rows=rows,
            validity_reasons=list(sc.get("validity_reasons") or []),
            timing_method=sc.get("timing_method") or "host_clock",
            stop_reason=sc.get("stop_reason"),
            conditions=cond,
            started_at=sc.get("started_at"),
            extra=dict(sc.get("extra") or {}),
            primary_metric=sc.get("primary_metric") or "latency_s",
        ),
        meta,
    )


def _failed(sc: Scenario, group: Group, status: str, error: str) -> Measured:
    try:
        model = load_backend(sc.backend).model_info(group.model)
    except Exception:  # the record needs a model; the failure is what matters
        model = {"model_id": sc.model_id}
    return Measured(Outcome(sc, model, status=status, error=error, started_at=datetime.now(timezone.utc).isoformat()))


def _pick(planned: list[Scenario], found: list[Measured]) -> list[Measured | None]:
    """The file of each planned scenario: same key, else the one with the same loose key, else
    the only file of a single-scenario group."""
    out = []
    for sc in planned:
        exact = [m for m in found if full_key(m.outcome.scenario) == full_key(sc)]
        loose = [m for m in found if loose_key(m.outcome.scenario) == loose_key(sc)]
        out.append(
            exact[0]
            if exact
            else loose[0]
            if len(loose) == 1
            else found[0]
            if len(planned) == 1 and len(found) == 1
            else None
        )
    return out


def run_process(side: Side, group: Group, out: Path, placement: Placement | None = None) -> list[Measured]:
    """Run one side's process for a group; one Measured per planned scenario, failures included.
    ``placement`` (duet): the cores the process and its children run on, and its device."""
    planned = group.planned[side.name]
    cmd = [side.python, "-m", "benchdb", *child_args(group, out, side.name)]
    limit = group.opts.load_timeout_s + group.opts.timeout_s * len(planned) + SLACK_S
    status, error = None, None
    env = {**child_env(side), **(placement.env if placement else {})}
    proc = subprocess.Popen(
        cmd,
        env=env,
        cwd=side.cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        start_new_session=True,
    )
    if placement is not None and placement.cpus:
        # before the interpreter has started: every thread and child it makes inherits the set
        with contextlib.suppress(ProcessLookupError):
            os.sched_setaffinity(proc.pid, placement.cpus)
    try:
        _, stderr = proc.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        _kill(proc)
        status, error = "timeout", f"the {side.name} process ran past {limit:.0f} s and was killed"
        stderr = ""
    except BaseException:  # Ctrl-C: take the process (and its measuring child) down too
        _kill(proc)
        raise
    found, broken = [], []
    for path in sorted(out.rglob("*.parquet")):
        try:
            found.append(_from_file(path))
        except (contract.ContractError, OSError, KeyError, TypeError, ValueError) as exc:
            broken.append(f"its file {path.name} is unreadable here ({exc})")
    if error is None and proc.returncode not in (0, 3):
        error = f"the {side.name} process exited with code {proc.returncode}: {last_line(stderr) or 'no message'}"
    elif error is None and broken:
        error = f"the {side.name} process wrote a file this benchdb cannot read: {broken[0]}"
    elif error is None:
        error = f"the {side.name} process wrote no result for this scenario: {last_line(stderr) or 'no message'}"
    return [
        hit or _failed(sc, group, status or "failed", error)
        for sc, hit in zip(planned, _pick(planned, found), strict=True)
    ]  # _pick: one per planned


def _kill(proc: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


# --- the run ---------------------------------------------------------------------------------


def loose_key(sc: Scenario) -> tuple:
    """A scenario's key without precision and options, which an engine may settle only at run time."""
    return (sc.model_id, sc.backend, sc.device, sc.mode, sc.batch_size, sc.input_shape)


def full_key(sc: Scenario) -> tuple:
    return identity.scenario_key_tuple(sc.key())

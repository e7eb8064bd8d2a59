"""Run a model's scenarios in a child process, with a timeout per scenario.

The child loads the model once and measures its scenarios in order, sending each outcome back
through a pipe as soon as it is done. The parent blocks on that pipe (``poll`` with a timeout:
a select, never a busy loop), so it takes no CPU while the child measures. A crash, OOM kill or
hang becomes the status of the scenario in flight; a fresh child then takes the rest.

Children are forked from a server process (multiprocessing's ``forkserver``) that has imported the
backends' libraries once (:func:`prestart`: torch and transformers' model code take ~4 s on a small
machine). Each child is still a process of its own -- its own heap, model, thread pools and
scheduling -- so ``--repeats`` sees process-to-process variance, but it starts in milliseconds
instead of seconds, which is what makes 3 processes per scenario affordable in the quickstart. The
server computes nothing (no thread pool is started before a fork) and idles while a child measures.
Where fork is not available (Windows), children are spawned and import everything themselves.
"""

from __future__ import annotations

import multiprocessing as mp
import signal
import time
import traceback
from datetime import datetime, timezone
from typing import Iterable, Iterator

from benchdb.backends.base import Outcome, RunOptions, Scenario

_START, _DONE, _CRASH = "start", "done", "crash"
_PRELOAD: set[str] = set()


def _die_with_parent() -> None:
    """Linux: have the kernel kill this child if its parent dies (e.g. SIGKILL of the run; a forked
    child's parent is the fork server, which ends with the run)."""
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGKILL)   # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _child(module: str, model: str, scenarios: list[Scenario], opts: RunOptions, conn,
           environ: dict[str, str] | None = None) -> None:
    import importlib
    import os

    _die_with_parent()
    if environ is not None:        # a forked child has the fork server's environment: take the parent's now
        os.environ.clear()
        os.environ.update(environ)
    try:
        backend = importlib.import_module(module)
        gen = backend.run_model(model, scenarios, opts, on_start=lambda i: conn.send((_START, i)))
        for outcome in gen:
            conn.send((_DONE, outcome))
    except BaseException as exc:  # report, then exit non-zero
        conn.send((_CRASH, f"{type(exc).__name__}: {exc}".strip() + "\n" + traceback.format_exc(limit=3)))
        raise SystemExit(1)
    finally:
        conn.close()


def _context():
    return mp.get_context("forkserver" if "forkserver" in mp.get_all_start_methods() else "spawn")


def preload_modules(module: str) -> list[str]:
    """What the fork server imports for a backend module: the module itself and the names in its
    optional ``PRELOAD`` (its libraries and the model code it loads with)."""
    import importlib

    try:
        backend = importlib.import_module(module)
    except Exception:      # noqa: BLE001  an unknown or broken backend: planning says so
        return []
    return [module, *getattr(backend, "PRELOAD", ())]


def prestart(modules: str | Iterable[str]) -> None:
    """Start the fork server now, importing what the children of these backend modules need, so
    that its imports overlap the parent's planning. Only the first call before the server starts
    decides what it imports; a module it lacks is imported by each child itself."""
    names = [modules] if isinstance(modules, str) else list(modules)
    ctx = _context()
    if ctx.get_start_method() != "forkserver":
        return
    from multiprocessing import forkserver

    wanted = [m for name in names for m in preload_modules(name)]
    if not set(wanted) <= _PRELOAD and forkserver._forkserver._forkserver_pid is None:
        _PRELOAD.update(wanted)
        ctx.set_forkserver_preload(sorted(_PRELOAD))
    forkserver.ensure_running()


def discard() -> None:
    """Kept for callers that ended children started ahead: forked children start on demand, and the
    fork server ends with this process."""


def _start(ctx, module: str, model: str, scenarios: list[Scenario], opts: RunOptions):
    """(process, result pipe) measuring ``scenarios`` in a new child."""
    recv, send = ctx.Pipe(duplex=False)
    import os

    proc = ctx.Process(target=_child, args=(module, model, scenarios, opts, send, dict(os.environ)), daemon=True)
    proc.start()
    send.close()
    return proc, recv


def _exit_text(code: int | None) -> str:
    if code is not None and code < 0:
        name = signal.Signals(-code).name if -code in signal.Signals._value2member_map_ else str(-code)
        hint = " (killed: possibly out of memory)" if -code == signal.SIGKILL else ""
        return f"child process died with signal {name}{hint}"
    return f"child process exited with code {code}"


def run_isolated(module: str, model: str, scenarios: list[Scenario], opts: RunOptions,
                 info: dict) -> Iterator[Outcome]:
    """Yield one outcome per scenario, in order, whatever happens to the child processes.

    ``info`` is the contract's model metadata used for outcomes the child could not report.
    """
    ctx = _context()
    remaining = list(scenarios)
    while remaining:
        proc, recv = _start(ctx, module, model, remaining, opts)
        done = 0
        in_flight: int | None = None
        started = datetime.now(timezone.utc).isoformat()
        deadline = time.monotonic() + opts.load_timeout_s
        failure: tuple[str, str] | None = None
        try:
            while done < len(remaining):
                wait = max(deadline - time.monotonic(), 0.0)
                if not recv.poll(wait):
                    what = (f"scenario exceeded --timeout {opts.timeout_s:g} s" if in_flight is not None
                            else f"model load exceeded --load-timeout {opts.load_timeout_s:g} s")
                    failure = ("timeout", what)
                    break
                try:
                    kind, payload = recv.recv()
                except (EOFError, OSError):
                    proc.join(5)
                    failure = ("failed", _exit_text(proc.exitcode))
                    break
                if kind == _START:
                    in_flight = payload
                    started = datetime.now(timezone.utc).isoformat()
                    deadline = time.monotonic() + opts.timeout_s
                elif kind == _DONE:
                    yield payload
                    done += 1
                    in_flight = None
                    deadline = time.monotonic() + opts.timeout_s
                else:  # crash report
                    proc.join(5)
                    failure = ("failed", payload.strip().splitlines()[0])
                    break
        finally:   # also on Ctrl-C or when the caller stops early: no child outlives its run
            if proc.is_alive():
                proc.kill()
            proc.join()
            recv.close()
        if failure is None:
            return
        status, text = failure
        if in_flight is None:
            # nothing was measuring: the model never loaded (or the child could not start), and
            # every scenario left would share that fate
            for sc in remaining[done:]:
                yield Outcome(sc, info, status=status, error=text, started_at=started)
            return
        yield Outcome(remaining[done], info, status=status, error=text, started_at=started)
        remaining = remaining[done + 1:]

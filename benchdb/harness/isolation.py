"""Run a model's scenarios in a child process, with a timeout per scenario.

The child loads the model once and measures its scenarios in order, sending each outcome back
through a pipe as soon as it is done. The parent blocks on that pipe (``poll`` with a timeout:
a select, never a busy loop), so it takes no CPU while the child measures. A crash, OOM kill or
hang becomes the status of the scenario in flight; a fresh child then takes the rest.

The first child can start before it has work (:func:`prestart`): ``benchdb run`` starts it as soon
as the backend is known, and it imports the backend's libraries (torch and transformers' model
code: ~4 s on a small machine) while the parent plans, which imports much of the same. Nothing is
being measured then; the child measures only once the parent has sent its scenarios and waits.
"""

from __future__ import annotations

import importlib
import multiprocessing as mp
import signal
import time
import traceback
from datetime import datetime, timezone
from typing import Iterator

from benchdb.backends.base import Outcome, RunOptions, Scenario

_START, _DONE, _CRASH = "start", "done", "crash"
#: Children started ahead of their work, by backend module: (process, work pipe, result pipe).
_WARM: dict[str, tuple] = {}


def _die_with_parent() -> None:
    """Linux: have the kernel kill this child if the parent dies (e.g. SIGKILL of the run)."""
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGKILL)   # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _child(module: str, model: str, scenarios: list[Scenario], opts: RunOptions, conn) -> None:
    _die_with_parent()
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


def _warm_child(module: str, work, conn) -> None:
    """A child started before its work: import the backend's library (``software()``, as
    :func:`benchdb.backends.registry.load` does) and whatever else it names in an optional
    ``prewarm()``, then wait for (model, scenarios, opts) and run them as :func:`_child` does."""
    _die_with_parent()
    try:
        backend = importlib.import_module(module)
        backend.software()
        getattr(backend, "prewarm", lambda: None)()
    except BaseException:   # noqa: BLE001  run_model meets the same failure and reports it
        pass
    try:
        job = work.recv()
    except (EOFError, OSError):
        return
    if job is None:
        return
    _child(module, *job, conn)


def prestart(module: str) -> None:
    """Start the child for ``module``'s first model now (see the module's docstring). The first
    :func:`run_isolated` of ``module`` takes it; :func:`discard` ends one that is left unused."""
    if module in _WARM:
        return
    ctx = mp.get_context("spawn")
    recv, send = ctx.Pipe(duplex=False)
    work_recv, work_send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_warm_child, args=(module, work_recv, send), daemon=True)
    proc.start()
    send.close()
    work_recv.close()
    _WARM[module] = (proc, work_send, recv)


def discard() -> None:
    """End every child started ahead that no run took (a dry run, a plan that failed)."""
    while _WARM:
        _, (proc, work_send, recv) = _WARM.popitem()
        if proc.is_alive():
            proc.kill()
        proc.join()
        work_send.close()
        recv.close()


def _start(ctx, module: str, model: str, scenarios: list[Scenario], opts: RunOptions):
    """(process, result pipe) measuring ``scenarios``: the child started ahead for ``module`` if
    there is one still alive, else a new one."""
    warm = _WARM.pop(module, None)
    if warm is not None:
        proc, work_send, recv = warm
        try:
            if not proc.is_alive():
                raise BrokenPipeError
            work_send.send((model, scenarios, opts))
            return proc, recv
        except (BrokenPipeError, OSError):
            proc.kill()
            proc.join()
            recv.close()
        finally:
            work_send.close()
    recv, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(module, model, scenarios, opts, send), daemon=True)
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
    ctx = mp.get_context("spawn")
    remaining = list(scenarios)
    while remaining:
        warm = module in _WARM
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
        if warm and in_flight is None and done == 0 and failure[0] == "failed":
            continue            # the child started ahead died before it began: a fresh one starts
        status, text = failure
        if in_flight is None:
            # nothing was measuring: the model never loaded (or the child could not start), and
            # every scenario left would share that fate
            for sc in remaining[done:]:
                yield Outcome(sc, info, status=status, error=text, started_at=started)
            return
        yield Outcome(remaining[done], info, status=status, error=text, started_at=started)
        remaining = remaining[done + 1:]

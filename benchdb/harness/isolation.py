"""Run a model's scenarios in a child process, with a timeout per scenario.

The child loads the model once and measures its scenarios in order, sending each outcome back
through a pipe as soon as it is done. The parent blocks on that pipe (``poll`` with a timeout:
a select, never a busy loop), so it takes no CPU while the child measures. A crash, OOM kill or
hang becomes the status of the scenario in flight; a fresh child then takes the rest.

Children are forked from a server process (multiprocessing's ``forkserver``), one per backend, that
has imported that backend's libraries once (:func:`prestart`: torch and transformers' model code
take ~4 s on a small machine); a child never inherits another backend's libraries. Each child is
still a process of its own -- its own heap, model, thread pools and scheduling -- so
``--repeats`` sees process-to-process variance, but it starts in milliseconds
instead of seconds, which is what makes 3 processes per scenario affordable in the quickstart. The
server computes nothing (no thread pool is started before a fork) and idles while a child measures.
Where fork is not available (Windows), children are spawned and import everything themselves.
"""

from __future__ import annotations

import multiprocessing as mp
import multiprocessing.context
import signal
import threading
import time
import traceback
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from multiprocessing import popen_forkserver
from typing import TYPE_CHECKING

from benchdb.harness import background
from benchdb.harness.scenario import Outcome, RunOptions, Scenario

if TYPE_CHECKING:
    from multiprocessing.forkserver import ForkServer

_START, _DONE, _CRASH = "start", "done", "crash"


def _die_with_parent() -> None:
    """Linux: have the kernel kill this child if its parent dies (e.g. SIGKILL of the run; a forked
    child's parent is the fork server, which ends with the run)."""
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


def _end_with_run() -> None:
    """End this child as soon as the run that started it ends, however it ended (SIGTERM, SIGKILL):
    a forked child's parent is the fork server, which lives on while this child holds the run's
    end of its pipe, so the parent-death signal alone never fires. A thread waits on multiprocessing's
    parent sentinel (a pipe the run holds open): blocked in the kernel, it costs nothing meanwhile.
    What this child started ends with it (a serving backend's server: :mod:`benchdb.backends.openai.reaper`)."""
    parent = mp.parent_process()
    if parent is None:
        return

    def watch() -> None:
        import os
        from multiprocessing.connection import wait

        wait([parent.sentinel])
        os._exit(1)

    threading.Thread(target=watch, name="benchdb-run-watch", daemon=True).start()


def _child(
    module: str,
    model: str,
    scenarios: list[Scenario],
    opts: RunOptions,
    conn,
    environ: dict[str, str] | None = None,
    cpus: tuple[int, ...] | None = None,
) -> None:
    import importlib
    import os

    _die_with_parent()
    _end_with_run()
    if cpus:  # a parallel worker's cores, before any thread pool starts
        os.sched_setaffinity(0, cpus)
    import gc

    # what the fork server imported is never garbage: its objects leave the collector's reach, so
    # a collection (settled_rss, before each scenario) walks only this child's own objects (0.13 s
    # with torch imported otherwise), and pages shared with the server stay shared
    gc.freeze()
    if environ is not None:  # a forked child has the fork server's environment: take the parent's now
        os.environ.clear()
        os.environ.update(environ)
    background.open_window()  # (its benchdb family is read from the environment just set)
    try:
        backend = importlib.import_module(module)
        gen = backend.run_model(model, scenarios, opts, on_start=lambda i: conn.send((_START, i)))
        for outcome in gen:
            conn.send((_DONE, outcome))
    except BaseException as exc:  # report, then exit non-zero
        conn.send((_CRASH, f"{type(exc).__name__}: {exc}".strip() + "\n" + traceback.format_exc(limit=3)))
        raise SystemExit(1) from None  # the parent has the traceback, sent above
    finally:
        conn.close()


def _context():
    return mp.get_context("forkserver" if "forkserver" in mp.get_all_start_methods() else "spawn")


def preload_modules(module: str) -> list[str]:
    """What the fork server of a backend module imports: the module itself, the names in its
    optional ``PRELOAD`` (its libraries and the model code it loads with), and last
    :mod:`benchdb.harness.server_exit` (the server then ends without tearing them down)."""
    import importlib

    try:
        backend = importlib.import_module(module)
    except Exception:  # noqa: BLE001  an unknown or broken backend: planning says so
        return []
    return [module, *getattr(backend, "PRELOAD", ()), "benchdb.harness.server_exit"]


#: One fork server per backend module: a child must never inherit another backend's libraries
#: (OpenVINO measured 24 % slower in a child whose parent had also imported ONNX Runtime).
_SERVERS: dict[str, ForkServer] = {}
_SERVERS_LOCK = threading.Lock()


def _server(module: str) -> ForkServer:
    """The fork server of ``module``, started (its imports run before it forks its first child)."""
    from multiprocessing import forkserver

    with _SERVERS_LOCK:  # parallel workers start children from several threads
        server = _SERVERS.get(module)
        if server is None:
            if not _SERVERS:
                import atexit

                atexit.register(_end_servers)
            server = forkserver.ForkServer()
            server.set_forkserver_preload(preload_modules(module))
            _SERVERS[module] = server
        server.ensure_running()  # also replaces a server that died
    return server


def _end_servers() -> None:
    """At this process's exit, end the fork servers it started. A server left to end by itself
    first finishes importing its backend's libraries (it reads the end of its pipe only then), and
    holds this process's standard output and error meanwhile: a run refused while planning (a
    backend that fails to import, a bad option) kept a caller reading its one-line error, a shell's
    ``$(...)`` or a test's ``subprocess.run``, waiting seconds for imports nothing would use. A
    server computes nothing, and every child it forked has ended with the run."""
    import os

    for server in list(_SERVERS.values()):
        pid = getattr(server, "_forkserver_pid", None)
        if pid is not None:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:  # already gone
                pass


def server_pid(module: str) -> int | None:
    """The process id of ``module``'s fork server (None before it started)."""
    server = _SERVERS.get(module)
    return getattr(server, "_forkserver_pid", None) if server is not None else None


def prestart(modules: str | Iterable[str]) -> None:
    """Start the fork servers of these backend modules now: their imports run side by side and
    overlap the parent's planning (:func:`ready` waits for them before anything is measured)."""
    names = [modules] if isinstance(modules, str) else list(modules)
    if _context().get_start_method() == "forkserver":
        for name in names:
            _server(name)


def _noop() -> None:
    pass


def ready(modules: Iterable[str]) -> None:
    """Return once the fork servers of these modules have finished their imports (a server forks
    its first child only after them), so that no import runs beside a measurement."""
    if _context().get_start_method() != "forkserver":
        return
    procs = []
    for name in modules:
        proc = _BackendProcess(target=_noop, daemon=True)
        proc.backend_module = name
        proc.start()
        procs.append(proc)
    for proc in procs:
        proc.join()


class _Popen(popen_forkserver.Popen):
    """popen_forkserver.Popen, forking from the process's backend's own server (``_SERVERS``)."""

    def _launch(self, process_obj):
        import io
        import os
        from multiprocessing import forkserver, reduction, spawn, util
        from multiprocessing.context import set_spawning_popen

        server = _server(process_obj.backend_module)
        prep_data = spawn.get_preparation_data(process_obj._name)
        buf = io.BytesIO()
        set_spawning_popen(self)
        try:
            reduction.dump(prep_data, buf)
            reduction.dump(process_obj, buf)
        finally:
            set_spawning_popen(None)
        # _fds (set by popen_forkserver.Popen.__init__) and util.close_fds are missing from typeshed
        self.sentinel, w = server.connect_to_new_process(self._fds)  # type: ignore[attr-defined]
        _parent_w = os.dup(w)
        self.finalizer = util.Finalize(self, util.close_fds, (_parent_w, self.sentinel))  # type: ignore[attr-defined]
        with open(w, "wb", closefd=True) as f:
            f.write(buf.getbuffer())
        self.pid = forkserver.read_signed(self.sentinel)


class _BackendProcess(mp.context.ForkServerProcess):
    """A measuring child forked by its backend's fork server."""

    backend_module = ""

    @staticmethod
    def _Popen(process_obj):
        return _Popen(process_obj)


def _start(
    ctx, module: str, model: str, scenarios: list[Scenario], opts: RunOptions, placement: Placement | None = None
):
    """(process, result pipe) measuring ``scenarios`` in a new child."""
    recv, send = ctx.Pipe(duplex=False)
    import os

    env = {**os.environ, **(placement.env if placement else {})}
    args = (module, model, scenarios, opts, send, env, placement.cpus if placement else None)
    if ctx.get_start_method() == "forkserver":
        proc = _BackendProcess(target=_child, args=args, daemon=True)
        proc.backend_module = module
    else:
        proc = ctx.Process(target=_child, args=args, daemon=True)
    proc.start()
    send.close()
    return proc, recv


def _exit_text(code: int | None) -> str:
    if code is not None and code < 0:
        name = signal.Signals(-code).name if -code in signal.Signals._value2member_map_ else str(-code)
        hint = " (killed: possibly out of memory)" if -code == signal.SIGKILL else ""
        return f"child process died with signal {name}{hint}"
    return f"child process exited with code {code}"


@dataclass(frozen=True)
class Placement:
    """Where a parallel worker's children run: their cores and the environment that shows them
    their device (e.g. ``CUDA_VISIBLE_DEVICES``)."""

    cpus: tuple[int, ...] | None = None
    env: dict[str, str] = field(default_factory=dict)


def run_isolated(
    module: str, model: str, scenarios: list[Scenario], opts: RunOptions, info: dict, placement: Placement | None = None
) -> Iterator[Outcome]:
    """Yield one outcome per scenario, in order, whatever happens to the child processes.

    ``info`` is the contract's model metadata used for outcomes the child could not report;
    ``placement`` pins the children to a parallel worker's cores and device.
    """
    ctx = _context()
    remaining = list(scenarios)
    while remaining:
        proc, recv = _start(ctx, module, model, remaining, opts, placement)
        done = 0
        in_flight: int | None = None
        started = datetime.now(timezone.utc).isoformat()
        deadline = time.monotonic() + opts.load_timeout_s
        failure: tuple[str, str] | None = None
        try:
            while done < len(remaining):
                wait = max(deadline - time.monotonic(), 0.0)
                if not recv.poll(wait):
                    what = (
                        f"scenario exceeded --timeout {opts.timeout_s:g} s"
                        if in_flight is not None
                        else f"model load exceeded --load-timeout {opts.load_timeout_s:g} s"
                    )
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
        finally:  # also on Ctrl-C or when the caller stops early: no child outlives its run
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
        remaining = remaining[done + 1 :]

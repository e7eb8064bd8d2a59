"""Run a server command as the leader of its own process group, and take the whole group down.

Why: a ``--server`` command may be a wrapper -- a shell script that does not ``exec``, a launcher
that forks workers -- and stopping only the process benchdb started leaves the rest running,
re-parented to PID 1. :class:`benchdb.backends.openai.launcher.Server` starts this program in a session of its
own, so everything the command starts shares its process group; this program ends that group
(SIGTERM, then SIGKILL after the grace period) when

- it gets SIGTERM, SIGINT or SIGHUP (``Server.stop``; on Linux also the parent-death signal: the
  measuring child that started it died, e.g. killed by its run),
- its parent is gone (checked every second: the parent-death signal is Linux only),
- the command exits by itself (whatever it left behind goes too); it then exits with the
  command's code (128 + N for a command killed by signal N).

Standard library and psutil only, run by path (``python -I reaper.py PARENT_PID GRACE_S -- CMD...``):
it needs no benchdb on the import path.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time

import psutil

PARENT_POLL_S = 1.0
_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


class _Stop(Exception):
    """Raised by the first stopping signal, so that a blocking wait for the command returns."""


_stopping = False


def _on_signal(signum: int, frame: object) -> None:
    global _stopping
    if not _stopping:
        _stopping = True
        raise _Stop


def _die_with_parent(parent: int) -> None:
    if sys.platform.startswith("linux"):
        import ctypes

        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_POLL_S)
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def _members(group: int) -> list[psutil.Process]:
    """The live processes of ``group`` other than this one."""
    out = []
    me = os.getpid()
    for proc in psutil.process_iter():
        if proc.pid == me:
            continue
        try:
            if os.getpgid(proc.pid) == group and proc.status() != psutil.STATUS_ZOMBIE:
                out.append(proc)
        except (OSError, psutil.Error):
            continue
    return out


def end_group(group: int, grace_s: float, child: subprocess.Popen | None = None) -> None:
    """SIGTERM to every process of ``group`` (this one ignores it), SIGKILL to those left after
    ``grace_s``; returns once none is left."""
    with contextlib.suppress(OSError):
        os.killpg(group, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        if child is not None:
            child.poll()  # reap our own child: a zombie is not a process left running
        if not _members(group):
            return
        time.sleep(0.05)
    for _ in range(10):
        left = _members(group)
        if not left:
            return
        for proc in left:
            with contextlib.suppress(psutil.Error):
                proc.kill()
        if child is not None:  # reaped by its Popen, which then keeps its exit status (-SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                child.wait(timeout=1.0)
        psutil.wait_procs([p for p in left if child is None or p.pid != child.pid], timeout=1.0)


def main(argv: list[str]) -> int:
    global _stopping
    if len(argv) < 4 or argv[2] != "--":
        print("usage: reaper.py PARENT_PID GRACE_S -- COMMAND...", file=sys.stderr)
        return 2
    parent, grace_s, command = int(argv[0]), float(argv[1]), argv[3:]
    for sig in _SIGNALS:
        signal.signal(sig, _on_signal)
    group = os.getpgid(0)
    code: int | None = None
    child: subprocess.Popen | None = None
    try:
        try:
            _die_with_parent(parent)
            if os.getppid() != parent:  # it died before the parent-death signal was set
                raise _Stop
            try:
                child = subprocess.Popen(command, stdin=subprocess.DEVNULL)
            except OSError as exc:
                print(f"benchdb: the server command could not start: {exc}", file=sys.stderr, flush=True)
                return 127
            code = child.wait()
        finally:
            _stopping = True  # from here on a signal is only noted: the group is ending anyway
    except _Stop:
        pass
    end_group(group, grace_s, child)
    if child is not None and code is None:
        code = child.wait()
    if code is None:
        return 128 + signal.SIGTERM
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""A server benchdb starts for a sweep: a command template, health, its whole process group.

``--server "transformers serve {model} --port {port}"`` (or ``vllm serve {model} --port {port}``,
...) is rendered with the model, a free port and the host, started in its own session (so
stopping it stops everything it started), with its output in a log file whose tail is recorded.
It is healthy once ``/health`` or ``/v1/models`` answers 200. On Linux the server also gets a
parent-death signal, so a measuring child that is killed (a scenario's timeout) takes it down.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from benchdb.errors import BenchdbError, clip

#: Lines of the server's log kept with a result.
TAIL_LINES = 20
HEALTH_PATHS = ("/health", "/v1/models")


class ServerFailed(BenchdbError):
    """The server exited or never became healthy; the message ends with its log tail."""


@dataclass(frozen=True)
class Rendered:
    command: str           # as run
    template: str          # as given (part of the identity: the port is not)
    engine: str            # the program, e.g. transformers, vllm, sglang.launch_server
    version: str | None    # its package's version in this environment, when benchdb can tell


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def engine_of(command: str) -> str:
    """The serving program a command runs: its first word, or the module after ``python -m``."""
    words = shlex.split(command)
    if len(words) >= 3 and Path(words[0]).name.startswith("python") and words[1] == "-m":
        return words[2]
    return Path(words[0]).name if words else ""


def engine_version(engine: str) -> str | None:
    """The version of the engine's package where this environment has it (``transformers serve``
    from this venv); None for a program benchdb cannot trace to a package."""
    from benchdb.harness.hardware import package_version

    return package_version(engine.split(".")[0]) if engine else None


def render(template: str, model: str, host: str, port: int) -> Rendered:
    missing = [k for k in ("{model}", "{port}") if k not in template]
    if missing:
        raise BenchdbError(f"--server {template!r} lacks {' and '.join(missing)}; e.g. "
                           "--server \"transformers serve {model} --port {port}\"")
    try:
        command = template.format(model=shlex.quote(model), port=port, host=host)
    except (KeyError, IndexError, ValueError) as exc:
        raise BenchdbError(f"--server {template!r}: only {{model}}, {{port}} and {{host}} may be filled in "
                           f"({exc})") from None
    engine = engine_of(command)
    return Rendered(command, template, engine, engine_version(engine))


def _die_with_parent() -> None:      # runs in the server's process before exec
    os.setsid()
    if sys.platform.startswith("linux"):
        import ctypes

        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)    # PR_SET_PDEATHSIG


class Server:
    """One server process group for one model's sweep (a context manager)."""

    def __init__(self, template: str, model: str, *, host: str = "127.0.0.1", startup_timeout_s: float = 600.0):
        self.host = host
        self.port = free_port(host)
        self.rendered = render(template, model, host, self.port)
        self.startup_timeout_s = startup_timeout_s
        self.url = f"http://{host}:{self.port}"
        self.proc: subprocess.Popen | None = None
        self._log: IO[bytes] | None = None
        self._log_path: Path | None = None

    def __enter__(self) -> Server:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        fd, name = tempfile.mkstemp(prefix="benchdb-server-", suffix=".log")
        self._log_path = Path(name)
        self._log = os.fdopen(fd, "wb")
        env = {**os.environ, "HF_HUB_OFFLINE": os.environ.get("HF_HUB_OFFLINE", "1")}
        try:
            self.proc = subprocess.Popen(shlex.split(self.rendered.command), stdout=self._log,
                                         stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env,
                                         preexec_fn=_die_with_parent)
        except OSError as exc:
            raise ServerFailed(f"server command {self.rendered.command!r} could not start: {exc}") from None
        self._wait_healthy()

    def _wait_healthy(self) -> None:
        deadline = time.monotonic() + self.startup_timeout_s
        while time.monotonic() < deadline:
            code = self.returncode()
            if code is not None:
                raise ServerFailed(f"the server exited with code {code} before it was healthy; "
                                   f"its log ends: {self.tail(5) or '(empty)'}")
            if self.healthy():
                return
            time.sleep(0.2)
        tail = self.tail(5)
        self.stop()
        raise ServerFailed(f"the server was not healthy after {self.startup_timeout_s:.0f} s; "
                           f"its log ends: {tail or '(empty)'}")

    def healthy(self) -> bool:
        for path in HEALTH_PATHS:
            try:
                with urllib.request.urlopen(self.url + path, timeout=2) as resp:
                    if resp.status == 200:
                        return True
            except (urllib.error.URLError, OSError, ValueError):
                continue
        return False

    def returncode(self) -> int | None:
        return None if self.proc is None else self.proc.poll()

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def tail(self, lines: int = TAIL_LINES) -> str:
        """The last lines of the server's output, one string (for a result's record and errors)."""
        if self._log_path is None:
            return ""
        try:
            text = self._log_path.read_bytes()[-16384:].decode("utf-8", "replace")
        except OSError:
            return ""
        return clip(" | ".join(ln.strip() for ln in text.splitlines()[-lines:] if ln.strip()), 2000)

    def stop(self, grace_s: float = 10.0) -> None:
        """SIGTERM to the whole group, SIGKILL after ``grace_s`` (a server finishes streams first)."""
        proc, self.proc = self.proc, None
        if proc is not None and proc.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(grace_s)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        if proc is not None:
            self.proc = proc            # keep its return code readable
        if self._log is not None:
            self._log.close()
            self._log = None

    def cleanup(self) -> None:
        if self._log_path is not None:
            self._log_path.unlink(missing_ok=True)

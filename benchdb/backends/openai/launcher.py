"""A server benchdb starts for a sweep: a command template, health, its whole process group.

``--server "transformers serve {model} --port {port}"`` (or ``vllm serve {model} --port {port}``,
...) is rendered with the model, a free port and the host, and run under :mod:`benchdb.backends.openai.reaper`
in a session of its own: the reaper ends the whole process group (a wrapper script's children
too) when it is stopped, when the measuring child that started it dies (a scenario's timeout, a
killed run) and when the command exits. Its output goes to an anonymous temporary file (nothing
is left on disk, whatever kills the run) whose tail is recorded. It is healthy once ``/health``
or ``/v1/models`` answers 200. A secret on the command line (``--api-key V``, ``HF_TOKEN=V``) is
recorded hashed (:func:`benchdb.text.redact_secrets`), in messages too.
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
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from benchdb.errors import BenchdbError, clip
from benchdb.text import redact_secrets

#: Lines of the server's log kept with a result.
TAIL_LINES = 20
HEALTH_PATHS = ("/health", "/v1/models")
#: Seconds a stopped server may take to finish (SIGTERM) before its group is killed (SIGKILL).
GRACE_S = 10.0
_REAPER = Path(__file__).with_name("reaper.py")


class ServerFailed(BenchdbError):
    """The server exited or never became healthy; the message ends with its log tail."""


@dataclass(frozen=True)
class Rendered:
    command: str  # as run
    template: str  # as given (part of the identity: the port is not)
    engine: str  # the program, e.g. transformers, vllm, sglang.launch_server
    version: str | None  # its package's version in this environment, when benchdb can tell


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
        raise BenchdbError(
            f"--server {redact_secrets(template)!r} lacks {' and '.join(missing)}; e.g. "
            '--server "transformers serve {model} --port {port}"'
        )
    try:
        command = template.format(model=shlex.quote(model), port=port, host=host)
    except (KeyError, IndexError, ValueError) as exc:
        raise BenchdbError(
            f"--server {redact_secrets(template)!r}: only {{model}}, {{port}} and {{host}} may be filled in ({exc})"
        ) from None
    engine = engine_of(command)
    return Rendered(command, template, engine, engine_version(engine))


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

    def __enter__(self) -> Server:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
        self.cleanup()

    def start(self) -> None:
        """Start it and wait until it is healthy; stopped again (its group) if it never is."""
        self._log = tempfile.TemporaryFile(prefix="benchdb-server-", suffix=".log")  # unlinked already
        env = {**os.environ, "HF_HUB_OFFLINE": os.environ.get("HF_HUB_OFFLINE", "1")}
        argv = [
            sys.executable,
            "-I",
            str(_REAPER),
            str(os.getpid()),
            f"{GRACE_S:g}",
            "--",
            *shlex.split(self.rendered.command),
        ]
        try:
            self.proc = subprocess.Popen(
                argv,
                stdout=self._log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=env,
                start_new_session=True,
            )
        except OSError as exc:
            raise ServerFailed(
                f"server command {redact_secrets(self.rendered.command)!r} could not start: {exc}"
            ) from None
        try:
            self._wait_healthy()
        except BaseException:
            self.stop()
            raise

    def _wait_healthy(self) -> None:
        deadline = time.monotonic() + self.startup_timeout_s
        while time.monotonic() < deadline:
            code = self.returncode()
            if code is not None:
                raise ServerFailed(
                    f"the server exited with code {code} before it was healthy; "
                    f"its log ends: {self.tail(5) or '(empty)'}"
                )
            if self.healthy():
                return
            time.sleep(0.2)
        tail = self.tail(5)
        raise ServerFailed(
            f"the server was not healthy after {self.startup_timeout_s:.0f} s; its log ends: {tail or '(empty)'}"
        )

    def healthy(self) -> bool:
        from benchdb.backends.openai import urls

        for path in HEALTH_PATHS:
            try:
                urls.get(self.url, path, timeout=2)  # a 200; a redirect is not followed, nor healthy
                return True
            except (urls.Redirected, OSError, ValueError):
                continue
        return False

    def returncode(self) -> int | None:
        return None if self.proc is None else self.proc.poll()

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def tail(self, lines: int = TAIL_LINES) -> str:
        """The last lines of the server's output, one string (for a result's record and errors)."""
        if self._log is None:
            return ""
        try:
            fd = self._log.fileno()
            text = os.pread(fd, 16384, max(0, os.fstat(fd).st_size - 16384)).decode("utf-8", "replace")
        except (OSError, ValueError):
            return ""
        return clip(" | ".join(ln.strip() for ln in text.splitlines()[-lines:] if ln.strip()), 2000)

    def stop(self) -> None:
        """SIGTERM to the whole group (a server finishes streams first); the reaper kills what is
        left after :data:`GRACE_S`, and this process kills the group if the reaper has not ended
        a few seconds later. The log stays readable (:meth:`tail`) until :meth:`cleanup`."""
        proc = self.proc
        if proc is not None and proc.poll() is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(GRACE_S + 5.0)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()

    def cleanup(self) -> None:
        """Close the log (an anonymous file: nothing stays on disk)."""
        if self._log is not None:
            self._log.close()
            self._log = None

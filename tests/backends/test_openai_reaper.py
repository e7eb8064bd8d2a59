"""benchdb.backends.openai.reaper: a server command run as the leader of its own process group, the
whole group ended when the command exits (what it left behind goes too) or when the reaper is told
to stop, with the command's exit code. Run by path, as the launcher runs it."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import psutil
import pytest
from conftest import child

from benchdb.backends.openai import reaper

pytestmark = pytest.mark.core


def _alive(pid: int) -> bool:
    """A process that runs (a zombie has ended: only its exit status waits to be read)."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _group(group: int) -> list[int]:
    """The live processes of a process group."""
    import os

    found = []
    for proc in psutil.process_iter():
        try:
            if os.getpgid(proc.pid) == group and _alive(proc.pid):
                found.append(proc.pid)
        except (ProcessLookupError, psutil.Error):
            continue
    return found


def _reaper(*command: str, grace: str = "5") -> list[str]:
    """The reaper's command line, with this process as its parent."""
    import os

    return [sys.executable, "-I", reaper.__file__, str(os.getpid()), grace, "--", *command]


def _run(args: list[str]) -> subprocess.CompletedProcess:
    """Run to its end in a session of its own, as the launcher starts it: the group it ends is its own."""
    return subprocess.run(args, capture_output=True, text=True, timeout=60, start_new_session=True)


def test_the_commands_exit_code_comes_back_and_what_it_left_behind_is_ended(tmp_path):
    pids = tmp_path / "pids"
    proc = _run(_reaper("sh", "-c", f"sleep 600 & echo $! > {pids}; exit 7"))
    assert proc.returncode == 7, proc.stderr
    assert not _alive(int(pids.read_text()))
    assert _run(_reaper("sh", "-c", "kill -TERM $$")).returncode == 128 + signal.SIGTERM


def test_usage_and_a_command_that_cannot_start_are_their_own_codes(tmp_path):
    bad = _run([sys.executable, "-I", reaper.__file__, "1"])
    assert bad.returncode == 2 and bad.stderr.startswith("usage: reaper.py PARENT_PID GRACE_S -- COMMAND...")
    missing = _run(_reaper(str(tmp_path / "no-such-server")))
    assert missing.returncode == 127 and "the server command could not start" in missing.stderr


def test_a_stopped_reaper_ends_the_group_and_kills_what_ignores_sigterm(tmp_path):
    pids = tmp_path / "pids"
    # the command ignores SIGTERM, as a server busy finishing its streams might, and so does its helper
    script = (
        "import signal, subprocess, sys, time\n"
        "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
        "helper = subprocess.Popen(['sleep', '600'])\n"
        "open(sys.argv[1], 'w').write(str(helper.pid))\n"
        "time.sleep(600)\n"
    )
    command = (sys.executable, "-c", script, str(pids))
    with child(_reaper(*command, grace="0.5")) as proc:
        for _ in range(200):
            if pids.exists() and pids.read_text().strip():
                break
            time.sleep(0.05)
        helper = int(pids.read_text())
        command_pid = next(p for p in _group(proc.pid) if p not in (proc.pid, helper))
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)  # past the grace period: what ignored SIGTERM was killed
        assert not _alive(command_pid) and not _alive(helper)
        assert proc.returncode == 128 + signal.SIGKILL  # the command's end, as a shell reports it

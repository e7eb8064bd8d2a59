"""The stub server's own options: several stub processes on one port (--reuse-port), so a client
with many worker processes meets a server side that does not saturate first. Real processes."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request

import pytest
from conftest import child, free_port


def _stub(port: int, *extra: str):
    """A stub server process, for a ``with`` block (:func:`conftest.child`)."""
    return child(
        [sys.executable, "-m", "benchdb.testing.stub", "--port", str(port), "--ttft-ms", "1", "--itl-ms", "1", *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def _first_line(proc: subprocess.Popen[str]) -> str:
    assert proc.stdout is not None
    return proc.stdout.readline()


def _complete(port: int) -> dict:
    body = json.dumps({"model": "stub", "prompt": "hi", "max_tokens": 3}).encode()
    req = urllib.request.Request(
        f"http://127.0.0.1:{port}/v1/completions", data=body, headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(req, timeout=10) as resp:
        return json.loads(resp.read())


@pytest.mark.parametrize("reuse", [True, False])
def test_stub_processes_share_a_port_only_when_asked(reuse):
    port = free_port()
    flag = ("--reuse-port",) if reuse else ()
    with _stub(port, *flag) as first:
        assert "listening on" in _first_line(first)
        with _stub(port, *flag) as other:
            second = _first_line(other)
            if reuse:
                assert "listening on" in second and other.poll() is None
                # connections land on either process: every request is answered whole
                for _ in range(6):
                    assert _complete(port)["usage"]["completion_tokens"] == 3
            else:
                other.wait(timeout=10)
                assert other.returncode != 0

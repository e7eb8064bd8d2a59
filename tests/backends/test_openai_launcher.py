"""benchdb.backends.openai.launcher: a server benchdb starts for a sweep. Its command template is
filled in (a secret in it never shown), it is healthy once it answers, its log's tail is kept, and
stopping it ends its whole process group, a wrapper script's children too. A real stub server
started from a shell wrapper."""

from __future__ import annotations

import os
import shlex
import sys
from importlib import metadata

import psutil
import pytest

from benchdb.backends.openai.launcher import Server, ServerFailed, engine_of, engine_version, render
from benchdb.errors import BenchdbError

STUB = f"{sys.executable} -m benchdb.testing.stub --port {{port}} --model {{model}} --ttft-ms 1 --itl-ms 1"


def _alive(pid: int) -> bool:
    """A process that runs (a zombie has ended: only its exit status waits to be read)."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


@pytest.mark.core
def test_a_template_is_filled_in_and_its_engine_named():
    r = render("vllm serve {model} --port {port} --host {host}", "org/my model", "127.0.0.1", 8123)
    assert r.command == "vllm serve 'org/my model' --port 8123 --host 127.0.0.1"
    assert (r.template, r.engine) == ("vllm serve {model} --port {port} --host {host}", "vllm")
    assert engine_of("python3 -m sglang.launch_server --model m") == "sglang.launch_server"
    assert engine_of("/opt/venv/bin/transformers serve m") == "transformers"
    assert engine_version("click.testing") == metadata.version("click")  # a module's package: its first part
    assert engine_version("no-such-engine-here") is None
    with pytest.raises(BenchdbError) as err:
        render("serve {model} --api-key hf_SECRET123", "m", "127.0.0.1", 1)
    assert "lacks {port}" in str(err.value) and "hf_SECRET123" not in str(err.value)
    with pytest.raises(BenchdbError, match=r"only \{model\}, \{port\} and \{host\} may be filled in"):
        render("serve {model} {port} {gpu}", "m", "127.0.0.1", 1)


def test_a_wrapped_server_is_healthy_and_stopping_it_ends_its_whole_group(tmp_path):
    pids = tmp_path / "pids"
    wrapper = tmp_path / "serve.sh"
    # a wrapper that does not exec: it leaves a helper running, then runs the server as its child
    wrapper.write_text(f'#!/bin/sh\nsleep 600 &\necho $! > {pids}\necho starting the stub\n"$@"\n')
    wrapper.chmod(0o755)
    with Server(f"{wrapper} {STUB}", "stub-model", startup_timeout_s=60) as srv:
        assert srv.alive() and srv.healthy() and srv.rendered.engine == "serve.sh"
        assert str(srv.port) in srv.rendered.command and "{port}" in srv.rendered.template
        helper = int(pids.read_text())
        assert _alive(helper)
        group = os.getpgid(srv.proc.pid)
        assert group == srv.proc.pid != os.getpgid(0)  # a session of its own
        srv.stop()
        assert not srv.alive() and not _alive(helper)
        assert "starting the stub" in srv.tail()  # readable until cleaned up


def test_a_server_that_exits_before_it_is_healthy_fails_with_its_log_tail(tmp_path):
    script = tmp_path / "boom.py"
    script.write_text("import sys\nprint('boom: no GPU here', flush=True)\nsys.exit(3)\n")
    with pytest.raises(ServerFailed) as err:
        Server(f"{shlex.quote(sys.executable)} {script} {{model}} {{port}}", "m", startup_timeout_s=30).start()
    assert str(err.value) == "the server exited with code 3 before it was healthy; its log ends: boom: no GPU here"
    with pytest.raises(ServerFailed, match=r"could not start|exited with code 127"):
        Server(f"{tmp_path}/no-such-server {{model}} {{port}}", "m", startup_timeout_s=30).start()

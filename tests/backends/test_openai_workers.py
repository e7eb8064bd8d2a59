"""benchdb.backends.openai.workers: one load point shared out over client worker processes, against
the stub server: what two workers measure is what one client does, an open-loop rate is shared out,
and a killed worker is a one-line error, not a hang."""

from __future__ import annotations

import statistics
import time
from itertools import pairwise

import pytest
from conftest import need_module, only_on_linux

from benchdb.errors import BenchdbError
from benchdb.harness.timing import StopRule

need_module("httpx", "benchdb[serving]")

from support.loadgen import ITL_MS, TTFT_MS, medians, near, spec  # noqa: E402

from benchdb.backends.openai import workers  # noqa: E402
from benchdb.backends.openai.loadgen import run  # noqa: E402
from benchdb.testing.stub import StubConfig, StubServer  # noqa: E402


def test_two_worker_processes_measure_what_one_client_does():
    """Concurrency shared out over two client processes: the same medians (of the stub's truth) as
    one client, every request counted once, the timelines merged on one clock, in order."""
    with StubServer(StubConfig(ttft_ms=TTFT_MS, itl_ms=ITL_MS)) as stub:
        one = run(spec(stub.url, warmup_requests=4, n=24))
        two = workers.run(spec(stub.url, warmup_requests=4, n=24), 2)
    assert len(two.measured) == 24 and sum(r.warmup for r in two.records) == 4 and two.errors == {}
    assert [w["requests"] for w in two.workers] == [12, 12]
    assert all(r.tokens_out == 12 and len(r.chunks) == 12 for r in two.measured)
    for res in (one, two):
        ttft, itl = medians(res)
        assert near(ttft, TTFT_MS) and near(itl, ITL_MS), (res.workers, ttft, itl)
    sent = [r.sent for r in two.measured]
    assert sent == sorted(sent) and [r.index for r in two.measured] == list(range(24))
    # one window for both: no measured request left before it opened, or ended after it closed
    assert all(two.window_start <= r.sent and r.end is not None and r.end <= two.window_end for r in two.measured)
    assert two.loop_cpu_pct == max(w["loop_cpu_pct"] for w in two.workers)


# serial: the arrival gaps are timings; beside a busy neighbour (Spark's JVM in two CI runs) a late
# worker catches up in a burst and most gaps shrink to ~1 ms
@pytest.mark.serial
def test_an_open_loop_rate_is_shared_out_over_workers():
    with StubServer(StubConfig(ttft_ms=5.0, itl_ms=1.0)) as stub:
        res = workers.run(spec(stub.url, rate=40.0, arrival="constant", n=20), 2)
    assert len(res.measured) == 20 and res.errors == {}
    gaps = [b.sent - a.sent for a, b in pairwise(res.measured)]
    # two workers at 20/s each, offset by half a gap: arrivals interleave at about 1/40 s
    assert 0.5 / 40 < statistics.median(gaps) < 2.0 / 40, gaps


def _workers_of(pid: int) -> list[int]:
    """Child processes of ``pid`` that are client workers (from /proc)."""
    import os

    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = open(f"/proc/{entry}/stat").read()
                cmd = open(f"/proc/{entry}/cmdline", "rb").read()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid and b"benchdb.backends.openai.client_worker" in cmd:
                out.append(int(entry))
    return out


@only_on_linux("reads /proc")
def test_a_killed_worker_is_a_one_line_error_not_a_hang():
    import os
    import signal
    import threading

    rule = StopRule(warmup_iters=0, min_iters=5, min_time_s=0.0, max_time_s=30.0, max_iters=100_000, target_ci=1e-9)
    box: dict = {}

    def go(url: str) -> None:
        try:
            box["result"] = workers.run(spec(url, rule=rule), 2)
        except BenchdbError as e:
            box["error"] = str(e)

    with StubServer(StubConfig(ttft_ms=5.0, itl_ms=1.0)) as stub:
        t = threading.Thread(target=go, args=(stub.url,))
        started = time.monotonic()
        t.start()
        pids: list[int] = []
        while len(pids) < 2 and time.monotonic() - started < 30:
            time.sleep(0.2)
            pids = _workers_of(os.getpid())
        assert len(pids) == 2
        time.sleep(1.0)
        os.kill(pids[0], signal.SIGKILL)
        t.join(timeout=25)
        assert not t.is_alive()  # well before max_time_s: no hang
    assert "result" not in box
    message = box["error"]
    assert "\n" not in message and "client worker" in message and "exited with code -9" in message, message
    assert _workers_of(os.getpid()) == []  # the other worker is gone too

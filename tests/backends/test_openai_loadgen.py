"""The load generator against the stub server in-process: real sockets, real streams, no mocks.

Timing bounds are loose on purpose (the stub and the client share this process and its cores):
they catch a wrong definition (a role chunk taken as the first token, delays accumulating), not
the last millisecond; benchmarks/serving_client.py measures the accuracy.
"""

from __future__ import annotations

import json
import statistics
import time
from itertools import pairwise

import pytest
from conftest import child, need_module

from benchdb.errors import BenchdbError
from benchdb.harness.timing import StopRule
from benchdb.schema.serving import GOODPUT, ITL_TOKEN, REQUEST_THROUGHPUT, TTFT

need_module("httpx", "benchdb[serving]")

from support.loadgen import ITL_MS, TTFT_MS, medians, near, spec  # noqa: E402

from benchdb.backends.openai.loadgen import LoadSpec, run  # noqa: E402
from benchdb.schema.serving_metrics import parse_slo, summary  # noqa: E402
from benchdb.testing.stub import StubConfig, StubServer  # noqa: E402


def test_closed_loop_measures_the_stub_timeline():
    with StubServer(StubConfig(ttft_ms=TTFT_MS, itl_ms=ITL_MS)) as stub:
        res = run(spec(stub.url, warmup_requests=4, n=24))
        connections = stub.stub.connections
    assert len(res.measured) == 24 and sum(r.warmup for r in res.records) == 4
    assert res.stop_reason == "max_iters" and res.errors == {}
    assert all(r.tokens_out == 12 and len(r.chunks) == 12 and r.input_tokens in (2, 4) for r in res.measured)
    ttft, itl = medians(res)
    assert near(ttft, TTFT_MS) and near(itl, ITL_MS), (ttft, itl)
    assert connections <= 4 + 2  # keep-alive: the pool's connections are reused
    assert res.client_cpu_pct is not None and 0 <= res.client_cpu_pct <= 200
    s = summary(res.records, res.window_s)
    assert s["ok"] == 24 and s[TTFT]["p50"] == pytest.approx(ttft) and s[ITL_TOKEN]["p50"] == pytest.approx(itl)
    assert all(r.sent >= res.window_start for r in res.measured)


def test_converges_and_stops_early():
    with StubServer(StubConfig(ttft_ms=TTFT_MS, itl_ms=ITL_MS)) as stub:
        rule = StopRule(warmup_iters=0, min_iters=10, min_time_s=0.2, max_time_s=20.0, max_iters=10_000, target_ci=0.2)
        res = run(spec(stub.url, rule=rule))
    assert res.stop_reason == "converged" and len(res.measured) < 10_000


def test_open_loop_poisson_rate():
    rate = 25.0
    with StubServer(StubConfig(ttft_ms=TTFT_MS, itl_ms=ITL_MS)) as stub:
        res = run(spec(stub.url, rate=rate, arrival="poisson", n=30, seed=3))
    sends = sorted(r.sent for r in res.measured)
    assert len(sends) == 30 and res.errors == {}
    mean_gap = (sends[-1] - sends[0]) / (len(sends) - 1)
    assert 0.5 / rate < mean_gap < 1.8 / rate, mean_gap
    ttft, itl = medians(res)
    assert near(ttft, TTFT_MS) and near(itl, ITL_MS), (ttft, itl)


def test_constant_arrivals_are_evenly_spaced():
    with StubServer(StubConfig(ttft_ms=TTFT_MS, itl_ms=ITL_MS)) as stub:
        res = run(spec(stub.url, rate=50.0, arrival="constant", n=10))
    sends = sorted(r.sent for r in res.measured)
    gaps = [b - a for a, b in pairwise(sends)]
    assert statistics.median(gaps) == pytest.approx(0.02, rel=0.3)


def test_http_errors_counted_goodput_lower_and_connections_not_reused():
    with StubServer(StubConfig(ttft_ms=10.0, itl_ms=2.0, fail_every=3)) as stub:
        res = run(spec(stub.url, concurrency=2, n=30))
        connections = stub.stub.connections
    assert sum(res.errors.values()) == 10  # requests 3, 6, ..., 30
    assert all(e.startswith("HTTP 500: ") and "injected failure" in e for e in res.errors)
    s = summary(res.records, res.window_s, parse_slo("ttft:5s"))
    assert (s["ok"], s["errors"]) == (20, 10)
    assert s[GOODPUT] * res.window_s == pytest.approx(20)  # of 30 sent
    assert s[GOODPUT] == pytest.approx(s[REQUEST_THROUGHPUT])
    assert connections >= 10 + 1  # a new connection after every 500


def test_mid_stream_error_event_fails_the_request():
    with StubServer(StubConfig(ttft_ms=10.0, itl_ms=2.0, error_every=2, error_after=3)) as stub:
        res = run(spec(stub.url, concurrency=1, n=10))
    failed = [r for r in res.measured if not r.ok]
    assert len(failed) == 5 and all((r.error or "").startswith("stream error: stub: injected") for r in failed)
    assert all(len(r.chunks) == 3 for r in failed)
    assert sum(res.errors.values()) == 5


def test_chat_role_chunk_is_not_the_first_token():
    with StubServer(StubConfig(ttft_ms=TTFT_MS, itl_ms=ITL_MS)) as stub:
        res = run(spec(stub.url, endpoint="chat", n=8))
    assert res.errors == {}
    assert all(len(r.chunks) == 12 and r.tokens_out == 12 for r in res.measured)
    ttft, _ = medians(res)
    assert near(ttft, TTFT_MS), ttft  # the role chunk arrives at once


def test_stream_without_done_and_close_delimited():
    with StubServer(StubConfig(ttft_ms=10.0, itl_ms=2.0, done=False, chunked=False)) as stub:
        res = run(spec(stub.url, n=8, endpoint="chat"))
    assert res.errors == {}
    assert all(r.tokens_out == 12 and r.end is not None and r.end >= r.chunks[-1][0] for r in res.measured)


def test_timeout_fails_the_request():
    with StubServer(StubConfig(ttft_ms=2000.0, itl_ms=1.0)) as stub:
        res = run(spec(stub.url, concurrency=2, n=2, request_timeout_s=0.2))
    assert res.errors == {"timeout after 0.2 s": 2}
    assert res.window_s < 1.5


def test_spec_validation_and_optional_body_fields():
    with pytest.raises(BenchdbError, match="exactly one"):
        LoadSpec(base_url="http://x", model="m", prompts=["p"], concurrency=2, rate=1.0)
    with pytest.raises(BenchdbError, match="arrival"):
        LoadSpec(base_url="http://x", model="m", prompts=["p"], rate=1.0, arrival="bursty")
    plain = json.loads(LoadSpec(base_url="http://x", model="m", prompts=["p"], concurrency=1).bodies()[0])
    assert plain == {
        "model": "m",
        "max_tokens": 64,
        "stream": True,
        "stream_options": {"include_usage": True},
        "prompt": "p",
    }
    asked = LoadSpec(
        base_url="http://x", model="m", prompts=["p"], concurrency=1, endpoint="chat", extra_body={"ignore_eos": True}
    )
    body = json.loads(asked.bodies()[0])
    assert body["ignore_eos"] is True and body["messages"] == [{"role": "user", "content": "p"}]


@pytest.mark.slow
@pytest.mark.parametrize("epoll", [False, True], ids=["select", "epoll"])
def test_the_stub_outlives_more_connections_than_select_can_watch(epoll):
    """1024 clients on a 16-core machine crashed the stub's select() loop (ValueError: filedescriptor
    out of range): it caps its open files instead, or waits in epoll with --epoll."""
    import resource
    import socket
    import subprocess
    import sys

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and hard < 1300:
        pytest.skip(f"this process may open {hard} files at most")
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard if hard != resource.RLIM_INFINITY else 4096, hard))
    argv = [sys.executable, "-m", "benchdb.testing.stub", "--port", "0", "--ttft-ms", "1", "--itl-ms", "1"]
    socks = []
    try:
        with child([*argv, *(["--epoll"] if epoll else [])], stdout=subprocess.PIPE, text=True) as proc:
            url = proc.stdout.readline().split()[-1]
            port = int(url.rsplit(":", 1)[1])
            for _ in range(1100):
                s = socket.socket()
                s.settimeout(0.05)
                try:
                    s.connect(("127.0.0.1", port))
                except OSError:
                    pass
                socks.append(s)
            time.sleep(1.0)
            assert proc.poll() is None, "the stub died with more connections than select() can watch"
            for s in socks:
                s.close()
            socks.clear()
            rule = StopRule(warmup_iters=0, min_iters=3, min_time_s=0.0, max_time_s=20.0, max_iters=3, target_ci=0.5)
            result = run(
                LoadSpec(
                    base_url=url,
                    model="stub",
                    prompts=["hi"],
                    max_tokens=4,
                    concurrency=1,
                    warmup_requests=0,
                    rule=rule,
                    request_timeout_s=20.0,
                )
            )
            assert sum(r.ok for r in result.records) == 3
    finally:
        for s in socks:
            s.close()
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))

"""A replayed trace's own send path (benchdb.backends.openai.raw_send): requests written at their
time on connections kept warm, replies read through h11 by the rules httpx's path follows. Real
stub servers; where a test counts the stub's connections the stub runs in this process (its
counters), where it must die it runs in its own. No timing bound here: the send lag is checked in
test_openai_sessions.py::test_a_replayed_trace_leaves_on_the_traces_clock."""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import child, need_module

from benchdb.harness.timing import StopRule

need_module("httpx", "benchdb[serving]")

from benchdb.backends.openai import raw_send  # noqa: E402
from benchdb.backends.openai.loadgen import LoadSpec, run  # noqa: E402
from benchdb.testing.stub import StubConfig, StubServer  # noqa: E402


def trace(tmp_path, lines: int, gap_ms: float = 25.0) -> str:
    """A trace of ``lines`` short requests ``gap_ms`` apart: each ends (~10 ms) before the next leaves."""
    path = tmp_path / "trace.jsonl"
    rows = [{"timestamp": gap_ms * i, "input_length": 16, "output_length": 4} for i in range(lines)]
    path.write_text("\n".join(json.dumps(r) for r in rows))
    return f"trace:file={path}"


def spec(url: str, workload: str | None = None, n: int = 10_000, **kw) -> LoadSpec:
    rule = StopRule(warmup_iters=0, min_iters=1, min_time_s=0.0, max_time_s=30.0, max_iters=n, target_ci=1e-9)
    base = dict(base_url=url, model="stub", prompts=[], max_tokens=4, rate=1.0, arrival="trace", rule=rule)
    return LoadSpec(**{**base, "request_timeout_s": 20.0, "workload": workload, **kw})


def test_a_trace_reuses_its_connections(tmp_path):
    with StubServer(StubConfig(ttft_ms=2.0, itl_ms=1.0)) as stub:
        res = run(spec(stub.url, trace(tmp_path, 40), warmup_requests=2))
        accepted, requests = stub.stub.connections, stub.stub.requests
    assert res.errors == {} and len(res.measured) == 40 and requests == 42
    # one request in flight at a time: the warm-up's few connections carried all 42
    assert accepted <= raw_send.WARM + raw_send.SPARE, accepted
    assert all(r.sent >= r.scheduled for r in res.measured)  # never before its time


def test_a_reply_with_another_status_is_an_error_with_its_body_and_its_connection_is_closed(tmp_path):
    # the stub's requests 2, 4, ... (the warm-up's is its first) answer HTTP 500, keeping the connection
    with StubServer(StubConfig(ttft_ms=2.0, itl_ms=1.0, fail_every=2)) as stub:
        res = run(spec(stub.url, trace(tmp_path, 20)))
        accepted = stub.stub.connections
    failed = [r.error for r in res.measured if not r.ok]
    assert len(failed) == 10 and sum(res.errors.values()) == 10, res.errors
    assert all(e.startswith('HTTP 500: {"error": {"message": "stub: injected failure of request ') for e in failed)
    # each 500 came on a connection of its own: none was reused after its 500
    assert accepted >= 10, accepted


def test_a_stream_broken_midway_is_an_error_and_its_connection_is_not_reused(tmp_path):
    # the stub's requests 2, 4, ... send one token, an error event, and close the connection
    with StubServer(StubConfig(ttft_ms=2.0, itl_ms=1.0, error_every=2)) as stub:
        res = run(spec(stub.url, trace(tmp_path, 20)))
        accepted = stub.stub.connections
    assert res.errors.keys() == {
        f"stream error: stub: injected mid-stream error of request {n}" for n in range(2, 22, 2)
    }
    # no other error: a request sent on a broken connection would fail on its own
    assert sum(res.errors.values()) == 10 and accepted >= 10, (res.errors, accepted)


def test_a_server_that_dies_fails_the_rest_of_the_trace_each_in_one_line(tmp_path):
    argv = [sys.executable, "-m", "benchdb.testing.stub", "--port", "0", "--ttft-ms", "2", "--itl-ms", "1"]
    with child([*argv, "--exit-after-requests", "6"], stdout=subprocess.PIPE, text=True) as proc:
        url = proc.stdout.readline().split()[-1]
        res = run(spec(url, trace(tmp_path, 12)))
    # the warm-up and 5 lines are answered; the 7th line's connection closes unanswered as the stub
    # exits (so does the next one's, where it was taken before), and the later lines find no server
    assert [r.ok for r in res.measured] == [True] * 5 + [False] * 7
    errors = [r.error for r in res.measured[5:]]
    closed = "RemoteProtocolError: Server disconnected without sending a response."
    assert errors[0] == closed and errors[-1].startswith("ConnectionRefusedError: "), errors
    assert all(e == closed or e.startswith("ConnectionRefusedError: ") and "\n" not in e for e in errors), errors


def test_a_reply_slower_than_the_request_timeout_fails_as_a_timeout(tmp_path):
    with StubServer(StubConfig(ttft_ms=2000.0, itl_ms=1.0)) as stub:
        res = run(spec(stub.url, trace(tmp_path, 3, gap_ms=50.0), request_timeout_s=0.3))
    assert res.errors == {"timeout after 0.3 s": 3}
    assert all(0.29 < r.end - r.sent < 2.0 for r in res.measured)  # before the stub's first token


def test_a_trace_sends_what_httpx_sends(tmp_path):
    """The same target (the URL's query after the endpoint), the userinfo as basic auth, the
    user's headers: a trace's requests reach a server as the closed loop's do."""
    workload = trace(tmp_path, 2)
    seen = {}
    with StubServer(StubConfig(ttft_ms=1.0, itl_ms=1.0)) as stub:
        url = stub.url.replace("http://", "http://al%20ice:pw@") + "?key=K"
        for name, kw in (
            ("trace", {"workload": workload}),
            (
                "httpx",
                {"workload": None, "prompts": ["hi"], "rate": None, "arrival": "poisson", "concurrency": 1, "n": 2},
            ),
        ):
            res = run(spec(url, headers={"X-Team": "bench"}, endpoint="chat", **kw))
            assert res.errors == {}
            seen[name] = stub.stub.last_target, stub.stub.last_headers
    (target, headers), (httpx_target, httpx_headers) = seen["trace"], seen["httpx"]
    assert target == httpx_target == "/v1/chat/completions?key=K"
    for name in ("host", "authorization", "content-type", "x-team"):
        assert headers[name] == httpx_headers[name], name

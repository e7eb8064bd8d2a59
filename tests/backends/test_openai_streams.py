"""benchdb.backends.openai.streams: one streamed request timed from when it leaves, on the
single-connection clients the load generator keeps, against a real stub server; what a reply
that is not a 200 and a request that raised are recorded as."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

from conftest import need_module

from benchdb.backends.openai.streams import ERROR_BODY_BYTES, Clients, failure, refused, stream_request
from benchdb.schema.serving_metrics import RequestRecord
from benchdb.testing.stub import StubConfig, StubServer

need_module("httpx", "benchdb[serving]")

HEADERS = {"Content-Type": "application/json"}


def _body(max_tokens: int) -> bytes:
    doc = {"model": "stub", "prompt": "a b c", "max_tokens": max_tokens, "stream": True}
    return json.dumps({**doc, "stream_options": {"include_usage": True}}).encode()


async def _send(url: str, n: int, clients: Clients) -> list[RequestRecord]:
    records = []
    for i in range(n):
        client = clients.take()
        rec = RequestRecord(index=i, sent=0.0)
        await stream_request(client, url + "/v1/completions", _body(4), HEADERS, rec, chat=False, max_tokens=4)
        clients.give(client)
        records.append(rec)
    return records


def test_a_streamed_reply_is_timed_from_its_send_on_a_reused_connection():
    async def run(url):
        clients = Clients(timeout_s=10)
        try:
            return await _send(url, 3, clients), len(clients.every)
        finally:
            await clients.aclose()

    with StubServer(StubConfig(ttft_ms=2, itl_ms=1)) as stub:
        records, made = asyncio.run(run(stub.url))
        assert stub.stub.connections == 1  # one client, its connection kept alive between requests
    assert made == 1
    for rec in records:
        assert rec.error is None and rec.output_tokens == 4 and len(rec.chunks) == 4
        times = [rec.sent, rec.first_byte, *(t for t, _ in rec.chunks)]
        assert times == sorted(times) and rec.chunks[-1][0] > rec.sent


def test_a_refused_request_records_the_status_and_the_start_of_the_body():
    async def run(url):
        clients = Clients(timeout_s=10)
        try:
            return await _send(url, 2, clients)
        finally:
            await clients.aclose()

    with StubServer(StubConfig(ttft_ms=1, itl_ms=1, fail_every=2)) as stub:
        ok, failed = asyncio.run(run(stub.url))
    assert ok.error is None
    assert failed.error.startswith("HTTP 500: ") and failed.chunks == [] and failed.output_tokens is None
    long = refused(422, b"x" * (ERROR_BODY_BYTES * 3))
    assert long.startswith("HTTP 422: xxx") and "(" in long and len(long) < ERROR_BODY_BYTES + 100


def test_a_request_that_raised_is_its_timeout_or_its_error_on_one_line():
    assert failure(TimeoutError(), 2.5) == "timeout after 2.5 s"
    assert failure(asyncio.TimeoutError(), 300.0) == "timeout after 300 s"
    assert failure(ConnectionResetError("peer reset\nmore text"), 1) == "ConnectionResetError: peer reset"


def test_clients_are_reused_before_new_ones_are_made():
    async def run():
        clients = Clients(timeout_s=1)
        a, b = clients.take(), clients.take()
        clients.give(a)
        c = clients.take()
        await clients.aclose()
        return a, b, c, clients.every

    a, b, c, every = asyncio.run(run())
    assert a is not b and c is a and every == [a, b]
    assert all(x.is_closed for x in every)


def test_a_first_request_imports_nothing_its_clients_did_not_import_before_it():
    """httpx imports httpcore, h11 and anyio's backend at a client's first request (about 50 ms, ten
    times that beside a busy process): Clients imports them when it is made, so no timed request pays
    for them. Run in a fresh interpreter: this one imported them long ago."""
    code = """
import asyncio, json, sys
from benchdb.backends.openai.streams import Clients, stream_request
from benchdb.schema.serving_metrics import RequestRecord
from benchdb.testing.stub import StubConfig, StubServer

async def first(url, body):
    clients = Clients(timeout_s=10)
    before = set(sys.modules)
    client = clients.take()
    rec = RequestRecord(index=0, sent=0.0)
    await stream_request(client, url + "/v1/completions", body, {"Content-Type": "application/json"}, rec,
                         chat=False, max_tokens=4)
    await clients.aclose()
    return rec, sorted(set(sys.modules) - before)

with StubServer(StubConfig(ttft_ms=1.0, itl_ms=1.0)) as stub:
    rec, new = asyncio.run(first(stub.url, sys.stdin.buffer.read()))
print(json.dumps({"tokens": rec.tokens_out, "error": rec.error, "new": new}))
"""
    proc = subprocess.run([sys.executable, "-c", code], input=_body(4), capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr.decode()
    got = json.loads(proc.stdout)
    assert got["error"] is None and got["tokens"] == 4
    assert got["new"] == [], got["new"]

"""`benchdb dashboard` on a laptop: a real server process over a real warehouse, spoken to over real
sockets. A page from another site (DNS rebinding: its name, this machine's address) is refused; every
failure is an HTTP error with a one-line JSON body, never a dropped connection; HEAD answers as GET
does, without the body; `benchdb ingest` running beside many concurrent requests costs none of them."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from conftest import benchdb_cmd, child, make_run, write_suite

from benchdb.warehouse import Warehouse


@pytest.fixture
def warehouse(tmp_path) -> Path:
    write_suite(tmp_path / "results" / "first", n_files=3)
    db = tmp_path / "w.duckdb"
    Warehouse(db).ingest([tmp_path / "results"])
    return db


@pytest.fixture
def served(warehouse):
    """(host, port) of `benchdb dashboard --port 0` over the warehouse, stopped afterwards."""
    argv = [sys.executable, "-m", "benchdb", "dashboard", "--db", str(warehouse), "--port", "0"]
    with child(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) as proc:
        seen = []
        for line in proc.stderr:  # the charting library may be fetched first
            seen.append(line)
            m = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
            if m:
                break
        else:
            raise AssertionError("benchdb dashboard did not start:\n" + "".join(seen))
        # keep reading stderr so the server never blocks on a full pipe
        threading.Thread(target=proc.stderr.read, daemon=True).start()
        yield "127.0.0.1", int(m.group(1))


def raw(port: int, request: str) -> tuple[int, dict[str, str], bytes]:
    """Send ``request`` as written and read to the end: (status, headers, body). A connection
    closed without a status line fails the test."""
    with socket.create_connection(("127.0.0.1", port), timeout=60) as s:
        s.sendall(request.encode("latin-1"))
        data = b""
        while chunk := s.recv(65536):
            data += chunk
    assert data, f"the server closed the connection without an answer to {request.splitlines()[0]!r}"
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.lower(): v.strip() for k, _, v in (ln.partition(":") for ln in lines[1:])}
    return int(lines[0].split()[1]), headers, body


def get(port: int, path: str, host: str | None = None, method: str = "GET") -> tuple[int, dict[str, str], bytes]:
    return raw(port, f"{method} {path} HTTP/1.1\r\nHost: {host or f'127.0.0.1:{port}'}\r\nConnection: close\r\n\r\n")


def one_line_error(headers: dict[str, str], body: bytes) -> str:
    assert headers["content-type"] == "application/json"
    text = body.decode()
    assert "\n" not in text.rstrip("\n"), text
    doc = json.loads(text)
    assert set(doc) == {"error"} and doc["error"] and "\n" not in doc["error"], doc
    return doc["error"]


@pytest.mark.core
def test_a_foreign_host_header_is_refused(served):
    _, port = served
    for host in (f"evil.example:{port}", "evil.example", f"127.0.0.1.evil.example:{port}", f"localhost:{port + 1}"):
        for path in ("/api/runs", "/", "/api/views"):
            status, headers, body = get(port, path, host=host)
            assert status == 403, (host, path, status)
            assert "Host" in one_line_error(headers, body)
    status, headers, body = raw(port, "GET /api/runs HTTP/1.0\r\n\r\n")  # no Host header at all
    assert status == 403
    one_line_error(headers, body)
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"LocalHost:{port}", f"[::1]:{port}"):
        status, _, body = get(port, "/api/runs", host=host)
        assert status == 200, (host, body)
        assert json.loads(body)["rows"]


@pytest.mark.core
def test_head_answers_like_get_without_a_body(served):
    _, port = served
    for path in ("/", "/api/views", "/api/runs", "/api/nothing"):
        g_status, g_headers, g_body = get(port, path)
        h_status, h_headers, h_body = get(port, path, method="HEAD")
        assert h_status == g_status and h_status in (200, 404), (path, h_status)
        assert h_body == b"", path
        assert h_headers["content-type"] == g_headers["content-type"]
        assert int(h_headers["content-length"]) == len(g_body)


@pytest.mark.core
def test_every_failure_is_an_http_error_with_a_json_line(served, warehouse):
    _, port = served
    result_id = json.loads(get(port, "/api/results")[2])["rows"][0][0]
    part = next(Path(f"{warehouse}.samples").rglob("*.parquet"))
    part.write_bytes(b"not parquet")  # a corrupt samples part
    status, headers, body = get(port, f"/api/samples?result={result_id}")
    assert status == 500
    assert "parquet" in one_line_error(headers, body).lower()
    assert get(port, "/api/runs")[0] == 200  # the server is still there
    # what http.server answers by itself: a malformed request line, a method it has no handler for
    for request in (
        "BREW /api/runs HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
        "GARBAGE\r\n\r\n",
        f"OPTIONS / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n",
    ):
        status, headers, body = raw(port, request)
        assert 400 <= status < 600, request
        one_line_error(headers, body)
    status, headers, body = get(port, "/api/runs", method="POST")
    assert status == 405
    one_line_error(headers, body)


@pytest.mark.core
@pytest.mark.slow
def test_concurrent_requests_while_ingesting_never_get_503(served, warehouse, tmp_path):
    _, port = served
    stop = threading.Event()
    ingests: list[subprocess.CompletedProcess] = []

    def ingest_loop():
        n = 0
        while not stop.is_set():
            n += 1
            folder = tmp_path / "results" / f"later{n}"
            write_suite(folder, n_files=2, run=make_run())
            ingests.append(benchdb_cmd("ingest", str(folder), "--db", str(warehouse)))

    def request(i: int) -> tuple[int, bytes]:
        path = ("/api/runs", "/api/results", "/api/matrix", "/api/flagged")[i % 4]
        status, _, body = get(port, path)
        return status, body

    writer = threading.Thread(target=ingest_loop)
    writer.start()
    try:
        while not ingests:  # requests overlap ingests, not only precede them
            time.sleep(0.05)
        with ThreadPoolExecutor(max_workers=12) as pool:
            answers = list(pool.map(request, range(120)))
    finally:
        stop.set()
        writer.join()
    assert all(r.returncode == 0 for r in ingests), [r.stderr for r in ingests if r.returncode]
    failed = [(s, b[:200]) for s, b in answers if s != 200]
    assert not failed, f"{len(failed)} of 120 requests failed: {failed[:3]}"
    runs = json.loads(get(port, "/api/runs")[2])["rows"]
    assert len(runs) == 1 + len(ingests)  # and what was ingested is served

"""An endpoint's secrets are never stored, and benchdb talks only to the endpoint it was given:
the userinfo and query values of ``--url`` / ``--ab-url`` are hashed in every contract file,
hence in the warehouse and in what ``publish --repo`` uploads, while the live requests carry them where
they belong (the query after the endpoint's path); ``--url`` takes only http(s); the ``/v1/models``
probe follows no redirect. Real stub servers on 127.0.0.1, the real command line, a real warehouse and
the local fake Hub (tests/support/fakehub.py).

The run folder's ``plan.json`` keeps the URL as given: it is what ``--resume`` runs, it stays on this
machine, and neither ingest nor publish reads it."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from conftest import benchdb_cmd, cli, db_rows, need_module

from benchdb.testing.stub import StubConfig, StubServer

need_module("httpx", "benchdb[serving]")

USER, PASSWORD, KEY = "alice", "PWsecret1", "KEYsecret2"
SECRETS = (PASSWORD, KEY)
QUICK = [
    "--warmup",
    "1",
    "--min-iters",
    "5",
    "--min-time",
    "0.1",
    "--max-time",
    "1",
    "--max-background-cpu",
    "100%",
    "--seq-lens",
    "8",
    "--gen-tokens",
    "4",
]


def _secret_url(stub: StubServer, key: str = KEY) -> str:
    return f"http://{USER}:{PASSWORD}@{stub.host}:{stub.port}/?api_key={key}&trace=1"


def _leaks(text: str) -> list[str]:
    return [s for s in SECRETS if s in text]


def _parquet_text(data: bytes | Path) -> str:
    """A Parquet file's key-value metadata and rows, as text (its pages may be compressed)."""
    import io

    f = pq.ParquetFile(io.BytesIO(data) if isinstance(data, bytes) else data)
    meta = {k.decode(errors="replace"): v.decode(errors="replace") for k, v in (f.metadata.metadata or {}).items()}
    return repr(meta) + repr(f.read().to_pylist())


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    """One load point measured at a URL with a user, a password and an API key in its query, then
    ingested: (results folder, warehouse, the stub, the run's output)."""
    tmp = tmp_path_factory.mktemp("secret-url")
    out, db = tmp / "results", tmp / "w.duckdb"
    with StubServer(StubConfig(ttft_ms=1, itl_ms=1)) as stub:
        proc = benchdb_cmd(
            "run",
            "--backend",
            "openai",
            "--model",
            "stub",
            "--url",
            _secret_url(stub),
            "--server-hardware",
            "box",
            "--out",
            str(out),
            *QUICK,
        )
        target, headers = stub.stub.last_target, stub.stub.last_headers
    benchdb_cmd("ingest", str(out), "--db", str(db), check=True)
    return out, db, (target, headers), proc


def test_the_live_requests_carry_the_urls_query_after_the_endpoint(measured):
    """The endpoint's path goes before the URL's query (``/v1/completions?api_key=K``, not
    ``/?api_key=K/v1/completions``, which a server answers 404), and the userinfo is sent as basic auth."""
    _, db, (target, headers), proc = measured
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert target == f"/v1/completions?api_key={KEY}&trace=1"
    assert headers.get("authorization", "").startswith("Basic ")  # the userinfo, as HTTP basic auth
    assert db_rows(db, "SELECT status FROM results") == [{"status": "ok"}]


def test_url_secrets_are_stored_hashed_in_files_warehouse_and_publish(measured, hub, hub_env):
    """Neither ``alice:PWsecret1`` nor ``api_key=KEYsecret2`` is in any file's metadata (the run's config,
    the result's server record) or rows, the warehouse's tables, the published dataset, or the output."""
    out, db, _, proc = measured
    files = sorted(out.rglob("*.parquet"))
    assert files
    for f in files:
        assert not _leaks(_parquet_text(f)), f
        assert not [s for s in SECRETS if s.encode() in f.read_bytes()], f
    text = _parquet_text(files[0])
    assert "127.0.0.1" in text and "api_key=sha256:" in text  # the host stays, the key's value is hashed
    assert not _leaks(proc.stdout + proc.stderr)

    tables = [r["table_name"] for r in db_rows(db, "SELECT table_name FROM duckdb_tables()")]
    assert "runs" in tables and "results" in tables
    for t in tables:
        assert not _leaks(repr(db_rows(db, f'SELECT * FROM "{t}"'))), t
    assert not [s for s in SECRETS if s.encode() in db.read_bytes()]

    r = benchdb_cmd("publish", "--repo", "org/bench", "--db", str(db), env=hub_env)
    assert r.returncode == 0, r.stderr
    uploaded = hub.repos[("dataset", "org/bench")].files
    assert any(p.startswith("samples/") for p in uploaded)
    for path, data in uploaded.items():
        body = _parquet_text(data) if path.endswith(".parquet") else data.decode(errors="replace")
        assert not _leaks(body), path
    assert not _leaks(r.stdout + r.stderr)


def test_the_same_url_is_recorded_the_same_and_another_key_differently():
    """The stored form keeps a scenario's record stable: the same URL, the same text; another key or
    another host, another text."""
    from benchdb.text import recorded_url

    url = f"http://{USER}:{PASSWORD}@h:8000/v1?api_key={KEY}"
    assert recorded_url(url) == recorded_url(url)
    assert recorded_url(url) != recorded_url(url.replace(KEY, "other"))
    assert recorded_url(url) != recorded_url(url.replace("h:8000", "g:8000"))
    assert not _leaks(recorded_url(url)) and recorded_url(url).startswith("http://sha256:")
    assert recorded_url("http://127.0.0.1:8000") == "http://127.0.0.1:8000"


@pytest.mark.slow
def test_ab_url_secrets_are_stored_hashed(tmp_path):
    """--ab-url: both endpoints' userinfo and keys are hashed in both sides' files, including the
    config's deployments and the runs' options."""
    out = tmp_path / "res"
    with StubServer(StubConfig(ttft_ms=1, itl_ms=1)) as a, StubServer(StubConfig(ttft_ms=1, itl_ms=1)) as b:
        proc = benchdb_cmd(
            "run",
            "--backend",
            "openai",
            "--model",
            "stub",
            "--ab-url",
            _secret_url(a),
            _secret_url(b),
            "--server-hardware",
            "box",
            "--repeats",
            "2",
            "--out",
            str(out),
            "--db",
            str(tmp_path / "w.duckdb"),
            *QUICK,
        )
        assert proc.returncode == 0, proc.stderr
        assert a.stub.requests > 0 and b.stub.requests > 0
    files = sorted(out.rglob("*.parquet"))
    assert len(files) == 2
    for f in files:
        assert not _leaks(_parquet_text(f)), f
    assert not _leaks(proc.stdout + proc.stderr)


@pytest.mark.parametrize(
    "url", ["file:///etc/passwd", "ftp://127.0.0.1/x", "javascript:alert(1)", "127.0.0.1:8000", "http:///v1", "http://"]
)
def test_url_takes_only_http_and_https(tmp_path, url):
    """A URL that is not http(s) with a host is refused by --url and --ab-url in one line naming the
    flag, before any scenario runs or anything is written."""
    out = tmp_path / "out"
    for args, flag in (
        (["--url", url, "--server-hardware", "box"], "--url"),
        (["--ab-url", url, "http://127.0.0.1:9", "--server-hardware", "box"], "--ab-url"),
    ):
        r = cli("run", "--backend", "openai", "--model", "m", *args, "--out", out, *QUICK)
        lines = [ln for ln in r.output.splitlines() if ln.strip()]
        assert r.exit_code == 2 and len(lines) == 1, (args, r.output)
        assert flag in lines[0] and "http://" in lines[0] and "Traceback" not in r.output, lines
    assert not out.exists()


def _server(handler_for) -> tuple[ThreadingHTTPServer, threading.Thread]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler_for)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    return server, thread


def test_the_models_probe_follows_no_redirect(tmp_path):
    """An endpoint whose /v1/models redirects to another address: benchdb sends nothing there and
    says why in the scenario's one line."""
    hits: list[str] = []  # what the other address was asked

    class Target(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            hits.append(self.path)
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(b'{"data": [{"id": "elsewhere"}]}')

    target, _ = _server(Target)
    where = f"http://127.0.0.1:{target.server_address[1]}"

    class Redirect(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            self.send_response(302)
            self.send_header("Location", where + self.path)
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_POST = do_GET

    redirect, _ = _server(Redirect)
    try:
        proc = benchdb_cmd(
            "run",
            "--backend",
            "openai",
            "--model",
            "m",
            "--url",
            f"http://127.0.0.1:{redirect.server_address[1]}",
            "--server-hardware",
            "box",
            "--out",
            str(tmp_path / "out"),
            *QUICK,
        )
    finally:
        redirect.shutdown()
        target.shutdown()
    assert hits == []
    assert proc.returncode == 3 and "Traceback" not in proc.stderr, proc.stderr
    assert "redirect" in proc.stdout and where in proc.stdout and "follows no redirect" in proc.stdout, proc.stdout


#: URLs whose password holds a character that ends a URL in running text (a quote, a space, ``<``).
_AWKWARD = [
    f'http://{USER}:PW"{PASSWORD}@h:8000/?api_key={KEY}',
    f"http://{USER}:PW {PASSWORD}@h:8000/?api_key={KEY}",
    f"http://{USER}:PW'{PASSWORD}@h:8000/?api_key={KEY}",
    f"http://{USER}:PW<{PASSWORD}>@h:8000/?api_key={KEY}",
]


@pytest.mark.parametrize("url", _AWKWARD)
def test_a_config_url_is_recorded_whole_whatever_it_holds(url):
    """A run's ``url`` / ``ab_url`` is recorded as one URL, not cut where running text would end one:
    a quote or a space in the password leaves neither it nor the key in the config."""
    from benchdb.text import recorded_url, redact_config

    config = redact_config({"url": url, "ab_url": [url, url], "deployments": {"base": {"url": url}}})
    assert not _leaks(repr(config)), config
    assert config["url"] == recorded_url(url) and config["ab_url"] == [recorded_url(url)] * 2
    assert config["url"].startswith("http://sha256:") and "api_key=sha256:" in config["url"]


@pytest.mark.parametrize("url", _AWKWARD)
def test_url_refuses_whitespace_quotes_and_angle_brackets(tmp_path, url):
    """Such a URL is refused with one line that says to percent-encode the character, and names no
    secret; nothing is measured or written."""
    from benchdb.backends.openai.urls import check_url
    from benchdb.errors import BenchdbError

    with pytest.raises(BenchdbError, match="percent-encode"):
        check_url(url)
    assert check_url(f"http://{USER}:PW%22{PASSWORD}@h:8000/") == f"http://{USER}:PW%22{PASSWORD}@h:8000/"
    out = tmp_path / "out"
    for args, flag in (
        (["--url", url, "--server-hardware", "box"], "--url"),
        (["--ab-url", "http://127.0.0.1:9", url, "--server-hardware", "box"], "--ab-url"),
    ):
        r = cli("run", "--backend", "openai", "--model", "m", *args, "--out", out, *QUICK)
        lines = [ln for ln in r.output.splitlines() if ln.strip()]
        assert r.exit_code == 2 and len(lines) == 1, (args, r.output)
        assert flag in lines[0] and "percent-encode" in lines[0] and "Traceback" not in r.output, lines
        assert not _leaks(r.output), r.output
    assert not out.exists()

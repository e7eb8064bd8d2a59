"""benchdb.backends.openai.urls: where a request to the endpoint a user names goes (its query after
the endpoint's path), how the URL's userinfo is sent (basic auth, never in the request line), and a
probe that follows no redirect. A real HTTP server on 127.0.0.1."""

from __future__ import annotations

import base64
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from benchdb.backends.openai.urls import Redirected, check_url, endpoint, get
from benchdb.errors import BenchdbError

pytestmark = pytest.mark.core


def test_an_endpoint_goes_after_the_base_urls_path_and_before_its_query():
    assert endpoint("http://h/v1?x=1", "/chat/completions") == "http://h/v1/chat/completions?x=1"
    assert endpoint("https://u:p@h:8443/", "/v1/models") == "https://u:p@h:8443/v1/models"


@contextmanager
def _server(status: int, seen: list[tuple[str, str | None]]) -> Iterator[str]:
    """A server answering every GET with ``status`` (a 302 names another address), recording each
    request's target and Authorization header; yields its base URL."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_GET(self):
            seen.append((self.path, self.headers.get("Authorization")))
            body = b'{"data": []}' if status == 200 else b""
            self.send_response(status)
            if status == 302:
                self.send_header("Location", "http://127.0.0.1:9/elsewhere?token=SECRET")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def test_a_probe_sends_the_userinfo_as_basic_auth_and_the_query_after_the_path():
    seen: list[tuple[str, str | None]] = []
    with _server(200, seen) as host:
        assert get(f"http://al%20ice:p%40ss@{host}/base?key=K", "/v1/models", 5) == b'{"data": []}'
        assert get(f"http://{host}", "/health", 5) == b'{"data": []}'
    (target, auth), (plain_target, plain_auth) = seen
    assert target == "/base/v1/models?key=K"
    assert auth == "Basic " + base64.b64encode(b"al ice:p@ss").decode("ascii")
    assert (plain_target, plain_auth) == ("/health", None)


def test_a_probe_follows_no_redirect_and_another_status_is_an_oserror():
    seen: list[tuple[str, str | None]] = []
    with _server(302, seen) as host, pytest.raises(Redirected) as err:
        get(f"http://{host}", "/v1/models", 5)
    message = str(err.value)
    assert message.startswith("/v1/models redirects (HTTP 302) to http://127.0.0.1:9/elsewhere?token=sha256:")
    assert "follows no redirect" in message and "SECRET" not in message
    assert len(seen) == 1  # asked once, nothing sent where the redirect points
    with _server(500, []) as host, pytest.raises(OSError):
        get(f"http://{host}", "/v1/models", 5)


def test_only_an_http_url_with_a_host_is_taken():
    assert check_url("  http://127.0.0.1:8000/v1 ") == "http://127.0.0.1:8000/v1"
    assert check_url("https://h") == "https://h"
    for bad in ("ftp://h/x", "127.0.0.1:8000", "http://", "http://h:port/"):
        with pytest.raises(BenchdbError, match="--ab-url .* is not an http"):
            check_url(bad, "--ab-url")
    with pytest.raises(BenchdbError, match="percent-encode"):
        check_url("http://h/a b")

"""`benchdb serve`: the dashboard over HTTP, read-only.

GET ``/`` is the page, ``/static/<file>`` its scripts and styles, ``/api/views`` the catalog and
``/api/<view>?filter=value`` a view's rows as JSON. Every other method is refused (405): the
server has no way to change the warehouse. Each API request opens its own read-only, sandboxed
connection and closes it, so the file is never held open between requests: `benchdb ingest` can
write while the server runs, and the next load shows what it added.
"""

from __future__ import annotations

import ipaddress
import json
import mimetypes
import socket
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

from benchdb.dashboard import api
from benchdb.errors import BenchdbError

STATIC = Path(__file__).parent / "static"


def page(mode: str) -> bytes:
    """The page, told where its data comes from (``server``: /api; ``static``: data/*.json)."""
    return (STATIC / "index.html").read_text(encoding="utf-8").replace("{{mode}}", mode).encode()


def is_loopback(host: str) -> bool:
    if host in ("localhost", ""):
        return host == "localhost"
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        try:
            return all(ipaddress.ip_address(a[4][0]).is_loopback for a in socket.getaddrinfo(host, None))
        except OSError:
            return False


class Handler(BaseHTTPRequestHandler):
    server_version = "benchdb-serve"
    db: str | None = None

    def log_message(self, format, *args):      # noqa: A002 (the base class's name)
        return                                  # quiet: the terminal shows the URL, not every request

    def _send(self, status: int, body: bytes, ctype: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status: int, doc) -> None:
        self._send(status, json.dumps(doc, allow_nan=False).encode(), "application/json")

    def do_GET(self):  # noqa: N802 (http.server's name)
        url = urlsplit(self.path)
        path = url.path
        if path in ("/", "/index.html"):
            return self._send(200, page("server"), "text/html; charset=utf-8")
        if path.startswith("/static/vendor/"):
            from benchdb.dashboard import assets

            vendored = assets.files().get(path.removeprefix("/static/vendor/"))
            if vendored is None or not vendored.is_file():
                return self._json(404, {"error": f"no vendored file {path}: fetch them with {assets.INSTALL}"})
            return self._send(200, vendored.read_bytes(), mimetypes.guess_type(vendored.name)[0] or "text/plain")
        if path.startswith("/static/"):
            name = path.removeprefix("/static/")
            f = STATIC / name
            if "/" in name or name.startswith(".") or not f.is_file():
                return self._json(404, {"error": f"no file {name}"})
            return self._send(200, f.read_bytes(), mimetypes.guess_type(name)[0] or "application/octet-stream")
        if path == "/api/views":
            return self._json(200, api.catalog())
        if path.startswith("/api/"):
            params = dict(parse_qsl(url.query))
            try:
                from benchdb.warehouse import Warehouse

                with Warehouse(self.db, wait_s=10).reading() as con:
                    return self._json(200, api.query(con, path.removeprefix("/api/"), params))
            except api.UnknownView as exc:
                return self._json(404 if "no dashboard view" in str(exc) else 400, {"error": str(exc)})
            except BenchdbError as exc:
                return self._json(503, {"error": str(exc)})
        return self._json(404, {"error": f"nothing at {path}"})

    def _refuse(self):
        self._json(HTTPStatus.METHOD_NOT_ALLOWED, {"error": "the dashboard is read-only"})

    do_POST = do_PUT = do_DELETE = do_PATCH = _refuse  # noqa: N815


def make_server(db: str | None, host: str, port: int) -> ThreadingHTTPServer:
    handler = type("BoundHandler", (Handler,), {"db": db})
    return ThreadingHTTPServer((host, port), handler)

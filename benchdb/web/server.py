"""`benchdb dashboard`: the dashboard over HTTP, read-only.

GET ``/`` is the page, ``/static/<file>`` its scripts and styles, ``/api/views`` the catalog and
``/api/<view>?filter=value`` a view's rows as JSON; HEAD answers as GET without the body. Every
other method is refused (405): the server has no way to change the warehouse. Each API request
reads the newest snapshot published when it began, read-only and sandboxed, whole, until it ends
(:mod:`benchdb.store.latest`): `benchdb ingest` and `benchdb db compact` can write while the server
runs, a request never sees half a write or a generation of samples removed under it, and the next
request after a write shows what it added. An answer is kept with its snapshot and given again to the
same request while no write has published (:meth:`benchdb.store.latest.Latest.answer`); the views the
page opens unfiltered are computed of each snapshot as soon as it is published, in a thread of their own
(:meth:`benchdb.store.latest.Latest.keep_warm`), so the first request after a write usually finds its
answer kept.

A request whose Host header names neither the address the server listens on nor this machine's
loopback (with the server's port) is refused (403): a page of another site that rebinds its own
name to 127.0.0.1 reaches the server, but with its own name in the header. Every failure, also
those http.server answers itself (a malformed request line, an unknown method), is an HTTP error
with a one-line JSON body ``{"error": "..."}``.
"""

from __future__ import annotations

import ipaddress
import json
import mimetypes
import socket
import sys
from collections.abc import Callable
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from benchdb.errors import BenchdbError, clip, first_line
from benchdb.store.latest import Latest
from benchdb.web import json_rows
from benchdb.web import views as api

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


#: Names a request's Host header may give besides the listening address (with the server's port).
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")


def split_host(header: str) -> tuple[str, int | None]:
    """(name, port) of a Host header (``name``, ``name:port``, ``[v6]``, ``[v6]:port``); port
    None when absent; ValueError when it is not a host."""
    text = header.strip()
    if text.startswith("["):
        name, _, rest = text[1:].partition("]")
        port = rest.removeprefix(":") if rest.startswith(":") else None
        if rest and port is None:
            raise ValueError(header)
    else:
        name, sep, port_text = text.rpartition(":")
        name, port = (name, port_text) if sep else (text, None)
    if not name or (port is not None and not port.isdigit()):
        raise ValueError(header)
    return name.lower().rstrip("."), int(port) if port is not None else None


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def answer_of(view: str, params: dict[str, str]) -> tuple[tuple, Callable[[Any], bytes]]:
    """The key an API request's answer is kept under (:meth:`Latest.answer`) and what computes it."""

    def compute(con) -> bytes:
        return json_rows.answer(con, view, params)

    return (view, tuple(sorted(params.items()))), compute


def warm_jobs() -> list[tuple[tuple, Callable[[Any], bytes]]]:
    """The answers the server computes of each new snapshot before anyone asks (:meth:`Latest.keep_warm`):
    every view the page opens with no filter (its navigation and its home page), as the page asks them."""
    return [answer_of(name, {}) for name in api.DEFAULT_VIEWS]


class Handler(BaseHTTPRequestHandler):
    server_version = "benchdb-serve"
    #: A request line without a version is answered with a status line and headers all the same.
    default_request_version = "HTTP/1.0"
    #: The newest published snapshot of the warehouse, which every API request reads (one each, whole).
    latest: Latest
    #: Host header names accepted besides :data:`LOOPBACK_NAMES` (the listening address).
    names: frozenset[str] = frozenset()
    #: Listening on every address: any address literal names this server (only a name can be rebound).
    any_address = False
    port = 0
    head_only = False

    def log_message(self, format, *args):  # noqa: A002 (the base class's name)
        return  # quiet: the terminal shows the URL, not every request

    def _send(self, status: int, body: bytes, ctype: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.end_headers()
        if not self.head_only:
            self.wfile.write(body)

    def _json(self, status: int, doc) -> None:
        self._send(status, json.dumps(doc, allow_nan=False).encode(), "application/json")

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """http.server's own refusals (bad request line, unknown method, too long a header) as JSON."""
        if code == HTTPStatus.NOT_IMPLEMENTED:  # a method without a handler
            code, message = HTTPStatus.METHOD_NOT_ALLOWED, f"the dashboard answers GET and HEAD, not {self.command}"
        self.close_connection = True
        self._json(code, {"error": clip(message or HTTPStatus(code).phrase)})

    def host_refusal(self) -> str | None:
        """Why the request's Host header does not name this server, or None when it does."""
        port = self.port
        header = self.headers.get("Host")
        if not header:
            return f"no Host header: ask for http://127.0.0.1:{port}/"
        try:
            name, given = split_host(header)
        except ValueError:
            name, given = "", None
        if (given if given is not None else 80) == port and (
            name in LOOPBACK_NAMES or name in self.names or (self.any_address and _is_ip(name))
        ):
            return None
        return (
            f"Host {clip(header, 200)!r} does not name this server: ask for "
            f"http://127.0.0.1:{port}/ (a page of another site cannot read the dashboard)"
        )

    def do_HEAD(self):  # noqa: N802 (http.server's name)
        self.head_only = True
        self.do_GET()

    def do_GET(self):  # noqa: N802 (http.server's name)
        refusal = self.host_refusal()
        if refusal is not None:
            return self._json(HTTPStatus.FORBIDDEN, {"error": refusal})
        try:
            return self._get()
        except Exception as exc:  # a corrupt part, a bug: still an answer, never a dropped connection
            problem = f"{type(exc).__name__}: {first_line(exc)}"
            print(f"benchdb dashboard: {self.command} {clip(self.path, 200)}: {problem}", file=sys.stderr)
            return self._json(HTTPStatus.INTERNAL_SERVER_ERROR, {"error": f"cannot answer: {problem}"})

    def _get(self):
        url = urlsplit(self.path)
        path = url.path
        if path in ("/", "/index.html"):
            return self._send(200, page("server"), "text/html; charset=utf-8")
        if path.startswith("/static/vendor/"):
            from benchdb.web import assets

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
            view = path.removeprefix("/api/")
            try:
                # asked again of the same snapshot (a reload, a second reader, the warm-up): the bytes it gave
                body = self.latest.answer(*answer_of(view, params))
                return self._send(200, body, "application/json")
            except api.UnknownView as exc:
                return self._json(404 if "no dashboard view" in str(exc) else 400, {"error": str(exc)})
            except BenchdbError as exc:
                return self._json(503, {"error": str(exc)})
        return self._json(404, {"error": f"nothing at {path}"})

    def _refuse(self):
        self._json(HTTPStatus.METHOD_NOT_ALLOWED, {"error": "the dashboard is read-only"})

    do_POST = do_PUT = do_DELETE = do_PATCH = _refuse  # noqa: N815


class Server(ThreadingHTTPServer):
    latest: Latest | None = None

    def server_close(self) -> None:
        super().server_close()
        if self.latest is not None:
            self.latest.close()

    def handle_error(self, request, client_address) -> None:
        exc = sys.exc_info()[1]
        if isinstance(exc, ConnectionError):  # the browser went away mid-answer
            return
        print(f"benchdb dashboard: {type(exc).__name__}: {first_line(exc) if exc else ''}", file=sys.stderr)


class Server6(Server):
    address_family = socket.AF_INET6


def make_server(db: str | None, host: str, port: int, *, warm: bool = True) -> Server:
    """The dashboard's server of ``db`` on ``host``:``port`` (0: any free port); ``warm``: the default
    views' answers computed of each new snapshot as it is published (:func:`warm_jobs`)."""
    any_address = host in ("", "0.0.0.0", "::")
    names = {host.lower().strip("[]").rstrip(".")} - {""}
    if any_address:
        names.add(socket.gethostname().lower())
    latest = Latest(db, wait_s=10)
    handler: type[Handler] = type("BoundHandler", (Handler,), {"any_address": any_address, "latest": latest})
    server = (Server6 if ":" in host else Server)((host.strip("[]"), port), handler)
    server.latest = latest
    handler.names = frozenset(names | {str(server.server_address[0]).lower()})  # the address bound
    handler.port = server.server_port
    if warm:
        latest.keep_warm(warm_jobs())
    return server

"""The local HTTP server the page is loaded from: 127.0.0.1 only, cross-origin isolated.

WASM threads need ``SharedArrayBuffer``, which Chromium grants only to a cross-origin isolated
page: every response carries ``Cross-Origin-Opener-Policy: same-origin`` and
``Cross-Origin-Embedder-Policy: require-corp``. ``.mjs`` is served as JavaScript and ``.wasm`` as
``application/wasm`` (streaming compilation refuses anything else). Routes: ``/`` the page,
``/bench.mjs`` its script, ``/ort/<file>`` the onnxruntime-web files, ``/model/<name>`` the files
of the model being measured (set with :meth:`Server.serve_model`). Nothing else is served.
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

HERE = Path(__file__).parent
MIME = {
    ".html": "text/html; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".wasm": "application/wasm",
    ".onnx": "application/octet-stream",
    ".data": "application/octet-stream",
}
ISOLATION = {
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Embedder-Policy": "require-corp",
    "Cross-Origin-Resource-Policy": "same-origin",
    "Cache-Control": "no-store",
}


class Server:
    """``with Server(ort_dir) as srv: srv.url`` — closed (socket and thread) on exit."""

    def __init__(self, ort_dir: Path):
        self.routes: dict[str, Path] = {"/": HERE / "page.html", "/bench.mjs": HERE / "bench.mjs"}
        for f in Path(ort_dir).iterdir():
            if f.is_file():
                self.routes[f"/ort/{f.name}"] = f
        routes = self.routes

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 (http.server's name)
                path = routes.get(self.path.split("?", 1)[0])
                if path is None or not path.is_file():
                    self.send_error(404)
                    return
                size = path.stat().st_size
                self.send_response(200)
                self.send_header("Content-Type", MIME.get(path.suffix, "application/octet-stream"))
                self.send_header("Content-Length", str(size))
                for k, v in ISOLATION.items():
                    self.send_header(k, v)
                self.end_headers()
                with open(path, "rb") as fh:
                    while chunk := fh.read(1 << 20):
                        self.wfile.write(chunk)

            def log_message(self, *args):  # quiet
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, name="benchdb-ortweb-http", daemon=True)

    def serve_model(self, path: Path) -> str:
        """Serve an ONNX file (and its external data beside it); returns its URL path."""
        path = Path(path)
        for f in path.parent.iterdir():
            if f.is_file():
                self.routes[f"/model/{f.name}"] = f
        return f"/model/{path.name}"

    def __enter__(self) -> Server:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        if self.thread.is_alive():
            self.httpd.shutdown()
        self.httpd.server_close()

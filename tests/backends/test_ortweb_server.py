"""benchdb.backends.ortweb.server: the page's server listens on 127.0.0.1 only, is cross-origin
isolated, serves the right MIME types and nothing but its routes, and is closed with the run."""

from __future__ import annotations

import socket
import urllib.error
import urllib.request

import pytest

from benchdb.backends.ortweb.server import Server


@pytest.mark.core
def test_server_headers_mime_types_and_close(tmp_path):
    for name, body in (("ort.min.mjs", b"export {}"), ("x.wasm", b"\0asm\1\0\0\0")):
        (tmp_path / name).write_bytes(body)
    model = tmp_path / "m" / "model.onnx"
    model.parent.mkdir()
    model.write_bytes(b"onnx")
    (model.parent / "model.onnx.data").write_bytes(b"weights")
    with Server(tmp_path) as srv:
        assert srv.httpd.server_address[0] == "127.0.0.1"
        url_path = srv.serve_model(model)
        got = {}
        for path in ("/", "/bench.mjs", "/ort/ort.min.mjs", "/ort/x.wasm", url_path, "/model/model.onnx.data"):
            with urllib.request.urlopen(srv.url + path, timeout=10) as resp:
                got[path] = (
                    resp.headers["Content-Type"],
                    resp.headers["Cross-Origin-Opener-Policy"],
                    resp.headers["Cross-Origin-Embedder-Policy"],
                    resp.read(),
                )
        with pytest.raises(urllib.error.HTTPError) as e:  # nothing but the routes is served
            urllib.request.urlopen(srv.url + "/../../etc/passwd", timeout=10)
        assert e.value.code == 404
        port = srv.httpd.server_address[1]
    assert got["/ort/x.wasm"][0] == "application/wasm"
    assert got["/ort/ort.min.mjs"][0].startswith("text/javascript")
    assert got["/bench.mjs"][0].startswith("text/javascript")
    assert got["/"][0].startswith("text/html")
    assert all(v[1] == "same-origin" and v[2] == "require-corp" for v in got.values())
    assert got["/model/model.onnx.data"][3] == b"weights"
    with socket.socket() as s:  # closed with the run
        assert s.connect_ex(("127.0.0.1", port)) != 0

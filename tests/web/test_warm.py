"""`benchdb dashboard` computes the answers of the views the page opens unfiltered as soon as a write
publishes a snapshot, so the first request after it finds them kept; a filtered request still computes.
A real server over real HTTP on a real warehouse, written by a real ingest."""

from __future__ import annotations

import json
import threading
import time
import urllib.request
from pathlib import Path

import numpy as np
import pytest
from conftest import make_meta, make_run, write_file

from benchdb.warehouse import Warehouse
from benchdb.web import views as api
from benchdb.web.server import answer_of, make_server, warm_jobs

pytestmark = pytest.mark.core


def _write_run(folder: Path, day: int) -> None:
    run = make_run(started_at=f"2026-11-{day:02d}T10:00:00+00:00")
    for model in ("matmul:64", "matmul:128"):
        write_file(folder, make_meta(run, model_id=model), np.random.default_rng(day).normal(1e-3, 1e-5, 40))


def _get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=60) as resp:
        assert resp.status == 200
        return resp.read()


def _wait_kept(latest, keys, timeout_s: float = 120.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not all(latest.kept(k) for k in keys):
        assert time.monotonic() < deadline, [k for k in keys if not latest.kept(k)]
        time.sleep(0.05)


def test_after_an_ingest_the_default_views_are_answered_from_the_warm_up(tmp_path):
    db = tmp_path / "w.duckdb"
    _write_run(tmp_path / "d1", 1)
    Warehouse(db).ingest([tmp_path / "d1"])
    srv = make_server(str(db), "127.0.0.1", 0)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{srv.server_address[1]}/api"
    latest = srv.latest
    keys = [key for key, _ in warm_jobs()]
    assert {k[0] for k in keys} == {v.name for v in api.VIEWS.values() if not v.required}
    try:
        _wait_kept(latest, keys)  # at start
        _write_run(tmp_path / "d2", 2)
        assert Warehouse(db).ingest([tmp_path / "d2"]).new == 2
        _wait_kept(latest, keys)  # of the snapshot the ingest published, with no request asking
        computed = latest.computed
        runs = json.loads(_get(f"{base}/runs"))
        assert len(runs["rows"]) == 2  # the new snapshot's answer
        bodies = {view: _get(f"{base}/{view}") for view in api.DEFAULT_VIEWS}
        assert latest.computed == computed  # every one given as kept
        with latest.reading() as con:  # and each is what a request would have computed
            for view, body in bodies.items():
                assert body == answer_of(view, {})[1](con), view

        filtered = json.loads(_get(f"{base}/results?model=matmul:64"))
        assert latest.computed == computed + 1 and {r[2] for r in filtered["rows"]} == {"matmul:64"}
    finally:
        srv.shutdown()
        srv.server_close()


def test_a_server_without_warm_up_computes_the_first_request(tmp_path):
    db = tmp_path / "w.duckdb"
    _write_run(tmp_path / "d1", 1)
    Warehouse(db).ingest([tmp_path / "d1"])
    srv = make_server(str(db), "127.0.0.1", 0, warm=False)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        time.sleep(0.5)  # two of the warm-up's looks, had it been on
        assert srv.latest.computed == 0
        _get(f"http://127.0.0.1:{srv.server_address[1]}/api/runs")
        assert srv.latest.computed == 1
    finally:
        srv.shutdown()
        srv.server_close()

"""The static site's packed files (benchdb.web.packed): many results' raw samples to a binary file, values
in 16 bits, and many series' histories to a JSON file. Every result decodes, in Python and in a real
Chromium (static/packed.js), to the rows `benchdb dashboard` sends, each value within the bound the page
states; a result past the server's limit is cut where the server cuts it; the file an id is in is the
same in both languages."""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from conftest import REPO, child, free_port, make_meta, make_run, wait_for_server, write_file

from benchdb.schema import contract
from benchdb.warehouse import Warehouse
from benchdb.web import packed
from benchdb.web import views as api

SCREENS = REPO / "build" / "dashboard-screens"
#: Ids whose file both languages must agree on: ASCII, a UUID-like id, non-ASCII (UTF-8 bytes hashed).
IDS = ["", "a", "foobar", "0193a2f4-7c1e-7b2a-9d3e-5f6a7b8c9d0e", "série-ü-✓", "r" * 200]


def _mixed(folder: Path, run: dict, model: str) -> None:
    """One scenario whose samples take every codec: latency (log, two repeats), power with zeros
    (lin), a constant memory figure (const), iterations with gaps (stored, not implied)."""
    meta = make_meta(run, model_id=model)
    rng = np.random.default_rng(3)
    rows = [("latency_s", "s", i // 2, i * 1e-3, float(v), i % 2) for i, v in enumerate(rng.lognormal(-7, 0.3, 60))]
    power = zip((0, 3, 4, 9, 12), (0.0, 35.5, 80.25, 0.0, 61.0), strict=True)
    rows += [("power_w", "W", it, it * 0.1, w, 0) for it, w in power]
    rows += [("peak_memory_bytes", "bytes", 0, 0.0, 2.5e9, 0)]
    contract.write_scenario(folder / f"{model}.parquet", meta, contract.samples_table(meta, rows))


@pytest.fixture
def warehouse(tmp_path) -> Path:
    res = tmp_path / "results"
    for day in (1, 2):
        run = make_run(started_at=f"2026-11-{day:02d}T10:00:00+00:00")
        _mixed(res / f"d{day}", run, "matmul:64")
        latency = np.random.default_rng(day).normal(1e-3, 1e-5, 40)
        write_file(res / f"d{day}", make_meta(run, model_id="matmul:128"), latency)
        write_file(res / f"d{day}", make_meta(run, model_id="matmul:4096", status="oom", error="out of memory"), [])
    db = tmp_path / "w.duckdb"
    Warehouse(db).ingest([res])
    return db


def _result_ids(db: Path) -> list[str]:
    with Warehouse(db).reading() as con:
        return [r[0] for r in con.execute("SELECT result_id FROM results ORDER BY result_id").fetchall()]


def _site(db: Path, out: Path) -> dict:
    from benchdb.web.site import build

    build(str(db), out)
    return json.loads((out / "data" / "views.json").read_text())["site"]["shards"]


def _check_rows(decoded: dict, served: dict, segments: list) -> None:
    """``decoded`` holds ``served``'s rows: the same samples in the same order, each value within its
    segment's bound."""
    assert decoded["columns"] == served["columns"] == list(packed.COLUMNS)
    assert len(decoded["rows"]) == len(served["rows"])
    bounds = []
    for _metric, _unit, _repeat, n, _it, value, t_offset in segments:
        bounds += [(value, t_offset)] * n
    for got, want, (value, t_offset) in zip(decoded["rows"], served["rows"], bounds, strict=True):
        assert got[:4] == want[:4]
        for g, w, param in ((got[4], want[4], t_offset), (got[5], want[5], value)):
            slack = packed.error_bound(param) * (abs(w) if param[0] == "log" else 1)
            assert abs(g - w) <= slack * (1 + 1e-9) + 1e-15, (got, want, param)


@pytest.mark.core
def test_every_result_decodes_to_the_servers_samples_within_the_bound(warehouse, tmp_path):
    shards = _site(warehouse, tmp_path / "site")
    files = sorted((tmp_path / "site" / "data" / "samples").iterdir())
    assert [f.name for f in files] == [f"{k}.bin" for k in range(shards["samples"])]
    kinds = set()
    with Warehouse(warehouse).reading() as con:
        for rid in _result_ids(warehouse):
            path = tmp_path / "site" / "data" / "samples" / f"{packed.shard_of(rid, shards['samples'])}.bin"
            decoded = packed.read_samples(path, rid)
            served = api.query(con, "samples", {"result": rid})
            assert decoded is not None
            assert (decoded["statistics"], decoded["command"]) == (served["statistics"], served["command"])
            assert decoded["truncated"] is served["truncated"] is False
            _check_rows(decoded, served, decoded["segments"])
            kinds |= {p[0] for seg in decoded["segments"] for p in seg[5:]} | {seg[4][0] for seg in decoded["segments"]}
            if not served["rows"]:  # a failed result: no samples, but what it was
                status = decoded["statistics"]["columns"].index("status")
                assert decoded["statistics"]["rows"][0][status] == "oom"
    assert kinds == {"log", "lin", "const", "from", "i32"}


@pytest.mark.core
def test_a_result_past_the_limit_is_cut_where_the_server_cuts_it(warehouse, tmp_path):
    (tmp_path / "out").mkdir()
    with Warehouse(warehouse).reading() as con:
        shards = packed.write_samples(con, tmp_path / "out", {}, limit=25)
        for rid in _result_ids(warehouse):
            served = api.query(con, "samples", {"result": rid}, limit=25)
            decoded = packed.read_samples(tmp_path / "out" / f"{packed.shard_of(rid, shards)}.bin", rid)
            if not served["rows"]:
                assert decoded is None  # no samples and no statistics given: not in the file
                continue
            assert decoded is not None and decoded["truncated"] is served["truncated"]
            _check_rows(decoded, served, decoded["segments"])


@pytest.mark.core
def test_the_file_of_an_id_is_fnv1a_of_its_bytes_and_a_site_stays_a_few_files():
    assert [packed.shard_of(k, 2**32) for k in ("", "a", "foobar")] == [0x811C9DC5, 0xE40C292C, 0xBF9CF968]
    assert packed.shards_for(10_000_000 / packed.SAMPLES_PER_SHARD, 1, packed.MAX_SHARDS) == 153
    assert packed.shards_for(10**12, 1, packed.MAX_SHARDS) == packed.MAX_SHARDS
    assert packed.shards_for(0, 1, packed.MAX_SHARDS) == 1


@pytest.mark.usefixtures("browser_needed")
def test_the_page_decodes_what_python_decodes(warehouse, tmp_path):
    """In Chromium, against the static site served by http.server: packed.js finds each id's file as
    Python does, and each result's samples page data is Python's decoding (to an ulp: exp differs between them)."""
    from playwright.sync_api import sync_playwright

    from benchdb.backends.ortweb import browser

    out = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "benchdb", "site", "--db", str(warehouse), "--out", str(out)],
        check=True,
        capture_output=True,
    )
    shards = json.loads((out / "data" / "views.json").read_text())["site"]["shards"]
    port = free_port()
    with child(
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"],
        cwd=out,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    ) as proc:
        wait_for_server(f"http://127.0.0.1:{port}/", proc)
        with sync_playwright() as pw:
            b = pw.chromium.launch(executable_path=browser.find(), headless=True, args=["--no-sandbox"])
            page = b.new_page()
            page.goto(f"http://127.0.0.1:{port}/?view=runs")
            page.wait_for_selector("#status:has-text('row(s)')")
            got = page.evaluate("(ids) => ids.map((k) => PACKED.shardOf(k, 4294967295))", IDS)
            assert got == [packed.shard_of(k, 4294967295) for k in IDS]
            for rid in _result_ids(warehouse):
                doc = page.evaluate("(r) => loadPacked('samples', {result: r}, CATALOG)", rid)
                path = out / "data" / "samples" / f"{packed.shard_of(rid, shards['samples'])}.bin"
                py = packed.read_samples(path, rid)
                assert py is not None
                assert doc["statistics"] == py["statistics"] and len(doc["rows"]) == len(py["rows"])
                for got, want in zip(doc["rows"], py["rows"], strict=True):  # exp in JS and numpy: an ulp apart
                    assert got[:4] == want[:4] and got[4:] == pytest.approx(want[4:], rel=1e-12, abs=1e-300)
                assert doc["truncated"] is False and doc["command"] == py["command"]
                if any(seg[5][0] == "log" for seg in py["segments"]):
                    worst = max(packed.error_bound(seg[5]) for seg in py["segments"] if seg[5][0] == "log")
                    assert math.isclose(doc["quantised"]["latency_s"]["relative"], worst, rel_tol=1e-9)
            with Warehouse(warehouse).reading() as con:
                (mixed,) = con.execute("SELECT result_id FROM results WHERE model_id = 'matmul:64' LIMIT 1").fetchone()
            page.goto(f"http://127.0.0.1:{port}/?view=samples&result={mixed}")
            page.wait_for_selector("p.quantised")
            note = page.inner_text("p.quantised")
            assert "stores each sample in 16 bits" in note
            assert re.search(r"latency_s ±0\.00\d+ ?% \(time offsets ±", note)
            assert "peak_memory_bytes exact" in note and re.search(r"power_w ±0\.000\d+ W", note)
            SCREENS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(SCREENS / "site-samples-packed.png"), full_page=True)
            b.close()

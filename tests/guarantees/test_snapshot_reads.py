"""A reader sees one published generation, whole, or a clear error: `benchdb dashboard`
answers every request from the newest published snapshot while `benchdb ingest` and `benchdb db
compact` run beside it, never with a partial or empty 200; a plain ``duckdb.connect(read_only=True)``
left open across compactions keeps reading its snapshot whole, and what it kept is removed once it
closes. Real DuckDB files, real Parquet, the real command line in subprocesses (the writers run in
processes of their own, as they do for users), a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import duckdb
import pytest
from conftest import benchdb_cmd, make_run, only_on_linux, write_suite

from benchdb.store import parts
from benchdb.warehouse import Warehouse

pytestmark = pytest.mark.core
needs_leases = only_on_linux("leases ask Linux's OFD locks")

#: Samples of every result in these tests: a partial answer cannot hide in noise.
N_VALUES = 1000


def _gens(db: Path) -> set[int]:
    folder = parts.folder_for(db)
    assert folder is not None
    return {g for g in (parts.gen_of(p.name) for p in folder.iterdir()) if g is not None}


def _ingest(db: Path, folder: Path, n_files: int = 2) -> None:
    write_suite(folder, n_files=n_files, n_values=N_VALUES, run=make_run())
    benchdb_cmd("ingest", str(folder), "--db", str(db), check=True)


def _compact(db: Path) -> None:
    benchdb_cmd("db", "compact", "--db", str(db), check=True)


def _get(base: str, path: str) -> tuple[int, dict]:
    try:
        with urllib.request.urlopen(base + path, timeout=60) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"{}")


@pytest.mark.slow
def test_serve_answers_the_newest_snapshot_whole_under_ingest_and_compact(tmp_path):
    """>= 500 requests, while ingests and compactions alternate in other processes: every answer is
    a 200, every result's samples page holds all its samples, and a request sent after an ingest
    finished sees that ingest's run (no stale catalog)."""
    from benchdb.web.server import make_server

    db = tmp_path / "w.duckdb"
    write_suite(tmp_path / "in0", n_files=2, n_values=N_VALUES, run=make_run())
    Warehouse(db).ingest([tmp_path / "in0"])
    with duckdb.connect(str(db), read_only=True) as con:
        result_ids = [r for (r,) in con.execute("SELECT result_id FROM results").fetchall()]
    srv = make_server(str(db), "127.0.0.1", 0)
    server = threading.Thread(target=srv.serve_forever, daemon=True)
    server.start()
    base = f"http://127.0.0.1:{srv.server_address[1]}"
    published = [1]  # runs whose ingest has returned
    writing = threading.Event()
    writing.set()
    failures: list[str] = []

    def writer() -> None:
        try:
            for n in range(1, 4):  # ingest, compact, ingest, compact, ...: old snapshots retire twice over
                _ingest(db, tmp_path / f"in{n}")
                published[0] += 1
                _compact(db)
        except AssertionError as exc:
            failures.append(f"writer: {exc}")
        finally:
            writing.clear()

    def client(k: int) -> list[str]:
        bad: list[str] = []
        i = 0
        while writing.is_set() or i < 130:
            i += 1
            if i % 2:
                seen = published[0]
                status, doc = _get(base, "/api/runs")
                if status != 200:
                    bad.append(f"/api/runs: {status} {doc.get('error')}")
                elif len(doc["rows"]) < seen:
                    bad.append(f"/api/runs: {len(doc['rows'])} runs, {seen} published before the request")
            else:
                rid = result_ids[(i // 2 + k) % len(result_ids)]
                status, doc = _get(base, f"/api/samples?result={rid}")
                if status != 200:
                    bad.append(f"/api/samples: {status} {doc.get('error')}")
                elif len(doc["rows"]) != N_VALUES:
                    bad.append(f"/api/samples: 200 with {len(doc['rows'])} of {N_VALUES} samples")
        return bad + [f"requests: {i}"]

    try:
        threading.Thread(target=writer, daemon=True).start()
        with ThreadPoolExecutor(max_workers=4) as pool:
            answers = list(pool.map(client, range(4)))
    finally:
        srv.shutdown()
        srv.server_close()
    total = sum(int(a[-1].split()[-1]) for a in answers)
    bad = [b for a in answers for b in a[:-1]]
    assert not failures, failures
    assert total >= 500
    assert not bad, f"{len(bad)} of {total} requests went wrong, e.g. {bad[:5]}"
    assert published[0] == 4


@needs_leases
def test_a_plain_read_only_connection_keeps_its_snapshot_whole_across_compactions(tmp_path):
    """The analysts' one line, left open while other processes ingest and compact three times,
    keeps answering from the snapshot it opened, every sample of it; once it closes, the next
    compaction removes what only it still read."""
    db = tmp_path / "w.duckdb"
    _ingest(db, tmp_path / "in0")
    _ingest(db, tmp_path / "in1")
    total = 4 * N_VALUES
    plain = duckdb.connect(str(db), read_only=True)
    try:
        per_result = "SELECT result_id, count(*) FROM samples GROUP BY ALL ORDER BY 1"
        mine = plain.execute(per_result).fetchall()
        assert len(mine) == 4 and all(n == N_VALUES for _, n in mine)
        for n in range(2, 5):
            _compact(db)
            _ingest(db, tmp_path / f"in{n}", n_files=1)
            assert plain.execute(per_result).fetchall() == mine, f"after compaction {n - 1}"
        _compact(db)
        assert plain.execute("SELECT count(*) FROM samples").fetchall() == [(total,)]
        assert min(_gens(db)) <= 2  # what the open connection reads is still there
    finally:
        plain.close()
    _compact(db)  # nobody reads the old generations now
    later = duckdb.connect(str(db), read_only=True)
    try:
        assert later.execute("SELECT count(*) FROM samples").fetchall() == [(total + 3 * N_VALUES,)]
        low, high, _ = parts.published(later)
    finally:
        later.close()
    assert _gens(db) == set(range(low, high + 1))

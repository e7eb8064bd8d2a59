"""A write session's parts (benchdb.store.parts_store): a large batch written by its threads, a part
each, every part in order of result; and compaction, which rewrites the parts as one while readers that
opened before it keep reading theirs, and removes the generations an earlier compaction replaced. Real
contract files, real DuckDB, the real command line."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest
from conftest import benchdb_cmd, make_run, sample_count, write_suite

from benchdb.analysis import gate_samples
from benchdb.ingest import ingest
from benchdb.store import parts, parts_store
from benchdb.warehouse import Warehouse

pytestmark = pytest.mark.core


def test_a_large_batch_is_written_by_its_threads_each_part_in_order_of_result(tmp_path, monkeypatch):
    """A batch of PART_ROWS rows or more per thread is written with no sort, a part per writing
    thread: each part still holds its results in order of id, each result's rows together and as
    its file holds them, and the samples are the files' rows exactly."""
    monkeypatch.setattr(parts_store, "PART_ROWS", 1_000)  # the rule at a test's size
    files = write_suite(tmp_path / "a", n_files=12, n_values=2_000)
    db = tmp_path / "w.duckdb"
    summary = ingest([tmp_path / "a"], db)
    assert summary.new == 12
    con = duckdb.connect(str(db), read_only=True)
    try:
        threads = int(con.execute("SELECT current_setting('threads')").fetchall()[0][0])
        expected = {}
        for f in files:
            t = pq.read_table(f)
            expected[t.column("scenario_id")[0].as_py()] = t.column("value").to_pylist()
        on_disk = parts.on_disk(db)
        assert 1 <= len(on_disk) <= min(threads, 12 * 2_000 // 1_000)
        if threads > 1:  # the threads' parts, named by batch and thread (not one sorted part)
            assert all("_" in p.stem for p in on_disk)
        seen = set()
        for part in on_disk:
            ids = [r for (r,) in con.execute("SELECT result_id FROM read_parquet(?)", [str(part)]).fetchall()]
            runs = [ids[0]] + [b for a, b in zip(ids, ids[1:], strict=False) if a != b]
            assert runs == sorted(runs) and len(set(runs)) == len(runs)  # in order, each result together
            for rid in runs:
                got = [
                    v
                    for (v,) in con.execute(
                        "SELECT value FROM read_parquet(?) WHERE result_id = ?", [str(part), rid]
                    ).fetchall()
                ]
                assert got == expected[rid]  # as its file holds them
            seen.update(runs)
        assert seen == set(expected)
    finally:
        con.close()


def test_compaction_rewrites_the_parts_as_one_and_keeps_what_open_readers_read(tmp_path):
    db = tmp_path / "w.duckdb"
    for i in range(3):
        write_suite(tmp_path / f"r{i}", n_files=2, n_values=100 + i, run=make_run())
        ingest([tmp_path / f"r{i}"], db)
    total = 2 * (100 + 101 + 102)
    assert len(parts.on_disk(db)) == 3
    con = duckdb.connect(str(db), read_only=True)
    before = con.execute("SELECT result_id, metric, repeat, iteration, value FROM samples ORDER BY ALL").fetchall()
    ids = [r for (r,) in con.execute("SELECT result_id FROM results ORDER BY result_id").fetchall()]
    measured = {r: v.tolist() for r, v in gate_samples.measured_samples(con, ids, "latency_s").items()}
    con.close()
    with Warehouse(db).reading() as reader:  # opened before the compaction
        out = benchdb_cmd("db", "compact", "--db", str(db), check=True).stdout
        assert out.strip() == f"{db}: {total:,} samples in 3 part(s) rewritten as 1"
        assert reader.execute("SELECT count(*) FROM samples").fetchall() == [(total,)]  # its parts stay
    con = duckdb.connect(str(db), read_only=True)
    try:
        assert (
            con.execute("SELECT result_id, metric, repeat, iteration, value FROM samples ORDER BY ALL").fetchall()
            == before
        )
        # each result's rows still come back together and in measurement order, with no sort
        assert {r: v.tolist() for r, v in gate_samples.measured_samples(con, ids, "latency_s").items()} == measured
        (published,) = {
            Path(f)
            for (f,) in con.execute(
                "SELECT DISTINCT filename FROM read_parquet("
                f"{parts.glob_string(tmp_path / 'w.duckdb.samples')}, "
                "filename = true) WHERE filename LIKE '%gen=0000000004%'"
            ).fetchall()
        }
    finally:
        con.close()
    assert len(parts.on_disk(db)) == 4  # three replaced, kept for older readers
    write_suite(tmp_path / "r3", n_files=1, n_values=50, run=make_run())
    ingest([tmp_path / "r3"], db)
    out = benchdb_cmd("db", "compact", "--db", str(db), check=True).stdout
    assert out.strip() == (
        f"{db}: {total + 50:,} samples in 2 part(s) rewritten as 1; removed 3 "
        "generation(s) an earlier compaction replaced"
    )
    assert [p.parent.name for p in parts.on_disk(db)] == ["gen=0000000004", "gen=0000000005", "gen=0000000006"]
    assert published in parts.on_disk(db)
    assert sample_count(db) == total + 50
    r = benchdb_cmd("db", "compact", "--db", str(tmp_path / "none.duckdb"))
    assert r.returncode == 2 and "does not exist" in r.stderr and not (tmp_path / "none.duckdb").exists()

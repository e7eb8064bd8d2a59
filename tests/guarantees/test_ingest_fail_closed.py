"""Ingest never says "fine" by mistake: claims are released by rejected files, metadata is typed,
file ids never collide, timestamps need an offset, and readers never block the writer."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import benchdb_cmd, child, make_meta, make_run, write_file, write_suite

from benchdb.schema import contract
from benchdb.warehouse import Warehouse

pytestmark = pytest.mark.core


def _corrupt_copy(src, dst, column="value"):
    """The same scenario file with one column's values replaced by NaN (a different content hash)."""
    table = pq.read_table(src)
    meta = table.schema.metadata
    i = table.schema.get_field_index(column)
    table = table.set_column(i, column, pa.array([float("nan")] * table.num_rows, pa.float64()))
    pq.write_table(table.replace_schema_metadata(meta), dst)


def _count(db, sql="SELECT count(*) FROM results"):
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql).fetchall()[0][0]
    finally:
        con.close()


def test_good_file_beside_a_corrupt_copy_still_loads(results_dir, db_path):
    run = make_run()
    good = write_file(results_dir, make_meta(run), name="b_good.parquet")
    _corrupt_copy(good, results_dir / "a_corrupt.parquet")  # sorts first: claims the scenario first
    s = Warehouse(db_path).ingest([results_dir])
    assert s.new == 1 and [os.path.basename(p) for p, _ in s.rejected] == ["a_corrupt.parquet"]
    assert "value: " in s.rejected[0][1] and "non-finite" in s.rejected[0][1]
    assert _count(db_path) == 1
    # A second good file claiming the same scenario is still refused, naming the file that loaded.
    shutil.copy(good, results_dir / "c_other.parquet")
    os.utime(results_dir / "c_other.parquet", ns=(1, 1))
    table = pq.read_table(good)
    pq.write_table(table.slice(0, 10), results_dir / "d_same_scenario.parquet")
    s = Warehouse(db_path).ingest([results_dir])
    reasons = dict((os.path.basename(p), r) for p, r in s.rejected)
    assert "already loaded from" in reasons["d_same_scenario.parquet"]
    assert "b_good.parquet" in reasons["d_same_scenario.parquet"]
    assert _count(db_path) == 1


def test_identical_copies_of_a_bad_file_are_rejected_not_called_duplicates(results_dir, db_path):
    good = write_file(results_dir, make_meta(make_run()), name="good.parquet")
    _corrupt_copy(good, results_dir / "bad1.parquet")
    good.unlink()
    shutil.copy(results_dir / "bad1.parquet", results_dir / "bad2.parquet")
    proc = benchdb_cmd("ingest", str(results_dir), "--db", str(db_path))
    assert proc.returncode == 1
    assert proc.stderr.count("rejected ") == 2 and "same content as" in proc.stderr
    assert _count(db_path, "SELECT count(*) FROM ingested_files WHERE status = 'duplicate'") == 0


def test_mistyped_optional_metadata_rejects_that_file_only(results_dir, db_path):
    run = make_run()
    write_suite(results_dir, n_files=2, run=run)
    meta = make_meta(run, batch_size=9)
    meta["scenario"]["threads"] = "4"
    table = contract.samples_table(meta, [("latency_s", "s", i, 0.0, 0.001) for i in range(10)])
    pq.write_table(
        table.replace_schema_metadata({contract.METADATA_KEY: json.dumps(meta).encode()}), results_dir / "typo.parquet"
    )
    proc = benchdb_cmd("ingest", str(results_dir), "--db", str(db_path))
    assert proc.returncode == 1, proc.stderr  # not 70: no crash
    assert "typo.parquet: metadata.scenario.threads: expected int, found str" in proc.stderr
    assert _count(db_path) == 2


def test_a_bad_file_after_a_good_one_in_one_batch_takes_no_id_of_the_load(results_dir, db_path):
    run = make_run()
    good = write_file(results_dir, make_meta(run, batch_size=1), name="a.parquet")
    bad = write_file(results_dir, make_meta(run, batch_size=2), [0.001, float("inf"), 0.001], name="b.parquet")
    s = Warehouse(db_path).ingest([results_dir])
    assert (s.new, len(s.rejected)) == (1, 1)
    con = duckdb.connect(str(db_path), read_only=True)
    rows = con.execute("SELECT path, file_id, status FROM ingested_files ORDER BY file_id").fetchall()
    assert len({r[1] for r in rows}) == len(rows) == 2
    assert {os.path.basename(r[0]): r[2] for r in rows} == {"a.parquet": "ingested", "b.parquet": "rejected"}
    assert con.execute(
        "SELECT count(*) FROM results r JOIN ingested_files f USING (file_id) WHERE f.path = ?", [str(good)]
    ).fetchall() == [(1,)]
    con.close()
    assert bad.exists()


def test_naive_timestamps_are_refused():
    with pytest.raises(
        contract.ContractError, match=r"^metadata.run.started_at: timestamp '2026-11-01T10:00:00' has no UTC offset"
    ):
        make_meta(make_run(started_at="2026-11-01T10:00:00"))
    meta = make_meta(make_run())
    meta["scenario"]["started_at"] = "2026-11-01 10:00"
    with pytest.raises(contract.ContractError, match=r"^metadata.scenario.started_at: .* has no UTC offset"):
        contract.validate_metadata(meta)


def test_timestamps_are_stored_as_utc_whatever_the_ingesting_time_zone(results_dir, db_path):
    write_file(results_dir, make_meta(make_run(started_at="2026-11-01T10:00:00+01:00")))
    benchdb_cmd("ingest", str(results_dir), "--db", str(db_path), env={"TZ": "Europe/Paris"}, check=True)
    assert str(_count(db_path, "SELECT started_at FROM runs")) == "2026-11-01 09:00:00"


def test_an_open_reader_never_blocks_ingest(results_dir, db_path, tmp_path):
    run = make_run()
    write_file(results_dir, make_meta(run, batch_size=1))
    Warehouse(db_path).ingest([results_dir])
    ready, release = tmp_path / "ready", tmp_path / "release"
    code = textwrap.dedent(f"""
        import duckdb, os, time
        con = duckdb.connect({str(db_path)!r}, read_only=True)      # a notebook holding the file
        before = con.execute("SELECT count(*) FROM results").fetchall()[0][0]
        open({str(ready)!r}, "w").close()
        while not os.path.exists({str(release)!r}):
            time.sleep(0.05)
        after = con.execute("SELECT count(*) FROM results").fetchall()[0][0]
        print(before, after)
    """)
    with child([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True) as reader:
        import time

        for _ in range(200):
            if ready.exists():
                break
            time.sleep(0.05)
        write_file(results_dir, make_meta(run, batch_size=2))
        proc = benchdb_cmd("ingest", str(results_dir), "--db", str(db_path), "--wait", "0")
        assert proc.returncode == 0, proc.stderr
        assert "ingested 1 new file(s)" in proc.stdout
        assert _count(db_path) == 2  # a new connection sees the new data
        release.touch()
        out, _ = reader.communicate(timeout=30)
    assert out.split() == ["1", "1"]  # the open reader kept its snapshot

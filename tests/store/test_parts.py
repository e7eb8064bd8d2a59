"""Samples as immutable Parquet parts beside a small catalog: a write adds files and
copies the catalog, never the samples already there; readers see a write whole or not at all;
analysts still open the warehouse in one line. Real contract files, real DuckDB, the real CLI."""

from __future__ import annotations

import json
import os
import shutil

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import benchdb_cmd, make_meta, make_run, sample_count, write_file, write_suite

from benchdb.ingest import ingest
from benchdb.schema import contract
from benchdb.store import parts
from benchdb.warehouse import Warehouse

pytestmark = pytest.mark.core


def test_samples_live_in_parts_beside_a_catalog_that_a_plain_duckdb_connection_reads(tmp_path):
    db = tmp_path / "w.duckdb"
    write_suite(tmp_path / "a", n_files=3, n_values=400)
    ingest([tmp_path / "a"], db)
    write_suite(tmp_path / "b", n_files=2, n_values=300, run=make_run())
    ingest([tmp_path / "b"], db)
    folder = tmp_path / "w.duckdb.samples"
    assert sorted(p.name for p in folder.iterdir()) == ["gen=0000000001", "gen=0000000002"]
    assert len(parts.on_disk(db)) == 2  # one part per batch, one batch per ingest
    assert sample_count(db) == 3 * 400 + 2 * 300
    con = duckdb.connect(str(db), read_only=True)
    try:
        tables = {t for (t,) in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
        assert "samples" not in tables  # the catalog holds no sample rows
        # every sample belongs to a result of the catalog, and every loaded result has its samples
        assert con.execute(
            "SELECT count(*) FROM samples WHERE result_id NOT IN (SELECT result_id FROM results)"
        ).fetchall() == [(0,)]
        assert con.execute("SELECT sum(n) FROM results").fetchall() == [(3 * 400 + 2 * 300,)]
        # a part is sorted by result, so a query for one result reads its own row groups
        first = parts.on_disk(db)[0]
        ids = [r for (r,) in con.execute("SELECT result_id FROM read_parquet(?)", [str(first)]).fetchall()]
        assert ids == sorted(ids)
    finally:
        con.close()
    # a no-op ingest writes nothing at all
    before = (db.stat().st_ino, parts.on_disk(db))
    assert ingest([tmp_path / "a", tmp_path / "b"], db).new == 0
    assert (db.stat().st_ino, parts.on_disk(db)) == before


def test_an_open_reader_keeps_its_snapshot_and_its_samples_while_a_write_adds_parts(tmp_path):
    db = tmp_path / "w.duckdb"
    write_suite(tmp_path / "a", n_files=2, n_values=100)
    ingest([tmp_path / "a"], db)
    with Warehouse(db).reading() as reader:  # a notebook, sandboxed as benchdb reads
        write_suite(tmp_path / "b", n_files=3, n_values=100, run=make_run())
        ingest([tmp_path / "b"], db, wait_s=5)  # the reader never blocks the writer
        assert reader.execute("SELECT count(*) FROM samples").fetchall() == [(200,)]
    assert sample_count(db) == 500


def test_an_unpublished_generation_is_never_read_and_the_next_writer_removes_it(tmp_path):
    """What a writer killed after writing parts but before publishing its catalog leaves behind: a
    generation above the published one, here with a part that is not even Parquet."""
    db = tmp_path / "w.duckdb"
    write_suite(tmp_path / "a", n_files=2, n_values=100)
    ingest([tmp_path / "a"], db)
    dead = tmp_path / "w.duckdb.samples" / "gen=0000000002"
    dead.mkdir()
    (dead / "half.parquet").write_bytes(b"PAR1 torn write")
    assert sample_count(db) == 200
    assert benchdb_cmd("query", "SELECT count(*) FROM samples", "--db", str(db), check=True).stdout.split()[-3] == "200"
    write_suite(tmp_path / "b", n_files=1, n_values=100, run=make_run())
    ingest([tmp_path / "b"], db)
    assert not (dead / "half.parquet").exists()
    assert sample_count(db) == 300
    assert len(parts.on_disk(db)) == 2


def test_a_batch_that_rolls_back_leaves_no_part(tmp_path):
    """A value the samples' INTEGER repeat cannot hold fails its batch as a whole (an iteration
    past INTEGER is a row rule instead); the loader then loads file by file. The failed batch's
    parts are gone and the good files' rows are there once."""
    db = tmp_path / "w.duckdb"
    run = make_run()
    good = [write_file(tmp_path / "in", make_meta(run, batch_size=bs), np.full(50, 1e-3)) for bs in (1, 2)]
    bad_meta = make_meta(run, batch_size=3)
    table = contract.samples_table(bad_meta, [("latency_s", "s", i, i * 1e-3, 1e-3, 0) for i in range(50)])
    table = table.set_column(table.schema.get_field_index("repeat"), "repeat", pa.array([2**40] * 50, pa.int64()))
    pq.write_table(
        table.replace_schema_metadata({contract.METADATA_KEY: json.dumps(bad_meta).encode()}),
        tmp_path / "in" / "bad.parquet",
    )
    s = ingest([tmp_path / "in"], db)
    assert s.new == 2 and len(s.rejected) == 1, s
    why = s.rejected[0][1]
    # DuckDB from 1.3 names the column; 1.2 (the floor) says only that the value is out of range
    assert why.startswith("file: cannot be loaded (") and ("repeat" in why or "out of range" in why), s.rejected
    assert sample_count(db) == 100
    names = {p.name for p in parts.on_disk(db)}
    con = duckdb.connect(str(db), read_only=True)
    try:
        assert con.execute("SELECT count(DISTINCT result_id) FROM samples").fetchall() == [(len(good),)]
    finally:
        con.close()
    assert len(names) == 2  # the two good files, one part each after the fallback


def test_a_moved_warehouse_reads_without_a_write_and_db_upgrade_records_its_new_folder(tmp_path):
    db = tmp_path / "w.duckdb"
    write_suite(tmp_path / "a", n_files=2, n_values=100)
    ingest([tmp_path / "a"], db)
    new = tmp_path / "moved"
    new.mkdir()
    shutil.move(db, new / "w.duckdb")
    shutil.move(tmp_path / "w.duckdb.samples", new / "w.duckdb.samples")
    moved = new / "w.duckdb"
    stamp = moved.stat().st_mtime_ns
    assert "200" in benchdb_cmd("query", "SELECT count(*) FROM samples", "--db", str(moved), check=True).stdout
    assert sample_count(moved) == 200 and moved.stat().st_mtime_ns == stamp  # read, nothing written
    out = benchdb_cmd("db", "upgrade", "--db", str(moved), check=True).stdout
    assert out.splitlines() == [
        f"{moved}: already at schema version 10",
        f"{moved}: samples read from {new / 'w.duckdb.samples'} (were at {tmp_path / 'w.duckdb.samples'})",
    ]
    assert "200" in benchdb_cmd("query", "SELECT count(*) FROM samples", "--db", str(moved), check=True).stdout
    assert sample_count(moved) == 200


def test_a_missing_samples_folder_is_one_clear_line(tmp_path):
    db = tmp_path / "w.duckdb"
    write_suite(tmp_path / "a", n_files=1, n_values=100)
    ingest([tmp_path / "a"], db)
    shutil.rmtree(tmp_path / "w.duckdb.samples")
    r = benchdb_cmd("report", "--optimal-hardware", "--db", str(db))
    assert r.returncode != 0 and "Traceback" not in r.stderr
    assert f"the samples folder {tmp_path / 'w.duckdb.samples'} of database {db} is missing" in r.stderr


def test_a_redefined_samples_view_is_refused(tmp_path):
    db = tmp_path / "w.duckdb"
    write_suite(tmp_path / "a", n_files=2, n_values=100)
    ingest([tmp_path / "a"], db)
    con = duckdb.connect(str(db))
    glob = parts.glob_string(tmp_path / "w.duckdb.samples")
    con.execute(
        f"CREATE OR REPLACE VIEW samples AS SELECT * EXCLUDE (gen) FROM read_parquet({glob}, "
        "hive_partitioning = true) WHERE value < 0"
    )  # hides every sample
    con.close()
    r = benchdb_cmd("query", "SELECT count(*) FROM samples", "--db", str(db))
    assert r.returncode != 0
    assert "view samples differs from the definition this benchdb ships" in r.stderr
    benchdb_cmd("db", "upgrade", "--db", str(db), check=True)  # restores benchdb's definitions
    assert sample_count(db) == 200


def test_benchdb_query_reads_the_parts_but_writes_no_file_and_reads_no_other(tmp_path):
    db = tmp_path / "w.duckdb"
    write_suite(tmp_path / "a", n_files=1, n_values=100)
    ingest([tmp_path / "a"], db)
    part = parts.on_disk(db)[0]
    r = benchdb_cmd("query", f"SELECT count(*) FROM read_parquet('{part}')", "--db", str(db), check=True)
    assert "100" in r.stdout
    evil = part.parent / "evil.parquet"
    r = benchdb_cmd("query", f"COPY (SELECT * FROM samples) TO '{evil}'", "--db", str(db))
    assert r.returncode != 0 and '"COPY" is not a read statement' in r.stderr
    assert not evil.exists()
    (tmp_path / "secret.csv").write_text("a\n1\n")
    r = benchdb_cmd("query", f"SELECT * FROM read_csv('{part.parent}/../../secret.csv')", "--db", str(db))
    assert r.returncode != 0 and "benchdb query is read-only and reads only the warehouse" in r.stderr


def test_an_older_single_file_warehouse_moves_its_samples_into_parts_on_upgrade(tmp_path):
    """A schema-8 warehouse (samples in the file) made by this code's migrations 1-8."""
    from benchdb.store import database

    db = tmp_path / "old.duckdb"
    con, _ = database.open_writable(db, available=database.migrations()[:8])
    con.execute(
        "INSERT INTO results (result_id, run_id, file_id, hardware_id, arch_id, model_id, backend, "
        "device, mode, precision, batch_size, input_shape, status, validity, metric, n, options, "
        "options_id, series_id) VALUES ('r1', 'run', 0, 'h', 'a', 'm', 'numpy', 'cpu', 'eager', 'fp32', "
        "1, 'n=1', 'ok', 'valid', 'latency_s', 3, '{}', 'o', 's')"
    )
    con.execute(
        "INSERT INTO samples VALUES ('r1', 'latency_s', 's', 0, 0.0, 1.0, 0), "
        "('r1', 'latency_s', 's', 1, 0.1, 2.0, 0), ('r1', 'latency_s', 's', 2, 0.2, 3.0, 0)"
    )
    con.close()
    r = benchdb_cmd("query", "SELECT 1", "--db", str(db))
    assert "run `benchdb db upgrade" in r.stderr
    out = benchdb_cmd("db", "upgrade", "--db", str(db), check=True).stdout
    assert "0009_sample_parts" in out
    assert sample_count(db, "WHERE result_id = 'r1'") == 3
    assert len(parts.on_disk(db)) == 1
    con = duckdb.connect(str(db), read_only=True)
    try:
        assert con.execute("SELECT list(value ORDER BY iteration) FROM samples").fetchall() == [([1.0, 2.0, 3.0],)]
        assert con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name LIKE 'samples%'").fetchall() == [(0,)]
    finally:
        con.close()


def test_a_symlinked_warehouse_keeps_its_samples_beside_the_target(tmp_path):
    target_dir = tmp_path / "data"
    target_dir.mkdir()
    link = tmp_path / "w.duckdb"
    os.symlink(target_dir / "w.duckdb", link)
    write_suite(tmp_path / "a", n_files=1, n_values=100)
    ingest([tmp_path / "a"], link)
    assert link.is_symlink()
    assert (target_dir / "w.duckdb.samples").is_dir() and not (target_dir / "w.duckdb.samples").is_symlink()
    # beside the link, a link to it: plain DuckDB looks for the folder beside the path it opened
    assert (tmp_path / "w.duckdb.samples").resolve() == target_dir / "w.duckdb.samples"
    assert sample_count(link) == 100


def test_a_reader_never_opens_a_generation_below_its_own_while_a_compaction_removes_it(tmp_path):
    """DuckDB reads a glob's schema from the first file it lists: the view lists the reader's own
    lowest generation first, never a replaced one (which a compaction may be deleting right then:
    it is stood in for here by a part that cannot be read)."""
    db = tmp_path / "w.duckdb"
    for i in range(2):
        write_suite(tmp_path / f"r{i}", n_files=1, n_values=100, run=make_run())
        ingest([tmp_path / f"r{i}"], db)
    benchdb_cmd("db", "compact", "--db", str(db), check=True)
    write_suite(tmp_path / "r2", n_files=1, n_values=50, run=make_run())
    ingest([tmp_path / "r2"], db)  # the catalog reads generations 3 and 4; 1 and 2 are replaced
    (oldest,) = [p for p in parts.on_disk(db) if p.parent.name == "gen=0000000001"]
    oldest.write_bytes(b"half removed")
    assert sample_count(db) == 250
    assert sample_count(db, "WHERE value >= 0") == 250


def test_an_ingest_into_a_moved_warehouse_reads_and_writes_the_folder_beside_it(tmp_path):
    db = tmp_path / "a" / "w.duckdb"
    db.parent.mkdir()
    write_suite(tmp_path / "in1", n_files=2, n_values=100)
    ingest([tmp_path / "in1"], db)
    shutil.move(tmp_path / "a", tmp_path / "b")
    moved = tmp_path / "b" / "w.duckdb"
    write_suite(tmp_path / "in2", n_files=1, n_values=100, run=make_run())
    Warehouse(moved).ingest([tmp_path / "in2"])  # process-level intervals and change points read samples
    assert sample_count(moved) == 300
    assert {p.parent.parent for p in parts.on_disk(moved)} == {tmp_path / "b" / "w.duckdb.samples"}
    # the file moved without its folder: one line, nothing written
    other = tmp_path / "c"
    other.mkdir()
    shutil.move(moved, other / "w.duckdb")
    write_suite(tmp_path / "in3", n_files=1, n_values=100, run=make_run())
    r = benchdb_cmd("ingest", str(tmp_path / "in3"), "--db", str(other / "w.duckdb"))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.strip() == (
        f"benchdb: error: the samples folder {other / 'w.duckdb.samples'} is missing (the "
        f"warehouse's samples were at {tmp_path / 'b' / 'w.duckdb.samples'}); move that "
        "folder beside the warehouse file and try again"
    )

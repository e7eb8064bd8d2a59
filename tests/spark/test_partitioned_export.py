"""`benchdb export --partitioned` (benchdb.spark.partitioned_export): the warehouse's tables as
hive-partitioned Parquet for Spark, appended to with only what is new, an interrupted publish finished
by the next export, and destinations that are not an export refused. Real contract files, a real
warehouse; no JVM (the export is read back with pyarrow)."""

from __future__ import annotations

import json

import pyarrow.dataset as ds
from click.testing import CliRunner
from conftest import make_meta, make_run, need_module, write_file

need_module("fsspec", "benchdb[spark]")

from benchdb.cli import main as cli  # noqa: E402
from benchdb.warehouse import Warehouse  # noqa: E402


def _ingest(tmp_path, db, runs: int, start_day: int = 1):
    d = tmp_path / f"res{start_day}"
    d.mkdir()
    for i in range(runs):
        run = make_run(started_at=f"2026-{10 + i % 2}-{start_day + i:02d}T10:00:00+00:00")
        for bs in (1, 2):
            write_file(d, make_meta(run, batch_size=bs))
    Warehouse(db).ingest([d])


def test_export_partitioned_layout_append_and_resume(tmp_path, db_path):
    out = tmp_path / "export"
    _ingest(tmp_path, db_path, runs=2)
    r = CliRunner().invoke(cli, ["export", "--partitioned", str(out), "--db", str(db_path)])
    assert r.exit_code == 0, r.output
    assert "exported 4 new result(s) and 200 sample(s)" in r.output
    parts = sorted(p.relative_to(out).parts[:3] for p in (out / "results").rglob("*.parquet"))
    assert {p[1] for p in parts} == {"hardware_id=" + str(parts[0][1]).split("=")[1]}
    assert {p[2] for p in parts} == {"run_month=2026-10", "run_month=2026-11"}
    manifest = json.loads((out / "_benchdb.json").read_text())
    assert manifest["rows"] == {"results": 4, "samples": 200, "result_metrics": 4}
    # appending: only what is new; a second export of the same warehouse adds nothing
    r = CliRunner().invoke(cli, ["export", "--partitioned", str(out), "--db", str(db_path)])
    assert "exported 0 new result(s)" in r.output
    _ingest(tmp_path, db_path, runs=1, start_day=20)
    r = CliRunner().invoke(cli, ["export", "--partitioned", str(out), "--db", str(db_path)])
    assert "exported 2 new result(s) and 100 sample(s)" in r.output and "(6 result(s) in all)" in r.output
    results = ds.dataset(out / "results", format="parquet", partitioning="hive").to_table()
    samples = ds.dataset(out / "samples", format="parquet", partitioning="hive").to_table()
    assert results.num_rows == 6 and len(set(results["result_id"].to_pylist())) == 6
    assert samples.num_rows == 300
    assert len(list((out / "runs").glob("*.parquet"))) == 1  # replaced, not appended
    # an export interrupted while publishing is finished by the next one; one not ready is dropped
    (out / "_staging" / "half").mkdir(parents=True)
    (out / "_staging" / "half" / "junk.parquet").write_bytes(b"x")
    r = CliRunner().invoke(cli, ["export", "--partitioned", str(out), "--db", str(db_path)])
    assert r.exit_code == 0, r.output and not (out / "_staging").exists()


def test_export_partitioned_bad_destinations(tmp_path, db_path):
    _ingest(tmp_path, db_path, runs=1)
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "mine.txt").write_text("not an export")
    r = CliRunner().invoke(cli, ["export", "--partitioned", str(busy), "--db", str(db_path)])
    assert r.exit_code != 0 and "holds files but no _benchdb.json" in r.output
    assert sorted(p.name for p in busy.iterdir()) == ["mine.txt"]
    r = CliRunner().invoke(
        cli, ["export", "--partitioned", str(tmp_path / "x"), "--format", "hud-v3", "--db", str(db_path)]
    )
    assert r.exit_code == 2 and "leave out --format" in r.output
    r = CliRunner().invoke(cli, ["export", "--partitioned", "nosuchproto://bucket/x", "--db", str(db_path)])
    assert r.exit_code != 0 and "nosuchproto" in r.output and "Traceback" not in r.output

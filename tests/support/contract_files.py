"""Contract files for footer, ingest and store tests: a file written with any metadata document (valid
or not), a folder of good files of several shapes beside one file per footer rule, and a warehouse
`benchdb ingest` made of one file."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
from conftest import make_meta, make_run, write_file

from benchdb.schema import contract


def write_raw(path, table, meta):
    doc = meta if isinstance(meta, bytes) else json.dumps(meta).encode()
    pq.write_table(table.replace_schema_metadata({contract.METADATA_KEY: doc}), path)
    return path


def variety(folder):
    """Good files of several shapes and one file per footer rule."""
    run = make_run()
    files = [write_file(folder, make_meta(run, batch_size=b)) for b in range(1, 6)]
    meta = make_meta(run, batch_size=6)
    t = contract.samples_table(meta, [("latency_s", "s", 0, 0.0, 0.001)])
    col = t.schema.get_field_index
    files.append(
        write_raw(
            folder / "wide_int.parquet", t.set_column(col("batch_size"), "batch_size", pa.array([6], pa.int64())), meta
        )
    )
    files.append(
        write_raw(
            folder / "large_string.parquet",
            t.set_column(col("metric"), "metric", pa.array(["latency_s"], pa.large_string())),
            meta,
        )
    )
    files.append(
        write_raw(
            folder / "dictionary.parquet", t.set_column(col("unit"), "unit", pa.array(["s"]).dictionary_encode()), meta
        )
    )
    files.append(write_raw(folder / "missing_column.parquet", t.drop_columns(["unit"]), meta))
    files.append(
        write_raw(folder / "wrong_type.parquet", t.set_column(col("value"), "value", pa.array(["fast"])), meta)
    )
    files.append(write_raw(folder / "extra_column.parquet", t.append_column("extra", pa.array([1])), meta))
    files.append(
        write_raw(
            folder / "two_extra.parquet", t.append_column("zz", pa.array([1])).append_column("aa", pa.array([1])), meta
        )
    )
    # the same Parquet columns as a good file, but the stored Arrow schema reads one as a duration
    dur = t.set_column(col("iteration"), "iteration", pa.array([0], pa.int64()))
    files.append(write_raw(folder / "int64_iteration.parquet", dur, meta))
    files.append(
        write_raw(
            folder / "duration_iteration.parquet",
            dur.set_column(col("iteration"), "iteration", pa.array([0], pa.duration("s"))),
            meta,
        )
    )
    p = folder / "no_metadata.parquet"
    pq.write_table(t.replace_schema_metadata({}), p)
    files.append(p)
    files.append(write_raw(folder / "bad_json.parquet", t, b"{not json"))
    files.append(write_raw(folder / "future.parquet", t, {**meta, "contract_version": 99}))
    bad = json.loads(json.dumps(meta))
    bad["scenario"]["batch_size"] = "8"
    files.append(write_raw(folder / "typed_field.parquet", t, bad))
    bad = json.loads(json.dumps(meta))
    bad["scenario"]["scenario_id"] = "0" * 32
    files.append(write_raw(folder / "claimed_id.parquet", t, bad))
    p = write_file(folder, make_meta(run, batch_size=7), name="truncated.parquet")
    p.write_bytes(p.read_bytes()[:200])
    files.append(p)
    p = folder / "notes.parquet"
    p.write_text("this is not parquet")
    files.append(p)
    # written by DuckDB: no Arrow schema stored, the contract document as its key-value metadata
    # (a literal: DuckDB 1.2 binds no parameter in COPY options)
    src = write_file(folder, make_meta(run, batch_size=8), name="src.parquet")
    doc = json.dumps(make_meta(run, batch_size=8)).replace("'", "''")
    p = folder / "by_duckdb.parquet"
    con = duckdb.connect()
    con.register("t", pq.read_table(src))
    con.execute(f"COPY t TO '{p}' (FORMAT parquet, KV_METADATA {{'benchdb.contract': '{doc}'}})")
    con.close()
    assert b"ARROW:schema" not in pq.read_metadata(p).metadata
    files += [src, p]
    return files


def verdict(x):
    return ("error", str(x)) if isinstance(x, contract.ContractError) else ("ok", x.metadata, x.num_rows)


def read_alone(path):
    try:
        return contract.read_footer(path)
    except contract.ContractError as exc:
        return exc


def ingested_warehouse(tmp_path: Path) -> Path:
    """A warehouse of one result, written by `benchdb ingest`."""
    from click.testing import CliRunner

    from benchdb.cli import main

    db = tmp_path / "w.duckdb"
    write_file(tmp_path / "res", make_meta(make_run()))
    assert CliRunner().invoke(main, ["ingest", str(tmp_path / "res"), "--db", str(db)]).exit_code == 0
    return db

"""`benchdb export --partitioned DIR_OR_URL`: the warehouse as Hive-partitioned Parquet, for Spark.

Layout under the destination (a folder or an fsspec URL: s3://, gs://, abfs://, file://, ...)::

    _benchdb.json                                     manifest: tables, columns (Spark types), batches
    results/hardware_id=H/run_month=YYYY-MM/part-B-i.parquet
    samples/hardware_id=H/run_month=YYYY-MM/part-B-i.parquet
    result_metrics/part-B-i.parquet
    runs/ hardware/ architectures/ change_points/ hardware_calibration/   (one file each, replaced)
    result_sources/ source_statistics/ source_definitions/            (imports' provenance, replaced)

Each export is a batch B. Results, their samples and their per-metric statistics are appended:
only results not yet exported are written (results are immutable once ingested). The small
tables (runs, hardware, architectures, change points, calibrations, imported results' provenance)
are replaced whole, since acknowledging a change point edits it.

Nothing half-written is published: a batch is written under ``_staging/B/`` (a leading underscore:
Spark and Hive skip it), marked ready, then moved into place and recorded in the manifest. An
export interrupted while moving is finished by the next one (``_READY`` is there); one
interrupted before is discarded. Files are named by batch, so finishing a move never duplicates.
"""

from __future__ import annotations

import json
import os
import posixpath
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone

from benchdb import sql
from benchdb.errors import BenchdbError
from benchdb.paths import inside

MANIFEST = "_benchdb.json"
STAGING = "_staging"
#: Appended per batch (only results not yet exported), with their partition columns.
APPENDED = {"results": ["hardware_id", "run_month"], "samples": ["hardware_id", "run_month"], "result_metrics": []}
#: Replaced whole by every export.
REPLACED = (
    "runs",
    "hardware",
    "architectures",
    "change_points",
    "hardware_calibration",
    "result_sources",
    "source_statistics",
    "source_definitions",
)
TABLES = (*APPENDED, *REPLACED)
#: Tables an export made by an earlier benchdb lacks (Spark types), registered empty for it so the
#: views that join them still run.
LATER_TABLES = {
    "result_sources": "result_id STRING, format STRING, source_file STRING, tool STRING, tool_version STRING, "
    "summary_only BOOLEAN, percentile_method STRING",
    "source_statistics": "result_id STRING, metric STRING, unit STRING, statistic STRING, value DOUBLE, "
    "percentile_method STRING",
    "source_definitions": "result_id STRING, metric STRING, source_metric STRING, source_definition STRING, "
    "benchdb_definition STRING, same_definition BOOLEAN, recomputed BOOLEAN, why STRING",
}
#: Columns added for partitioning only (not columns of the warehouse table).
EXTRA_COLUMNS = {"results": ["run_month"], "samples": ["hardware_id", "run_month"]}


@dataclass
class ExportSummary:
    dest: str
    batch: str | None
    results: int  # results added by this export
    samples: int  # samples added
    total_results: int  # results in the export now
    resumed: int = 0  # interrupted exports finished first


def filesystem(dest: str):
    """(fsspec filesystem, root path, pyarrow filesystem) for a folder or an fsspec URL."""
    try:
        import fsspec
    except ImportError:
        raise BenchdbError(
            f"{dest} needs fsspec: pip install 'benchdb[spark]' (plus s3fs / gcsfs / adlfs for those URLs)"
        ) from None
    try:
        fs, root = fsspec.core.url_to_fs(dest)
    except (ImportError, ValueError) as exc:
        raise BenchdbError(f"--partitioned {dest}: {str(exc).splitlines()[0]}") from None
    import pyarrow.fs as pafs

    if _local(fs):
        root = os.path.abspath(root)
        return fs, root, pafs.LocalFileSystem()
    return fs, root.rstrip("/"), pafs.PyFileSystem(pafs.FSSpecHandler(fs))


def _reader(con, text: str, rows: int = 1 << 17):
    """A streaming Arrow reader over a query's rows (the caller reads it to the end)."""
    rel = con.sql(text)
    return rel.to_arrow_reader(rows) if hasattr(rel, "to_arrow_reader") else rel.fetch_arrow_reader(rows)


def _schema(con, text: str):
    """The Arrow schema of a query's rows, without running it."""
    rel = con.sql(text).limit(0)
    return (rel.to_arrow_table() if hasattr(rel, "to_arrow_table") else rel.arrow()).schema


def spark_type(t) -> str:
    """Spark SQL type of a pyarrow type (the types a warehouse table holds)."""
    import pyarrow as pa

    simple = (
        (pa.types.is_string, "STRING"),
        (pa.types.is_large_string, "STRING"),
        (pa.types.is_int64, "BIGINT"),
        (pa.types.is_int32, "INT"),
        (pa.types.is_int16, "SMALLINT"),
        (pa.types.is_int8, "TINYINT"),
        (pa.types.is_float64, "DOUBLE"),
        (pa.types.is_float32, "FLOAT"),
        (pa.types.is_boolean, "BOOLEAN"),
        (pa.types.is_date, "DATE"),
    )
    for test, name in simple:
        if test(t):
            return name
    if pa.types.is_timestamp(t):
        return "TIMESTAMP" if t.tz else "TIMESTAMP_NTZ"
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return f"ARRAY<{spark_type(t.value_type)}>"
    if pa.types.is_decimal(t):
        return f"DECIMAL({t.precision},{t.scale})"
    raise BenchdbError(f"export: the column type {t} has no Spark type here; please report it")


def read_manifest(fs, root: str) -> dict | None:
    path = posixpath.join(root, MANIFEST)
    if not fs.exists(path):
        return None
    try:
        data = json.loads(fs.cat_file(path))
    except ValueError:
        raise BenchdbError(f"{path} is not a benchdb export manifest (not JSON); export into an empty folder") from None
    if data.get("format") != "benchdb-partitioned":
        raise BenchdbError(f"{path} is not a benchdb export manifest; export into an empty folder")
    return data


def _recover(fs, root: str, manifest: dict | None) -> tuple[dict | None, int]:
    """Finish exports that were interrupted while publishing; discard those that were not ready."""
    staging = posixpath.join(root, STAGING)
    if not fs.exists(staging):
        return manifest, 0
    done = 0
    for d in sorted(fs.ls(staging, detail=False)):
        batch = posixpath.basename(d.rstrip("/"))
        ready = posixpath.join(d, "_READY")
        if fs.exists(ready):
            pending = json.loads(fs.cat_file(ready))
            manifest = _publish(fs, root, batch, pending)
            done += 1
        else:
            fs.rm(inside(staging, d, local=_local(fs)), recursive=True)
    return manifest, done


def _local(fs) -> bool:
    return type(fs).__name__ == "LocalFileSystem"


def _publish(fs, root: str, batch: str, pending: dict) -> dict:
    """Move a ready batch into place, drop the replaced tables' older files, write the manifest."""
    stage = posixpath.join(root, STAGING, batch)
    for src in sorted(fs.find(stage)):
        rel = posixpath.relpath(src, stage)
        if rel == "_READY":
            continue
        dst = inside(root, posixpath.join(root, rel), local=_local(fs))  # partition values are URI-escaped
        fs.makedirs(posixpath.dirname(dst), exist_ok=True)
        fs.mv(src, dst)
    for table in REPLACED:
        folder = posixpath.join(root, table)
        if fs.exists(folder):
            for f in fs.find(folder):
                if f"-{batch}-" not in posixpath.basename(f):
                    fs.rm(f)
    with fs.open(posixpath.join(root, MANIFEST), "wb") as out:
        out.write(json.dumps(pending, indent=1).encode())
    fs.rm(stage, recursive=True)
    try:
        fs.rmdir(posixpath.join(root, STAGING))
    except OSError:
        pass
    return pending


def _exported_ids(fs, root: str, pa_fs, manifest: dict | None):
    """The result ids the export holds already (an Arrow table with one column, result_id)."""
    import pyarrow as pa
    import pyarrow.dataset as ds

    folder = posixpath.join(root, "results")
    if manifest is None or not fs.exists(folder):
        return pa.table({"result_id": pa.array([], pa.string())})
    data = ds.dataset(folder, format="parquet", filesystem=pa_fs, partitioning="hive", exclude_invalid_files=False)
    return data.to_table(columns=["result_id"])


def export_partitioned(db, dest: str, *, max_rows_per_file: int = 4_000_000) -> ExportSummary:
    """Export (or append to) ``dest`` from the warehouse ``db``; see the module docstring."""
    import pyarrow.dataset as ds

    from benchdb.store import database
    from benchdb.warehouse import Warehouse

    fs, root, pa_fs = filesystem(str(dest))
    if fs.exists(root) and not fs.isdir(root):
        raise BenchdbError(f"--partitioned {dest} is a file; give a folder or URL prefix")
    manifest = read_manifest(fs, root)
    if (
        manifest is None
        and fs.exists(root)
        and [p for p in fs.ls(root, detail=False) if not posixpath.basename(p.rstrip("/")).startswith(".")]
    ):
        raise BenchdbError(
            f"--partitioned {dest} holds files but no {MANIFEST}: export into an empty "
            "folder, or into an earlier `benchdb export --partitioned` to append"
        )
    manifest, resumed = _recover(fs, root, manifest)

    wh = Warehouse(db)
    with wh.reading() as con:
        exported = _exported_ids(fs, root, pa_fs, manifest)
        import duckdb  # noqa: F401  # Arrow scans (register) and the relation API (con.sql, in _reader

        #                              and _schema below) are the package's Python layer, set up on import
        con.register("exported", exported)
        new = con.execute(sql.load("spark/export_new_count.sql")).fetchall()[0][0]
        batch = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S") + "-" + uuid.uuid4().hex[:8]
        stage = posixpath.join(root, STAGING, batch)
        fs.makedirs(stage, exist_ok=True)
        tables = dict((manifest or {}).get("tables", {}))
        written: dict[str, int] = {}
        try:
            for table, parts in APPENDED.items():
                text = sql.load(f"spark/export_{table}.sql")
                schema = _schema(con, text)
                tables[table] = {
                    "columns": [[f.name, spark_type(f.type)] for f in schema],
                    "partitioned_by": parts,
                    "table_columns": [f.name for f in schema if f.name not in EXTRA_COLUMNS.get(table, [])],
                }
                if not new:
                    continue
                counted = _Counter(_reader(con, text))
                ds.write_dataset(
                    counted.reader(),
                    posixpath.join(stage, table),
                    filesystem=pa_fs,
                    format="parquet",
                    partitioning=parts or None,
                    partitioning_flavor="hive" if parts else None,
                    basename_template=f"part-{batch}-{{i}}.parquet",
                    existing_data_behavior="overwrite_or_ignore",
                    max_rows_per_file=max_rows_per_file,
                    max_rows_per_group=min(max_rows_per_file, 1 << 20),
                )
                written[table] = counted.rows
            for table in REPLACED:
                reader = _reader(con, sql.load(f"spark/export_{table}.sql"))
                tables[table] = {
                    "columns": [[f.name, spark_type(f.type)] for f in reader.schema],
                    "partitioned_by": [],
                    "table_columns": [f.name for f in reader.schema],
                }
                ds.write_dataset(
                    reader,
                    posixpath.join(stage, table),
                    filesystem=pa_fs,
                    format="parquet",
                    basename_template=f"part-{batch}-{{i}}.parquet",
                    existing_data_behavior="overwrite_or_ignore",
                )
            counts = dict((manifest or {}).get("rows", {}))
            for table in APPENDED:
                counts[table] = counts.get(table, 0) + written.get(table, 0)
            pending = {
                "format": "benchdb-partitioned",
                "version": 1,
                "schema_version": database.schema_version(con),
                "exported_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                "batches": [*(manifest or {}).get("batches", []), batch],
                "rows": counts,
                "tables": tables,
            }
            with fs.open(posixpath.join(stage, "_READY"), "wb") as out:
                out.write(json.dumps(pending).encode())
        except BaseException:
            fs.rm(stage, recursive=True)
            raise
        finally:
            con.unregister("exported")
    _publish(fs, root, batch, pending)
    return ExportSummary(
        str(dest), batch, written.get("results", 0), written.get("samples", 0), counts["results"], resumed
    )


class _Counter:
    """Passes record batches through, counting their rows."""

    def __init__(self, reader):
        self._reader, self.rows = reader, 0

    def reader(self):
        import pyarrow as pa

        def gen():
            for b in self._reader:
                self.rows += b.num_rows
                yield b

        return pa.RecordBatchReader.from_batches(self._reader.schema, gen())

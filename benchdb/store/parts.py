"""Raw samples live beside the warehouse file as immutable Parquet parts, so that a write costs
what it adds, not what the warehouse already holds.

For the warehouse ``bench.duckdb``::

    bench.duckdb                                   the catalog: every table but the samples
    bench.duckdb.samples/gen=0000000007/<id>.parquet  a loaded batch's part(s), in order of result

The catalog stays small (a row per result, not per sample), so the copy every write session
makes of it (:mod:`benchdb.store.snapshot`) stays cheap. The samples are most of a warehouse's
bytes; they are written once, as new files, and never changed. A part holds its results in order
of result id, each result's rows together (a small batch's one part sorted by result, metric,
repeat, iteration; a large batch's parts, one per writing thread, in the order each file holds its
rows, :meth:`benchdb.store.parts_store.Store.write_files`; a compacted part concatenates parts), so
DuckDB skips row groups of other results. Readers that need measurement order ask for it, or check
it and sort only a result that came back otherwise (:mod:`benchdb.analysis.gate_samples`).

Every write session that adds samples writes its parts into a new *generation* folder, one above
the last one published. The catalog records the published generations (``benchdb_meta``
``samples_low`` .. ``samples_high``) and its ``samples`` view reads exactly those::

    SELECT ... FROM read_parquet(<folder> || '/gen=<low>/*.parquet')
    UNION ALL
    SELECT ... FROM read_parquet(<folder> || '/gen=*/*.parquet', hive_partitioning = true, ...)
    WHERE gen > <low> AND gen <= <high>

DuckDB prunes files by their folder's ``gen=`` value before opening them, so the parts of a
generation not yet published (a write in progress, or one whose writer died) are never read,
even when half written. A session publishes its catalog only once its parts are durable
(fsynced): a reader sees a write whole or not at all. The next writer (holding the writer lock)
removes generations above the published one. The lowest generation is named on its own so that
a reader whose generations are gone (a connection open across two compactions) gets DuckDB's "No
files found" for it rather than an empty table.

The view names no place: ``<folder>`` is the DuckDB variable ``benchdb_samples`` when a
connection set it (benchdb's connections do, :func:`point`), else the database file's name plus
``.samples``, taken from DuckDB's default ``temp_directory`` (``<database>.tmp``, the path the
connection opened). So ``duckdb.connect("bench.duckdb", read_only=True)`` reads samples with no
setup from any working directory, and the file and its folder copied or moved together (read-only
too) read the same with no write. A connection that ATTACHes the warehouse, or sets
``temp_directory``, sets the variable first. The catalog still records where its last writer found
the folder (``samples_folder``): a write after a move re-points it. benchdb's readers stay
sandboxed: DuckDB may read the warehouse and this folder, nothing else
(:func:`benchdb.store.database.connect`).

Parts and the folders benchdb creates for them take the warehouse file's mode and group (a
private warehouse keeps private samples).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from benchdb import sql
from benchdb.errors import BenchdbError

if TYPE_CHECKING:
    import duckdb

#: The samples view's columns and their types: every part is written with exactly these.
COLUMNS = (
    ("result_id", "VARCHAR"),
    ("metric", "VARCHAR"),
    ("unit", "VARCHAR"),
    ("iteration", "INTEGER"),
    ("t_offset_s", "DOUBLE"),
    ("value", "DOUBLE"),
    ("repeat", "INTEGER"),
)
#: The sample columns, as a SELECT list.
NAMES = ", ".join(name for name, _ in COLUMNS)
#: One row of NULLs with the samples' columns and types.
NULL_ROW = "SELECT " + ", ".join(f"CAST(NULL AS {kind}) AS {name}" for name, kind in COLUMNS)
#: No samples, with their columns and types (the view of a warehouse with no part yet).
EMPTY_SELECT = NULL_ROW + " WHERE false"
_GEN_DIGITS = 10
#: The DuckDB variable naming the samples folder, where a connection set it (:func:`point`).
VARIABLE = "benchdb_samples"
#: The samples folder as the view finds it: the variable, else the database file's own path (DuckDB's
#: default temp_directory is that path plus ``.tmp``). Table functions take no subquery, so
#: ``duckdb_databases()`` cannot say where the file is; a setting can.
_ROOT = (
    f"coalesce(getvariable('{VARIABLE}'), "
    "regexp_replace(current_setting('temp_directory'), '\\.tmp$', '') || '.samples')"
)
#: How the view finds its parts: stored with the views' digest, so that a warehouse whose view was
#: written another way is sent to `benchdb db upgrade` by name.
VIEW_FORM = "relative to the database file, lowest generation named, bound on it"
_META = ("samples_low", "samples_high", "samples_folder", "samples_retired_below")


def folder_for(path: str | os.PathLike) -> Path | None:
    """The samples folder of the warehouse at ``path`` (beside the file a symlink points at);
    None for an in-memory database."""
    if str(path) == ":memory:":
        return None
    real = Path(os.path.realpath(path))
    return real.with_name(f"{real.name}.samples")


def gen_name(gen: int) -> str:
    """The folder name of generation ``gen``."""
    return f"gen={gen:0{_GEN_DIGITS}d}"


def glob_string(folder: Path) -> str:
    """The SQL string literal of the pattern naming every part of ``folder``."""
    return sql.string(sql.literal(folder) + "/gen=*/*.parquet")


def view_sql(low: int, high: int) -> str:
    """The ``samples`` view over generations ``low`` .. ``high`` of the samples folder beside the
    database (an empty relation of the same columns while there is none)."""
    if high < low:
        return f"CREATE OR REPLACE VIEW samples AS {EMPTY_SELECT}"
    # DuckDB reads the schema from the first file a read_parquet lists: the second branch lists the
    # lowest generation first (this catalog's reader holds it), not whatever ``gen=*`` sorts first,
    # which may be an older generation a compaction is removing at that moment.
    lowest = sql.string("/" + gen_name(int(low)) + "/*.parquet")
    return (
        f"CREATE OR REPLACE VIEW samples AS SELECT {NAMES} FROM read_parquet({_ROOT} || {lowest}, "
        f"hive_partitioning = false) UNION ALL SELECT {NAMES} FROM read_parquet([{_ROOT} || {lowest}, "
        f"{_ROOT} || '/gen=*/*.parquet'], hive_partitioning = true, hive_types = {{'gen': BIGINT}}) "
        f"WHERE gen > {int(low)} AND gen <= {int(high)}"
    )


def point(con: duckdb.DuckDBPyConnection, folder: Path | None) -> None:
    """Make the ``samples`` view of ``con`` read ``folder``: a writer's connection opens a copy of
    the file under another name, and a symlinked warehouse keeps its folder beside the target."""
    if folder is not None:
        con.execute(f"SET VARIABLE {VARIABLE} = $1", [sql.literal(folder)])


def select_sql(source: str, *, sort: bool = True) -> str:
    """``source`` (a SELECT of the sample columns) cast to the part columns and (``sort``) sorted
    by result, so that DuckDB skips every row group of other results when a query asks for a few,
    and a result's rows come back together in measurement order."""
    cast = ", ".join(f"CAST({name} AS {kind}) AS {name}" for name, kind in COLUMNS)
    return f"SELECT {cast} FROM ({source})" + (" ORDER BY result_id, metric, repeat, iteration" if sort else "")


def published(con: duckdb.DuckDBPyConnection) -> tuple[int, int, str | None]:
    """(low, high, folder as last written) of the open warehouse's samples."""
    found = meta(con)
    return (int(found.get("samples_low") or 1), int(found.get("samples_high") or 0), found.get("samples_folder"))


def meta(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    return dict(con.execute(sql.load("queries/parts_meta.sql"), [list(_META)]).fetchall())


def restore_view(con: duckdb.DuckDBPyConnection) -> None:
    """Create the ``samples`` view over the generations and folder the catalog records (restoring
    it when another program changed it). A warehouse of a schema before 0009 keeps its table."""
    if not external(con):
        return
    low, high, _ = published(con)
    con.execute(view_sql(low, high))


def verify(con: duckdb.DuckDBPyConnection, db: Path) -> None:
    """Refuse a warehouse whose samples folder is not beside it (the file was copied or moved
    without it, or the folder is gone), or lacks the generations its catalog reads."""
    low, high, _ = published(con)
    folder = folder_for(db)
    if high < low or folder is None:
        return
    if not folder.is_dir():
        raise BenchdbError(
            f"the samples folder {folder} of database {db} is missing; a warehouse is "
            "its file and this folder: copy or move the folder beside the file, as "
            f"{folder}"
        )
    if not (folder / gen_name(low)).is_dir():
        raise BenchdbError(
            f"the samples folder {folder} lacks {gen_name(low)}, which database {db} reads "
            "(the folder is older or newer than the file): copy the file and its folder "
            "together, from the same moment"
        )


def on_disk(db: str | os.PathLike) -> list[Path]:
    """The parts in the samples folder of ``db`` (published or not), in generation order."""
    return on_disk_folder(folder_for(db))


def on_disk_folder(folder: Path | None) -> list[Path]:
    if folder is None or not folder.is_dir():
        return []
    return sorted(folder.glob("gen=*/*.parquet"))


def external(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether the open warehouse keeps its samples in parts (schema 0009 on), not in a table."""
    return not con.execute(sql.load("queries/has_table.sql"), ["samples"]).fetchall()[0][0]


def gen_of(name: str) -> int | None:
    prefix = "gen="
    if name.startswith(prefix) and name[len(prefix) :].isdigit():
        return int(name[len(prefix) :])
    return None


def has_meta(con: duckdb.DuckDBPyConnection) -> bool:
    return bool(con.execute(sql.load("queries/has_table.sql"), ["benchdb_meta"]).fetchall()[0][0])


def fsync(path: Path) -> None:
    """Make a file, or a folder's entries, durable."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)

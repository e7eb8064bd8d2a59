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
rows, :meth:`Store.write_files`; a compacted part concatenates parts), so DuckDB skips row groups
of other results. Readers that need measurement order ask for it, or check it and sort only a
result that came back otherwise (:mod:`benchdb.analysis.gate`).

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
import shutil
import stat
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from benchdb import sql
from benchdb.errors import BenchdbError

if TYPE_CHECKING:
    import duckdb

#: The samples view's columns and their types: every part is written with exactly these.
COLUMNS = (("result_id", "VARCHAR"), ("metric", "VARCHAR"), ("unit", "VARCHAR"), ("iteration", "INTEGER"),
           ("t_offset_s", "DOUBLE"), ("value", "DOUBLE"), ("repeat", "INTEGER"))
#: The sample columns, as a SELECT list.
NAMES = ", ".join(name for name, _ in COLUMNS)
#: One row of NULLs with the samples' columns and types.
NULL_ROW = "SELECT " + ", ".join(f"CAST(NULL AS {kind}) AS {name}" for name, kind in COLUMNS)
#: No samples, with their columns and types (the view of a warehouse with no part yet).
EMPTY_SELECT = NULL_ROW + " WHERE false"
#: The table migration 0009 renames the samples table to, emptied into parts by :func:`adopt`.
LEGACY_TABLE = "samples_unmoved"
_GEN_DIGITS = 10
#: The DuckDB variable naming the samples folder, where a connection set it (:func:`point`).
VARIABLE = "benchdb_samples"
#: The samples folder as the view finds it: the variable, else the database file's own path (DuckDB's
#: default temp_directory is that path plus ``.tmp``). Table functions take no subquery, so
#: ``duckdb_databases()`` cannot say where the file is; a setting can.
_ROOT = (f"coalesce(getvariable('{VARIABLE}'), "
         "regexp_replace(current_setting('temp_directory'), '\\.tmp$', '') || '.samples')")
#: How the view finds its parts: stored with the views' digest, so that a warehouse whose view was
#: written another way is sent to `benchdb db upgrade` by name.
VIEW_FORM = "relative to the database file, lowest generation named"
#: Rows a thread writing a batch's parts writes at least (:meth:`Store.write_files`): a batch of
#: fewer is one part.
PART_ROWS = 500_000
#: Bytes of parts one compacted part is made of at most (a part of about 14M samples).
COMPACT_BYTES = 128 * 2**20
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


def _string(text: str) -> str:
    """A SQL string literal. View definitions and COPY targets cannot take bound parameters, so the
    two values benchdb itself chose (the samples folder and a part's name) are quoted here."""
    return "'" + text.replace("'", "''") + "'"


def glob_string(folder: Path) -> str:
    """The SQL string literal of the pattern naming every part of ``folder``."""
    return _string(sql.literal(folder) + "/gen=*/*.parquet")


def view_sql(low: int, high: int) -> str:
    """The ``samples`` view over generations ``low`` .. ``high`` of the samples folder beside the
    database (an empty relation of the same columns while there is none)."""
    if high < low:
        return f"CREATE OR REPLACE VIEW samples AS {EMPTY_SELECT}"
    lowest = _string("/" + gen_name(int(low)) + "/*.parquet")
    return (f"CREATE OR REPLACE VIEW samples AS SELECT {NAMES} FROM read_parquet({_ROOT} || {lowest}, "
            f"hive_partitioning = false) UNION ALL SELECT {NAMES} FROM read_parquet({_ROOT} || '/gen=*/*.parquet', "
            f"hive_partitioning = true, hive_types = {{'gen': BIGINT}}) WHERE gen > {int(low)} AND gen <= {int(high)}")


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
    found = _meta(con)
    return (int(found.get("samples_low") or 1), int(found.get("samples_high") or 0),
            found.get("samples_folder"))


def _meta(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    return dict(con.execute(sql.load("queries/parts_meta.sql"), [list(_META)]).fetchall())


@dataclass(frozen=True)
class Compaction:
    parts_before: int
    parts_after: int
    rows: int
    #: Generations an earlier compaction had retired, removed now.
    removed: int


class Store:
    """The samples folder as one write session sees it: the generation it writes, the parts it
    wrote, and publishing them into the catalog it writes."""

    def __init__(self, db: str | os.PathLike, like: os.stat_result | None = None):
        self.folder = folder_for(db)
        #: The warehouse file's status, whose mode and group the parts and their folders take.
        self.like = like
        self.low, self.high = 1, 0
        self.gen = 1
        self.written: list[Path] = []
        #: The generation folder this session made (removed whole when it publishes nothing).
        self.made: Path | None = None
        #: Where the catalog said the samples were, when the warehouse has moved since its last write.
        self.moved_from: str | None = None

    # ------------------------------------------------------------------ session start
    def open(self, con: duckdb.DuckDBPyConnection) -> None:
        """Read the published generations from the catalog ``con`` (a writer's copy) and remove
        what no published catalog names: generations above the last published one (a writer that
        died, or failed before publishing)."""
        point(con, self.folder)           # this connection's file is a copy with another name
        if _has_meta(con):
            self.low, self.high, stored = published(con)
            if self.folder is not None and stored is not None and stored != str(self.folder):
                self.moved_from = stored
                if self.high >= self.low and not self.folder.is_dir():
                    raise BenchdbError(f"the samples folder {self.folder} is missing (the warehouse's "
                                       f"samples were at {stored}); move that folder beside the "
                                       "warehouse file and try again")
                con.execute(sql.load("queries/set_meta.sql"), ["samples_folder", str(self.folder)])
        self.gen = self.high + 1
        _remove_generations(self.folder, lambda gen: gen > self.high)

    # ------------------------------------------------------------------ writing
    def write(self, con: duckdb.DuckDBPyConnection, source: str, params: dict | list | None = None, *,
              sort: bool = True) -> Path | None:
        """Write the rows of ``source`` (a SELECT of the sample columns; ``params`` bound) as one
        new part of this session's generation (``sort``: sorted by result, see :func:`select_sql`).
        Returns the part, or None when there were no rows."""
        part = self._gen_dir() / f"{uuid.uuid4().hex}.parquet"
        try:
            rows = con.execute(f"COPY ({select_sql(source, sort=sort)}) TO {_string(str(part))} "
                               "(FORMAT parquet, COMPRESSION zstd)", params).fetchall()[0][0]
            if rows:
                self._own(part, is_dir=False)
        except BaseException:
            part.unlink(missing_ok=True)
            raise
        if not rows:
            part.unlink(missing_ok=True)
            return None
        self.written.append(part)
        # the session reads what it wrote (change points, process-level intervals) before it publishes
        con.execute(view_sql(self.low, self.gen))
        return part

    def write_files(self, con: duckdb.DuckDBPyConnection, source: str, params: dict | list | None = None, *,
                    rows: int) -> list[Path]:
        """Write the ``rows`` rows of ``source`` (a SELECT of the sample columns reading whole
        files, in the order of their result ids) as new parts of this session's generation.

        A batch of :data:`PART_ROWS` rows or more is written by up to one thread per
        :data:`PART_ROWS` rows, each writing the rows it read into a part of its own as it read
        them: no sort and no merge, the cheapest write DuckDB has (a third of ingest's time went
        to the sorted single part). A thread scans a file's row group whole and the files in the
        order given, so each part still holds its results in order of id, each result's rows
        together in the order its file holds them (a file of several row groups may be spread
        over two parts; readers order what they need). A smaller batch is one sorted part
        (:meth:`write`). Returns the parts written (none when there were no rows)."""
        threads = int(con.execute("SELECT current_setting('threads')").fetchall()[0][0])
        writers = min(threads, rows // PART_ROWS)
        if writers <= 1:
            part = self.write(con, source, params)
            return [part] if part is not None else []
        gen_dir = self._gen_dir()
        batch = uuid.uuid4().hex
        con.execute(f"SET threads = {writers}")
        try:
            con.execute(f"COPY ({select_sql(source, sort=False)}) TO {_string(str(gen_dir))} "
                        f"(FORMAT parquet, COMPRESSION zstd, PER_THREAD_OUTPUT, OVERWRITE_OR_IGNORE, "
                        f"FILENAME_PATTERN {_string(batch + '_{i}')})", params)
        except BaseException:
            for part in gen_dir.glob(f"{batch}_*.parquet"):
                part.unlink(missing_ok=True)
            raise
        finally:
            con.execute(f"SET threads = {threads}")
        written = sorted(gen_dir.glob(f"{batch}_*.parquet"))
        for part in written:
            self._own(part, is_dir=False)
        self.written.extend(written)
        if written:
            con.execute(view_sql(self.low, self.gen))
        return written

    def _gen_dir(self) -> Path:
        """This session's generation folder, made (with the samples folder) on its first part."""
        if self.folder is None:
            raise BenchdbError("an in-memory warehouse has no samples folder; give --db a file")
        gen_dir = self.folder / gen_name(self.gen)
        if not gen_dir.is_dir():
            for folder in (self.folder, gen_dir):
                folder.mkdir(exist_ok=True)
                self._own(folder, is_dir=True)
            self.made = gen_dir
        return gen_dir

    def _own(self, path: Path, *, is_dir: bool) -> None:
        """Give ``path`` the warehouse file's mode and group (a folder: search where it may read,
        and always the owner's rwx, which the next writer needs)."""
        if self.like is None:
            return
        mode = stat.S_IMODE(self.like.st_mode) & 0o666
        try:       # (the samples folder may be another user's, in a warehouse a group shares)
            os.chmod(path, (mode | (mode & 0o444) >> 2 | 0o700) if is_dir else mode)
            os.chown(path, -1, self.like.st_gid)
        except PermissionError:            # not ours, or not a group of ours: what it has stays
            pass

    def forget(self, parts: list[Path]) -> None:
        """Remove parts this session wrote whose rows were rolled back."""
        for part in parts:
            part.unlink(missing_ok=True)
            if part in self.written:
                self.written.remove(part)

    def adopt(self, con: duckdb.DuckDBPyConnection) -> None:
        """Move the rows of a samples table of an older layout (renamed by migration 0009) into a
        part, and drop the table; the caller owns the transaction and publishes."""
        if not con.execute(sql.load("queries/has_table.sql"), [LEGACY_TABLE]).fetchall()[0][0]:
            return
        if con.execute(f"SELECT count(*) FROM {LEGACY_TABLE}").fetchall()[0][0]:
            self.write(con, f"SELECT {NAMES} FROM {LEGACY_TABLE}")
        con.execute(f"DROP TABLE {LEGACY_TABLE}")

    def compact(self, con: duckdb.DuckDBPyConnection) -> Compaction:
        """Rewrite every published sample into a few large parts of a new generation, which
        becomes the only one published; the generations it replaces stay on disk for the readers
        that opened the warehouse before (their catalog still names them) until the next
        compaction removes them. Reading through many small parts costs a footer each: a fleet
        that ingests often compacts now and then (``benchdb db compact``)."""
        retired_before = int(_meta(con).get("samples_retired_below") or 0)
        removed = _remove_generations(self.folder, lambda gen: gen < retired_before)
        before = [p for p in on_disk_folder(self.folder) if self.low <= (_gen_of(p.parent.name) or 0) <= self.high]
        chunks = _chunks(before, COMPACT_BYTES)
        if self.high < self.low or len(chunks) == len(before):
            return Compaction(len(before), len(before), 0, removed)
        rows = con.execute("SELECT count(*) FROM samples").fetchall()[0][0]
        self.low = self.gen                   # the view this session publishes reads the new parts alone
        # Each result's rows sit together, in order, in the one part that holds them: parts
        # concatenated in their order keep that, streamed with no sort; a chunk at a time bounds
        # the memory the writer buffers.
        con.execute("SET preserve_insertion_order = true")
        for chunk in chunks:
            self.write(con, f"SELECT {NAMES} FROM read_parquet($files)",
                       {"files": sql.literals(chunk)}, sort=False)
        con.execute(sql.load("queries/set_meta.sql"), ["samples_retired_below", str(self.low)])
        return Compaction(len(before), len(chunks), rows, removed)

    # ------------------------------------------------------------------ publishing
    @property
    def changed(self) -> bool:
        return bool(self.written) or self.moved_from is not None

    def publish(self, con: duckdb.DuckDBPyConnection, *, force: bool = False) -> None:
        """Make the parts written durable and record them (and the folder's place) in the catalog
        ``con``: its ``samples`` view then reads them. Publishing the catalog is the caller's."""
        if not (force or self.changed):
            return
        high = self.gen if self.written else self.high
        if self.written:
            for part in self.written:
                fsync(part)
            fsync(self.written[0].parent)
            assert self.folder is not None
            fsync(self.folder)
            fsync(self.folder.parent)
        con.execute(view_sql(self.low, high))
        values = {"samples_low": str(self.low), "samples_high": str(high)}
        if self.folder is not None:
            values["samples_folder"] = str(self.folder)
        for key, value in values.items():
            con.execute(sql.load("queries/set_meta.sql"), [key, value])
        self.high = high

    def abandon(self) -> None:
        """Remove this session's generation (nothing published names it), also when a failed write
        left it without a part."""
        if self.made is not None:
            shutil.rmtree(self.made, ignore_errors=True)
        self.written, self.made = [], None

    def keep_aside(self) -> Path | None:
        """Rename this session's generation out of the readers' pattern (a write kept unpublished
        beside the warehouse still has its samples). Returns the new place."""
        if self.folder is None or not self.written:
            return None
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
        kept = self.folder / f"kept-{gen_name(self.gen)}-{stamp}-{os.getpid()}"
        os.replace(self.folder / gen_name(self.gen), kept)
        self.written, self.made = [], None
        return kept


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
        raise BenchdbError(f"the samples folder {folder} of database {db} is missing; a warehouse is "
                           "its file and this folder: copy or move the folder beside the file, as "
                           f"{folder}")
    if not (folder / gen_name(low)).is_dir():
        raise BenchdbError(f"the samples folder {folder} lacks {gen_name(low)}, which database {db} reads "
                           "(the folder is older or newer than the file): copy the file and its folder "
                           "together, from the same moment")


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


def _chunks(files: list[Path], limit: int) -> list[list[Path]]:
    """``files`` in order, cut into runs of at most ``limit`` bytes (a larger file alone)."""
    out: list[list[Path]] = []
    size = 0
    for f in files:
        n = f.stat().st_size
        if not out or size + n > limit:
            out.append([])
            size = 0
        out[-1].append(f)
        size += n
    return out


def _remove_generations(folder: Path | None, which: Callable[[int], bool]) -> int:
    """Remove the generation folders of ``folder`` whose number ``which`` picks; how many."""
    if folder is None or not folder.is_dir():
        return 0
    removed = 0
    for entry in folder.iterdir():
        gen = _gen_of(entry.name)
        if gen is not None and which(gen):
            shutil.rmtree(entry, ignore_errors=True)
            removed += 1
    return removed


def _gen_of(name: str) -> int | None:
    prefix = "gen="
    if name.startswith(prefix) and name[len(prefix):].isdigit():
        return int(name[len(prefix):])
    return None


def _has_meta(con: duckdb.DuckDBPyConnection) -> bool:
    return bool(con.execute(sql.load("queries/has_table.sql"), ["benchdb_meta"]).fetchall()[0][0])


def fsync(path: Path) -> None:
    """Make a file, or a folder's entries, durable."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)

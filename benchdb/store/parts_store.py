"""The samples folder as one write session sees it (:class:`Store`): the generation it writes,
writing a batch's parts, compacting them, and publishing them into the catalog it writes. The
folder's layout and the view that reads it are :mod:`benchdb.store.parts`."""

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
from benchdb.store import leases
from benchdb.store.parts import (
    NAMES,
    folder_for,
    fsync,
    gen_name,
    gen_of,
    has_meta,
    meta,
    on_disk_folder,
    point,
    published,
    select_sql,
    view_sql,
)

if TYPE_CHECKING:
    import duckdb


#: The table migration 0009 renames the samples table to, emptied into parts by :func:`adopt`.
LEGACY_TABLE = "samples_unmoved"


#: Rows a thread writing a batch's parts writes at least (:meth:`Store.write_files`): a batch of
#: fewer is one part.
PART_ROWS = 500_000


#: Bytes of parts one compacted part is made of at most (a part of about 14M samples).
COMPACT_BYTES = 128 * 2**20


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
        #: The warehouse file (a symlink's target), beside which replaced catalogs are kept while read.
        self.path = Path(os.path.realpath(db)) if self.folder is not None else None
        #: The warehouse file's status, whose mode and group the parts and their folders take.
        self.like = like
        self.low, self.high = 1, 0
        #: The generations the published catalog this session started from reads.
        self.opened = (1, 0)
        self.gen = 1
        self.written: list[Path] = []
        #: The generation folder this session made (removed whole when it publishes nothing).
        self.made: Path | None = None
        #: Whether this session made the samples folder itself (a new warehouse's).
        self.made_folder = False
        #: Where the catalog said the samples were, when the warehouse has moved since its last write.
        self.moved_from: str | None = None

    # ------------------------------------------------------------------ session start
    def open(self, con: duckdb.DuckDBPyConnection) -> None:
        """Read the published generations from the catalog ``con`` (a writer's copy) and remove
        what no published catalog names: generations above the last published one (a writer that
        died, or failed before publishing)."""
        point(con, self.folder)  # this connection's file is a copy with another name
        if has_meta(con):
            self.low, self.high, stored = published(con)
            if self.folder is not None and stored is not None and stored != str(self.folder):
                self.moved_from = stored
                if self.high >= self.low and not self.folder.is_dir():
                    raise BenchdbError(
                        f"the samples folder {self.folder} is missing (the warehouse's "
                        f"samples were at {stored}); move that folder beside the "
                        "warehouse file and try again"
                    )
                con.execute(sql.load("queries/set_meta.sql"), ["samples_folder", str(self.folder)])
        self.opened = (self.low, self.high)
        self.gen = self.high + 1
        _remove_generations(self.folder, lambda gen: gen > self.high)

    # ------------------------------------------------------------------ writing
    def write(
        self, con: duckdb.DuckDBPyConnection, source: str, params: dict | list | None = None, *, sort: bool = True
    ) -> Path | None:
        """Write the rows of ``source`` (a SELECT of the sample columns; ``params`` bound) as one
        new part of this session's generation (``sort``: sorted by result, see :func:`select_sql`).
        Returns the part, or None when there were no rows."""
        part = self._gen_dir() / f"{uuid.uuid4().hex}.parquet"
        try:
            rows = con.execute(
                f"COPY ({select_sql(source, sort=sort)}) TO {sql.string(str(part))} (FORMAT parquet, COMPRESSION zstd)",
                params,
            ).fetchall()[0][0]
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

    def write_files(
        self, con: duckdb.DuckDBPyConnection, source: str, params: dict | list | None = None, *, rows: int
    ) -> list[Path]:
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
        if writers != threads:  # (setting it, even to the same value, costs a few ms)
            con.execute(f"SET threads = {writers}")
        try:
            con.execute(
                f"COPY ({select_sql(source, sort=False)}) TO {sql.string(str(gen_dir))} "
                f"(FORMAT parquet, COMPRESSION zstd, PER_THREAD_OUTPUT, OVERWRITE_OR_IGNORE, "
                f"FILENAME_PATTERN {sql.string(batch + '_{i}')})",
                params,
            )
        except BaseException:
            for part in gen_dir.glob(f"{batch}_*.parquet"):
                part.unlink(missing_ok=True)
            raise
        finally:
            if writers != threads:
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
            if not self.folder.is_dir():
                self.made_folder = True
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
        try:  # (the samples folder may be another user's, in a warehouse a group shares)
            os.chmod(path, (mode | (mode & 0o444) >> 2 | 0o700) if is_dir else mode)
            os.chown(path, -1, self.like.st_gid)
        except PermissionError:  # not ours, or not a group of ours: what it has stays
            pass

    def forget(self, parts: list[Path], con: duckdb.DuckDBPyConnection | None = None) -> None:
        """Remove parts this session wrote whose rows were rolled back. With ``con`` (parts that
        are forgotten in a transaction that commits: a batch written again without a rejected
        file), a session left with no part of its own reads the published samples again and
        leaves no empty folder: its view and its catalog stay as they were."""
        for part in parts:
            part.unlink(missing_ok=True)
            if part in self.written:
                self.written.remove(part)
        if con is not None and not self.written:
            con.execute(view_sql(self.low, self.high))
            self.abandon()

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
        that opened the warehouse before (their catalog still names them): a later compaction
        removes them once no reader holds a catalog that names them (:mod:`benchdb.store.leases`).
        Reading through many small parts costs a footer each: a fleet that ingests often compacts
        now and then (``benchdb db compact``)."""
        retired_before = int(meta(con).get("samples_retired_below") or 0)
        read = leases.read_ranges(self.path) if self.path is not None else []
        # Only a prefix goes: a reader whose lease was lost is refused loudly when its lowest
        # generation is missing, but a hole above that would be skipped without a word.
        below = min([retired_before, *(lo for lo, _ in read)])
        removed = _remove_generations(self.folder, lambda gen: gen < below)
        before = [p for p in on_disk_folder(self.folder) if self.low <= (gen_of(p.parent.name) or 0) <= self.high]
        chunks = _chunks(before, COMPACT_BYTES)
        if self.high < self.low or len(chunks) == len(before):
            return Compaction(len(before), len(before), 0, removed)
        rows = con.execute("SELECT count(*) FROM samples").fetchall()[0][0]
        self.low = self.gen  # the view this session publishes reads the new parts alone
        # Each result's rows sit together, in order, in the one part that holds them: parts
        # concatenated in their order keep that, streamed with no sort; a chunk at a time bounds
        # the memory the writer buffers.
        con.execute("SET preserve_insertion_order = true")
        for chunk in chunks:
            self.write(con, f"SELECT {NAMES} FROM read_parquet($files)", {"files": sql.literals(chunk)}, sort=False)
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
        if self.made_folder and self.folder is not None:
            try:  # a new warehouse that was never published leaves no samples folder either
                self.folder.rmdir()
            except OSError:
                pass
        self.written, self.made, self.made_folder = [], None, False

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


#: A generation folder being removed is first renamed to this prefix plus its name.
_REMOVING = "removing-"


def _remove_generations(folder: Path | None, which: Callable[[int], bool]) -> int:
    """Remove the generation folders of ``folder`` whose number ``which`` picks; how many. Each is
    renamed out of the readers' pattern first (at once, whole), then deleted: a reader lists all of
    a generation's parts or none. What a writer that died left half removed goes too."""
    if folder is None or not folder.is_dir():
        return 0
    removed = 0
    for entry in sorted(folder.iterdir()):
        if entry.name.startswith(_REMOVING):
            shutil.rmtree(entry, ignore_errors=True)
            continue
        gen = gen_of(entry.name)
        if gen is None or not which(gen):
            continue
        doomed = folder / f"{_REMOVING}{uuid.uuid4().hex}-{entry.name}"
        try:
            os.replace(entry, doomed)
        except OSError:
            doomed = entry
        shutil.rmtree(doomed, ignore_errors=True)
        removed += 1
    return removed

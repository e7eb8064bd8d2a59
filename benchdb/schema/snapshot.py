"""Readers never block the writer: every write works on a private copy of the warehouse that
replaces the file atomically once it is complete.

Analysts keep read-only connections open for hours (a notebook); DuckDB's file lock would make a
nightly ``benchdb ingest`` fail against them. So a benchdb writer (ingest, ``db upgrade``, ``ack``):

1. takes the writer lock ``.<name>.lock`` beside the database (``flock``; writers queue on it,
   waiting up to ``--wait`` seconds, and the file names the PID holding it),
2. copies the warehouse to ``.<name>.<pid>.writing`` in the same folder,
3. writes there (transactions, checkpoint), and
4. renames the copy over the warehouse (``os.replace``: atomic on POSIX), fsyncing file and folder.

An open reader keeps the snapshot it opened (the old file stays alive until it closes); every new
connection sees the new data. A writer that dies (even ``kill -9``) leaves the warehouse exactly as
it was: its copy is discarded by the next writer. The cost is one file copy per write session.
"""

from __future__ import annotations

import os
import shutil
import time
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

from benchdb.errors import BenchdbError
from benchdb.schema import database

if TYPE_CHECKING:
    import duckdb


def _lock_path(path: Path) -> Path:
    return path.with_name(f".{path.name}.lock")


def _temp_path(path: Path) -> Path:
    return path.with_name(f".{path.name}.{os.getpid()}.writing")


@contextmanager
def _writer_lock(path: Path, wait_s: float) -> Iterator[None]:
    try:
        import fcntl
    except ImportError:  # not POSIX: writers are not serialised beyond DuckDB's own lock
        yield
        return
    fd = os.open(_lock_path(path), os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + wait_s
        delay = 0.05
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
                    who = f" (PID {holder})" if holder.isdigit() else ""
                    raise BenchdbError(f"database {path} is in use by another process{who}; wait for it "
                                       "to finish and try again, or raise --wait") from None
                time.sleep(delay)
                delay = min(delay * 2, 0.5)
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        try:
            yield
        finally:
            os.ftruncate(fd, 0)
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def _discard(tmp: Path) -> None:
    for p in (tmp, Path(f"{tmp}.wal")):
        p.unlink(missing_ok=True)


def _clean_stale(path: Path) -> None:
    """Copies left by writers that died (the lock is ours, so nobody else is writing)."""
    for stale in path.parent.glob(f".{path.name}.*.writing"):
        _discard(stale)


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextmanager
def write_session(db, *, wait_s: float = 60.0, migrate: bool = False,
                  available: list[database.Migration] | None = None
                  ) -> Iterator[tuple[duckdb.DuckDBPyConnection, list[database.Migration]]]:
    """A writable connection to a private copy of the warehouse, published when the ``with``
    block ends without an exception (discarded otherwise). Yields (connection, migrations
    applied). ``migrate``: apply pending migrations instead of refusing an older schema."""
    path = database.resolve_db(db)
    database.check_folder(path)
    with _writer_lock(path, wait_s):
        _clean_stale(path)
        tmp = _temp_path(path)
        if path.exists():
            shutil.copyfile(path, tmp)
            wal = Path(f"{path}.wal")
            if wal.exists():   # left by a writer that was not benchdb: DuckDB replays it on open
                shutil.copyfile(wal, Path(f"{tmp}.wal"))
        con = None
        try:
            con = database.connect(tmp, read_only=False, wait_s=0)
            applied = database.prepare(con, path, available, migrate=migrate)
            yield con, applied
            con.execute("CHECKPOINT")
            con.close()
            con = None
            _fsync(tmp)
            os.replace(tmp, path)
            Path(f"{path}.wal").unlink(missing_ok=True)
            _fsync(path.parent)                   # the rename itself is durable
        finally:
            if con is not None:
                con.close()
            _discard(tmp)

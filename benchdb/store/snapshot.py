"""Readers never block the writer: every write works on a private copy of the warehouse's catalog
that replaces the file atomically once it is complete.

Analysts keep read-only connections open for hours (a notebook); DuckDB's file lock would make a
nightly ``benchdb ingest`` fail against them. So a benchdb writer (ingest, ``db upgrade``, ``ack``):

1. takes the writer lock ``.<name>.lock`` beside the database (``flock``; writers queue on it,
   waiting up to ``--wait`` seconds, and the file names the PID holding it),
2. copies the warehouse file (the catalog: every table but the raw samples) to
   ``.<name>.<pid>.writing`` in the same folder,
3. writes there (transactions, checkpoint), and new samples as Parquet parts of a new generation
   of the samples folder, which no published catalog names yet (:mod:`benchdb.store.parts`),
4. makes the parts durable, then renames the copy over the warehouse (``os.replace``: atomic on
   POSIX), fsyncing file and folder.

An open reader keeps the snapshot it opened (the old file stays alive until it closes, and the
generations of samples it reads stay on disk while it holds it: :mod:`benchdb.store.leases`); every
new connection sees the new data. A writer that dies (even ``kill -9``) leaves the warehouse exactly as
it was: its copy and its parts are discarded by the next writer. The cost is one copy of the
catalog per write session (a row per result, not per sample) and the new samples themselves.

Another program's writes are never lost silently: the copy is taken under a shared lock DuckDB's
own writers exclude, and if the file or its WAL changed by the end of the session nothing is
published (the session's copy is kept under another name). The published file keeps the
warehouse's mode, group and owner; a symlinked warehouse keeps its link.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from benchdb import ctrl_c, sql
from benchdb.errors import BenchdbError, refused_write
from benchdb.store import database, leases, memo, parts, parts_store
from benchdb.store.migrate import mismatch as catalog_mismatch

if TYPE_CHECKING:
    import duckdb


def _lock_path(path: Path) -> Path:
    return path.with_name(f".{path.name}.lock")


def _temp_path(path: Path) -> Path:
    return path.with_name(f".{path.name}.{os.getpid()}.writing")


def _acquire(lock: Callable[[], None], wait_s: float, refused: Callable[[], BenchdbError]) -> None:
    """Call ``lock`` (one non-blocking attempt at a lock) until it succeeds, backing off up to 0.5 s
    between attempts; once ``wait_s`` has passed, raise ``refused()``."""
    deadline = time.monotonic() + wait_s
    delay = 0.05
    while True:
        try:
            lock()
            return
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.EACCES, errno.EWOULDBLOCK):
                raise
            if time.monotonic() >= deadline:
                raise refused() from None
            time.sleep(delay)
            delay = min(delay * 2, 0.5)


@contextmanager
def _writer_lock(path: Path, wait_s: float) -> Iterator[None]:
    try:
        import fcntl
    except ImportError:  # not POSIX: writers are not serialised beyond DuckDB's own lock
        yield
        return
    try:  # the lock file is as private as the warehouse (it names the writer's PID)
        mode = stat.S_IMODE(os.stat(path).st_mode) & 0o666 | 0o600
    except FileNotFoundError:
        mode = 0o644
    fd = os.open(_lock_path(path), os.O_RDWR | os.O_CREAT, mode)

    def refused() -> BenchdbError:
        holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
        who = f" (PID {holder})" if holder.isdigit() else ""
        return BenchdbError(
            f"database {path} is in use by another process{who}; wait for it to finish and try again, or raise --wait"
        )

    try:
        _acquire(lambda: fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB), wait_s, refused)
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


def _identity(path: Path) -> tuple:
    """What changes when any program writes the file: its inode and times, and its WAL's."""

    def one(p: str) -> tuple | None:
        try:
            st = os.stat(p)
        except FileNotFoundError:
            return None
        return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)

    return one(str(path)), one(f"{path}.wal")


@contextmanager
def _shared_lock(src, path: Path, wait_s: float) -> Iterator[None]:
    """A shared POSIX lock on the open warehouse: DuckDB's readers share it, its writers exclude it."""
    try:
        import fcntl
    except ImportError:  # not POSIX: DuckDB's own lock is all there is
        yield
        return
    _acquire(
        lambda: fcntl.lockf(src, fcntl.LOCK_SH | fcntl.LOCK_NB),
        wait_s,
        lambda: BenchdbError(
            f"database {path} is open for writing by another program (a DuckDB "
            "connection that is not read-only); close it and try again"
        ),
    )
    try:
        yield
    finally:
        fcntl.lockf(src, fcntl.LOCK_UN)


def _copy_consistent(path: Path, tmp: Path, wait_s: float) -> None:
    """Copy the warehouse (and a WAL another program left) while no other program holds DuckDB's
    write lock on it."""
    with open(path, "rb") as src, _shared_lock(src, path, wait_s):
        # private until it is published with the warehouse's own mode (:func:`_keep_attributes`)
        with open(tmp, "wb", opener=lambda name, flags: os.open(name, flags, 0o600)) as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
        wal = Path(f"{path}.wal")
        if wal.exists():  # left by a writer that was not benchdb: DuckDB replays it on open
            shutil.copyfile(wal, Path(f"{tmp}.wal"))


def _keep_attributes(st: os.stat_result | None, tmp: Path) -> None:
    """The published file keeps the warehouse's mode, group and (where allowed) owner."""
    if st is None:
        return
    os.chmod(tmp, stat.S_IMODE(st.st_mode))
    for uid in (st.st_uid, -1):  # only root may give a file away; the group is ours to keep
        try:
            os.chown(tmp, uid, st.st_gid)
            return
        except PermissionError:
            continue


def _kept_name(path: Path) -> Path:
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    return path.with_name(f"{path.stem}.unpublished-{stamp}-{os.getpid()}{path.suffix}")


class Session(NamedTuple):
    """What a write session gives its caller."""

    con: duckdb.DuckDBPyConnection
    #: Migrations applied when the session opened (``migrate``).
    applied: list[database.Migration]
    #: The warehouse's samples folder: new samples are written as parts through it.
    parts: parts_store.Store


@contextmanager
def write_session(
    db, *, wait_s: float = 60.0, migrate: bool = False, available: list[database.Migration] | None = None
) -> Iterator[Session]:
    """A writable connection to a private copy of the warehouse catalog, published when the
    ``with`` block ends without an exception (discarded otherwise), and the samples folder its new
    samples go to (:mod:`benchdb.store.parts`: they are durable before the catalog that names
    them is published). ``migrate``: apply pending migrations instead of refusing an older schema.

    A symlinked warehouse is written through: the target is replaced (the link stays) and the lock
    is taken beside the target. If another program changed the warehouse (or its WAL) during the
    session, nothing is published: the session's copy is kept beside it (its samples in a
    ``kept-`` folder of the samples folder) and the error names both."""
    named = database.resolve_db(db)
    database.check_folder(named)
    path = Path(os.path.realpath(named))
    with _writer_lock(path, wait_s):
        _clean_stale(path)
        tmp = _temp_path(path)
        try:
            st: os.stat_result | None = os.stat(path)
        except FileNotFoundError:
            st = None
        con = None
        store = parts_store.Store(path, like=st)
        published = False
        blank: bytes | None = None
        try:
            before = _identity(path)
            if st is not None:
                _copy_consistent(path, tmp, wait_s)
                if _identity(path) != before:
                    raise BenchdbError(
                        f"database {named} changed while benchdb copied it (another program "
                        "is writing it); try again once it has finished"
                    )
            elif available is None and not migrate:  # (an upgrade lists the migrations it applies)
                blank = database.blank_catalog()
                if blank is not None:
                    with open(tmp, "wb", opener=lambda name, flags: os.open(name, flags, 0o600)) as dst:
                        dst.write(blank)
            con = database.connect(tmp, read_only=False, wait_s=0)
            if blank is not None:  # its migrations count as applied now
                con.execute(sql.load("queries/migrations_applied_now.sql"))
            store.open(con)
            with ctrl_c.stops(con):  # DuckDB can drop a Ctrl-C (benchdb/ctrl_c.py)
                applied = database.prepare(
                    con, named, available, migrate=migrate, store=store, built_here=blank is not None
                )
                yield Session(con, applied, store)
            if store.changed:
                con.execute("BEGIN TRANSACTION")
                store.publish(con)
                con.execute("COMMIT")
            con.execute("CHECKPOINT")
            catalog_ok = catalog_mismatch(con) is None  # see _vouch_for_catalog
            con.close()
            con = None
            _keep_attributes(st, tmp)
            parts.fsync(tmp)
            if _identity(path) != before:
                kept = _kept_name(path)
                os.replace(tmp, kept)
                Path(f"{tmp}.wal").unlink(missing_ok=True)
                aside = store.keep_aside()
                samples = f" (its samples in {aside})" if aside is not None else ""
                raise BenchdbError(
                    f"database {named} was changed by another program during this write "
                    f"(its changes would be lost): nothing published; {named} is as that "
                    f"program left it and this write is kept in {kept}{samples}. Stop the "
                    "other writer and run the command again"
                )
            Path(f"{path}.wal").unlink(missing_ok=True)  # the old file's log never meets the new file
            if st is not None:  # its readers keep their generations while they hold it
                leases.keep(path, *store.opened)
            os.replace(tmp, path)
            published = True  # the catalog names the new parts from here on
            _vouch_for_catalog(path, catalog_ok)
            parts.fsync(path.parent)  # the rename itself is durable
            _link_samples(named, store)
            leases.read_ranges(path)  # forget the replaced catalogs no reader holds any more
        except Exception as exc:
            refused = refused_write(exc)
            if refused is None:
                raise
            # (a full disk is the machine's, not a bug: one line, and the copy is removed below)
            if published:
                raise BenchdbError(
                    f"database {named} was written, but making the write durable failed: "
                    f"{refused}; make room there before the next write"
                ) from None
            raise BenchdbError(
                f"cannot write database {named}: {refused}; nothing was changed (its copy "
                "and new samples were removed): make room there and run the command again"
            ) from None
        finally:
            if con is not None:
                _close_quietly(con)
            if not published:
                store.abandon()
            _discard(tmp)


def _vouch_for_catalog(path: Path, checked: bool) -> None:
    """Keep that the state just published passed the catalog check (``checked``: its catalog matched
    this code's when the session closed it), so that its first reader finds it passed
    (benchdb.store.memo) instead of checking it again."""
    if checked:
        memo.record_pass(path, "catalog", memo.state(path))


def _link_samples(named: Path, store: parts_store.Store) -> None:
    """A warehouse written through a symlink gets a link to its samples folder beside the link
    too: a plain DuckDB connection looks for the folder beside the path it opened
    (:mod:`benchdb.store.parts`). Best effort: benchdb's own connections do not need it."""
    link = Path(os.path.abspath(named))
    beside = link.with_name(f"{link.name}.samples")
    if store.folder is None or beside == store.folder or os.path.lexists(beside) or not store.folder.is_dir():
        return
    try:
        os.symlink(store.folder, beside)
    except OSError:
        pass


def _close_quietly(con: duckdb.DuckDBPyConnection) -> None:
    """Close a connection whose session failed (a full disk may fail its close too: the error that
    ended the session is the one to report)."""
    try:
        con.close()
    except Exception:
        pass

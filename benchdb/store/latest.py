"""The newest published snapshot of a warehouse, for a reader that lives long and answers many
requests (`benchdb dashboard`): each request reads one snapshot, the newest one published when it began,
whole, until it ends.

A snapshot is the catalog file as a writer published it and the generations of samples it names
(:mod:`benchdb.store.snapshot`). A request takes the current snapshot when the warehouse's
identity (its inode, size and times: :func:`benchdb.store.memo.state`) is the one the snapshot was
opened at, and otherwise opens the file as it is now, which becomes current. Opening it as it is
now takes a database of its own (:func:`benchdb.store.database.connect` ``fresh``): DuckDB would
hand a new connection to the path the database already open for it, the old catalog, for as long
as any request still reads it (a busy server answered an old catalog for seconds after an ingest).
A replaced snapshot is closed once its last request has ended.

A snapshot holds a lock of its own on its catalog file (an open-file-description lock, which no
other descriptor's close can drop) while it is open: compaction keeps every generation a locked
catalog names (:mod:`benchdb.store.leases`), so a request never finds its samples gone, nor half
of them. Each request gets its own cursor (DuckDB connections are not shared between threads).

A snapshot never changes, so an answer computed from it is its answer for as long as it is current:
:meth:`Latest.answer` keeps answers with their snapshot (at most :data:`ANSWER_BYTES`, the least
recently asked going first) and gives them again without running anything; the next snapshot starts
with none. ``BENCHDB_NO_CACHE=1`` turns that off, as for :mod:`benchdb.store.memo`.

The first request after a write would compute its answer; :meth:`Latest.keep_warm` computes a few
answers (the dashboard's default views) of each new snapshot in a thread of its own as soon as the
file says a write published (it looks every :data:`WARM_POLL_S`, and at once when a request opened a new
snapshot), one snapshot at a time, so that request finds them kept. A request never waits for it: one
that asks before its answer is kept computes it, as without it.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from benchdb.store import leases, memo, resolve_db

if TYPE_CHECKING:
    import duckdb


#: Bytes of answers a snapshot keeps at most (one answer at most a quarter of it).
ANSWER_BYTES = 64 * 2**20
#: Seconds between two looks at the warehouse's identity by :meth:`Latest.keep_warm` (two stat calls).
WARM_POLL_S = 0.25

Compute = Callable[["duckdb.DuckDBPyConnection"], bytes]


@dataclass
class _Snapshot:
    con: duckdb.DuckDBPyConnection
    #: The warehouse's identity when this snapshot was opened; None when a write published meanwhile.
    state: tuple | None
    #: A descriptor of its catalog file holding the lease (-1: none).
    fd: int
    users: int = 0
    #: Answers computed from it (:meth:`Latest.answer`), the most recently asked last.
    answers: OrderedDict = field(default_factory=OrderedDict)
    answer_bytes: int = 0

    def close(self) -> None:
        try:
            self.con.close()
        finally:
            if self.fd >= 0:
                os.close(self.fd)


class Latest:
    """The newest published snapshot of the warehouse ``db``, shared by concurrent readers."""

    def __init__(self, db: str | os.PathLike | None, *, wait_s: float = 10.0):
        self.path: Path = resolve_db(db)
        self.wait_s = wait_s
        self._lock = threading.Lock()
        self._current: _Snapshot | None = None
        #: Answers computed so far (not given from those kept): what a test or a benchmark can watch.
        self.computed = 0
        self._warmer: threading.Thread | None = None
        self._stop = threading.Event()
        self._wake = threading.Event()

    @contextmanager
    def reading(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A read-only cursor of the newest published snapshot for a ``with`` block; raises
        :class:`benchdb.errors.BenchdbError` when the warehouse cannot be read."""
        with self._reading() as (_, cur):
            yield cur

    def answer(self, key: Hashable, compute: Compute) -> bytes:
        """``compute(cursor)`` of the newest published snapshot, or the bytes it gave for ``key`` when
        it ran on this snapshot before. An exception is raised, never kept."""
        with self._reading() as (snap, cur):
            keep = snap.state is not None and memo.folder() is not None
            if keep:
                with self._lock:
                    if key in snap.answers:
                        snap.answers.move_to_end(key)
                        return snap.answers[key]
            with self._lock:
                self.computed += 1
            data = compute(cur)
            if keep and len(data) <= ANSWER_BYTES // 4:
                with self._lock:
                    if key not in snap.answers:
                        snap.answers[key] = data
                        snap.answer_bytes += len(data)
                    while snap.answer_bytes > ANSWER_BYTES:
                        snap.answer_bytes -= len(snap.answers.popitem(last=False)[1])
            return data

    @contextmanager
    def _reading(self) -> Iterator[tuple[_Snapshot, duckdb.DuckDBPyConnection]]:
        from benchdb.store import database, parts

        with self._lock:
            snap = self._take()
            try:
                cur = snap.con.cursor()
            except BaseException:
                self._give_back(snap)
                raise
        try:
            cur.execute(f"USE {database.ATTACHED}")
            parts.point(cur, parts.folder_for(self.path))
            yield snap, cur
        finally:
            cur.close()
            with self._lock:
                self._give_back(snap)

    def kept(self, key: Hashable) -> bool:
        """Whether the current snapshot keeps an answer for ``key`` (and is still the newest published)."""
        with self._lock:
            snap = self._current
            return (
                snap is not None
                and snap.state is not None
                and snap.state == memo.state(self.path)
                and (key in snap.answers)
            )

    def keep_warm(self, jobs: Sequence[tuple[Hashable, Compute]]) -> None:
        """Compute ``jobs``' answers (:meth:`answer`: key, compute) of every snapshot published from now
        on, and of the current one, in a daemon thread, until :meth:`close`. Errors are left to the
        request that asks: its answer says why."""
        if self._warmer is not None:
            raise RuntimeError("keep_warm was called already")
        self._warmer = threading.Thread(target=self._warm_loop, args=(list(jobs),), name="benchdb-warm", daemon=True)
        self._warmer.start()

    def _warm_loop(self, jobs: list[tuple[Hashable, Compute]]) -> None:
        warmed: tuple | None = None
        while not self._stop.is_set():
            state = memo.state(self.path)
            if state is not None and state != warmed and memo.folder() is not None:
                if self._warm(jobs, state):
                    warmed = state
            self._wake.wait(WARM_POLL_S)
            self._wake.clear()

    def _warm(self, jobs: list[tuple[Hashable, Compute]], state: tuple) -> bool:
        """Whether every job's answer was computed (or failed) on the snapshot at ``state``; False when a
        write published meanwhile (the next look warms the newer one) or on :meth:`close`."""
        for key, compute in jobs:
            if self._stop.is_set() or memo.state(self.path) != state:
                return False
            try:
                self.answer(key, compute)
            except Exception:  # noqa: BLE001, S110 (a request for it computes it again and says why)
                pass
        with self._lock:
            return self._current is not None and self._current.state == state

    def close(self) -> None:
        """Stop :meth:`keep_warm` (after the answer it computes) and close the current snapshot (one
        still read closes when its last request ends)."""
        self._stop.set()
        self._wake.set()
        if self._warmer is not None and self._warmer is not threading.current_thread():
            self._warmer.join()
        with self._lock:
            snap, self._current = self._current, None
            if snap is not None and snap.users == 0:
                snap.close()

    def _take(self) -> _Snapshot:
        state = memo.state(self.path)
        snap = self._current
        if snap is None or snap.state is None or snap.state != state:
            snap = self._open()
            self._wake.set()  # a new snapshot: keep_warm need not wait for its next look
            old, self._current = self._current, snap
            if old is not None and old.users == 0:
                old.close()
        snap.users += 1
        return snap

    def _give_back(self, snap: _Snapshot) -> None:
        snap.users -= 1
        if snap.users == 0 and snap is not self._current:
            snap.close()

    def _open(self) -> _Snapshot:
        """The warehouse as it is now, with its lease taken before DuckDB opens it."""
        from benchdb.store import database

        before = memo.state(self.path)
        fd = -1
        try:
            fd = os.open(self.path, os.O_RDONLY)
            leased = leases.hold(fd)
        except OSError:  # missing, unreadable, locked by a writer: opening it says why in one line
            leased = False
        if not leased and fd >= 0:  # (closed before DuckDB opens the file: closing drops its locks)
            os.close(fd)
            fd = -1
        try:
            con, _ = database.open_readonly(self.path, wait_s=self.wait_s, fresh=True)
        except BaseException:
            if fd >= 0:
                os.close(fd)
            raise
        state = memo.state(self.path)
        if state is None or state != before or (fd >= 0 and os.fstat(fd).st_ino != state[1]):
            state = None  # a write published while it opened: which file it read is not known
        return _Snapshot(con, state, fd)

"""Answers of reading commands, kept per state of the warehouse.

A benchdb warehouse does not change under a reader: every benchdb write publishes a new file (a
copy renamed over the old one, :mod:`benchdb.store.snapshot`). So the identity of the file --
device, inode, size, modification and change times, with its write-ahead log's for a file that another
program wrote in place -- names one state of its data. The answer of a deterministic read (the
rows of a report, the verdicts of a gate) over one state, under the same options and the same
benchdb code, is the same answer. ``benchdb report`` and ``benchdb check`` keep theirs in the
user's cache folder and answer from it while the warehouse, the options and the code are
unchanged: one ``stat`` instead of starting DuckDB and running the queries. What is
rendered from an answer (Markdown, HTML, JSON, the report's generation time) is made anew each time.
The same identity keeps which states passed a check of their own (:func:`passed`): a warehouse's
stored views and macros are compared with benchdb's once per state, not at every open.

Where: ``$BENCHDB_ANSWERS_DIR``, else ``$BENCHDB_CACHE/answers`` (``$BENCHDB_CACHE`` defaults to
``~/.cache/benchdb``, as for exported models); a folder of this user's alone (made 0700; one that another user owns
or may write is not used). ``BENCHDB_NO_CACHE=1`` turns it off. At most :data:`KEEP` answers are
kept (the oldest go first). Any trouble reading or writing the cache means the answer is computed,
never an error.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchdb import __version__

#: Answers kept; past this the oldest files are removed after a write.
KEEP = 256
_PACKAGE = Path(__file__).resolve().parents[1]  # benchdb/, not store/
_code: str | None = None


def folder() -> Path | None:
    """The cache folder, or None when caching is off."""
    if os.environ.get("BENCHDB_NO_CACHE", "").strip() not in ("", "0"):
        return None
    if os.environ.get("BENCHDB_ANSWERS_DIR"):
        return Path(os.environ["BENCHDB_ANSWERS_DIR"])
    from benchdb.paths import cache_root

    return cache_root() / "answers"


def code_digest() -> str:
    """benchdb's version and the name, size and modification time of every file of the package
    (its Python, SQL and templates): an edited checkout never answers from an older code's cache."""
    global _code
    if _code is None:
        h = hashlib.sha256(__version__.encode())
        for root, dirs, files in os.walk(_PACKAGE):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            for name in sorted(files):
                st = os.stat(os.path.join(root, name))
                h.update(
                    f"{os.path.relpath(os.path.join(root, name), _PACKAGE)}:{st.st_size}:{st.st_mtime_ns}\n".encode()
                )
        _code = h.hexdigest()
    return _code


def state(path: Path) -> tuple | None:
    """The identity of the warehouse's current state, or None when there is no such file."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    try:
        wal = os.stat(f"{path}.wal")
        wal_id: tuple | None = (wal.st_ino, wal.st_size, wal.st_mtime_ns, wal.st_ctime_ns)
    except OSError:
        wal_id = None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, wal_id)


def _usable(d: Path) -> bool:
    try:
        d.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = os.lstat(d)
    except OSError:
        return False
    return stat.S_ISDIR(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o022


def private_folder() -> Path | None:
    """The cache folder when it is usable: a real folder of this user's that nobody else may write."""
    d = folder()
    return d if d is not None and _usable(d) else None


def _dir_fd(d: Path) -> int:
    """The folder opened once (not followed if it is a link), checked again through its descriptor:
    a folder swapped after the check cannot redirect what is read or written below."""
    fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    st = os.fstat(fd)
    if st.st_uid != os.getuid() or st.st_mode & 0o022:
        os.close(fd)
        raise PermissionError(f"{d} is not a private folder of this user")
    return fd


def open_private(d: Path, name: str) -> int:
    """A descriptor of ``d/name`` opened for reading through the folder's descriptor, never
    following a link, and only when it is a regular file of this user's that nobody else may write."""
    dfd = _dir_fd(d)
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW, dir_fd=dfd)
    finally:
        os.close(dfd)
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o022:
        os.close(fd)
        raise PermissionError(f"{d / name} is not a private file of this user")
    return fd


def write_private(d: Path, name: str, data: bytes) -> bool:
    """Write ``d/name`` (mode 0600) through the folder's descriptor, atomically; False on any trouble."""
    tmp = f".{name}.{os.getpid()}"
    try:
        dfd = _dir_fd(d)
    except OSError:
        return False
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600, dir_fd=dfd)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, name, src_dir_fd=dfd, dst_dir_fd=dfd)
        return True
    except OSError:
        try:
            os.unlink(tmp, dir_fd=dfd)
        except OSError:
            pass
        return False
    finally:
        os.close(dfd)


def answer(path: Path, kind: str, options: dict[str, Any], compute: Callable[[], Any]) -> Any:
    """``compute()``'s answer for ``kind`` under ``options`` over the warehouse at ``path``, from
    the cache when this state of the warehouse was asked the same under the same code.

    The answer is a pickle: it is only ever read through :func:`open_private` (a regular file this
    user owns that nobody else may write, in a folder checked through its descriptor), so no other
    user can plant one."""
    d = private_folder()
    before = state(path) if d is not None else None
    if d is None or before is None:
        return compute()
    key = hashlib.sha256(
        json.dumps([kind, str(path), before, options, code_digest()], sort_keys=True, default=repr).encode()
    ).hexdigest()
    name = f"{kind}-{key}.pickle"
    try:
        with os.fdopen(open_private(d, name), "rb") as f:
            return pickle.load(f)
    except Exception:  # absent, partial, not private, from another Python: compute it
        pass
    value = compute()
    if state(path) == before:  # a write published meanwhile: keep nothing
        try:
            data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception:
            return value
        if write_private(d, name, data):
            _trim(d)
    return value


def _check_name(check: str, before: tuple) -> str:
    from benchdb.startup import duckdb

    # the state alone names the file (device, inode, change time): a symlinked path is the same file
    key = hashlib.sha256(json.dumps([check, before, code_digest(), duckdb.__version__]).encode()).hexdigest()
    return f"{check}-{key}.passed"


def passed(path: Path, check: str, before: tuple | None) -> bool:
    """Whether this user's cache says the warehouse state ``before`` passed ``check`` under this
    code and DuckDB, and ``path`` is still that state (so a connection opened since ``before`` was
    taken opened it). Any trouble reading the cache means no."""
    d = private_folder()
    if d is None or before is None or state(path) != before:
        return False
    try:
        with os.fdopen(open_private(d, _check_name(check, before)), "rb") as f:
            return f.read() == b"passed"
    except OSError:
        return False


def record_pass(path: Path, check: str, before: tuple | None) -> None:
    """Keep that the state ``before`` passed ``check``, when ``path`` is still that state."""
    d = private_folder()
    if d is not None and before is not None and state(path) == before:
        if write_private(d, _check_name(check, before), b"passed"):
            _trim(d)


def _trim(d: Path) -> None:
    entries = []
    for e in os.scandir(d):
        if e.name.endswith((".pickle", ".passed")) and not e.name.startswith("."):
            try:
                entries.append((e.stat().st_mtime_ns, e.path))
            except OSError:
                pass
    if len(entries) > KEEP:
        for _, p in sorted(entries)[: len(entries) - KEEP]:
            try:
                os.unlink(p)
            except OSError:
                pass

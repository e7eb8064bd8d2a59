"""Where benchdb keeps what it can make again (``$BENCHDB_CACHE``, else ``~/.cache/benchdb``), and the
two rules for every file benchdb names from data: a stored name (a run id) is a safe identifier, and
whatever a command writes lies inside the folder it was given."""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from benchdb.errors import BenchdbError

#: A name from data that may become part of a file name: no separator, no leading dot, no "..".
SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
SAFE_NAME_RULE = "letters, digits, '.', '_' and '-', starting with a letter or digit, at most 128 characters"


def cache_root() -> Path:
    return Path(os.environ.get("BENCHDB_CACHE") or Path.home() / ".cache" / "benchdb")


def is_safe_name(text: object) -> bool:
    return isinstance(text, str) and SAFE_NAME.fullmatch(text) is not None


def inside(root: str | os.PathLike, path: str | os.PathLike, *, local: bool = True) -> str:
    """``path`` if it lies inside ``root`` (or is it), else a BenchdbError: the last check before any
    file named from data is written. Local paths are compared resolved (symlinks followed); remote
    keys (``local=False``, fsspec paths with ``/``) normalised."""
    if local:
        base, full = Path(root).resolve(), Path(path).resolve()
        ok = full == base or base in full.parents
        found = str(full)
    else:
        top, found = posixpath.normpath(str(root)), posixpath.normpath(str(path))
        ok = found == top or found.startswith(top.rstrip("/") + "/")
    if not ok:
        raise BenchdbError(
            f"refusing to write {path}: it lies outside {root} (a name in the data would leave the output folder)"
        )
    return found


def fsync_folder(folder: str | os.PathLike) -> None:
    """Make a rename or a new name in ``folder`` durable."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def hidden(name: str) -> bool:
    """Whether a file or folder name is one no reader of a results folder takes (ingest skips it):
    a name starting with '.', as :func:`atomic_path`'s temp files do."""
    return name.startswith(".")


@contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temp path beside ``path`` (``.<name>.<pid>.tmp``: hidden, so no reader of the folder
    takes it for a result) for the caller to write; when the block ends normally the temp file is
    fsync'd, renamed over ``path`` (``os.replace``: readers see the old file or the new one, never
    half of one) and the folder fsync'd. When the block raises, the temp file is removed and
    ``path`` is left as it was. The folder must exist.

    ``with atomic_path(target) as tmp: pq.write_table(table, tmp)``
    """
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        yield tmp
        fd = os.open(tmp, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_folder(path.parent)


def write_atomic(path: str | os.PathLike, data: bytes | str) -> Path:
    """Write ``data`` (text as UTF-8) to ``path`` atomically and durably (:func:`atomic_path`)."""
    with atomic_path(path) as tmp:
        if isinstance(data, str):
            tmp.write_text(data, encoding="utf-8")
        else:
            tmp.write_bytes(data)
    return Path(path)

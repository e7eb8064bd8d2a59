"""A generation of samples stays on disk while any reader may still read it: the readers' own
locks on the catalog they opened are the leases.

Every reader of a warehouse holds a shared POSIX lock on the catalog file it opened for as long
as it is open: DuckDB takes one for each read-only connection (benchdb's commands, an analyst's
``duckdb.connect(path, read_only=True)``), and `benchdb dashboard` adds one of its own per snapshot
(:mod:`benchdb.store.latest`). The lock stays on that file when a writer renames a newer catalog
over it. So a writer, just before it replaces the published catalog, keeps a hard link to it
beside the warehouse, named after the generations it reads (``.<name>.read-<low>-<high>-<inode>``),
and compaction removes the generations it retired earlier only below the lowest generation of
any kept catalog still locked (or whose lock cannot be asked about): always a prefix, never a hole
that a reader of an unleased catalog would skip without a word
(:meth:`benchdb.store.parts_store.Store.compact`). Every write removes the links no reader holds
any more: nobody can open that catalog again, since it is gone from the warehouse's
path. A reader thus reads the generations of its snapshot, whole, until it closes, across any
number of compactions; the space they take is freed by the first compaction after the last of
their readers has closed.

Also:

- A generation is removed at the earliest by the compaction after the one that retired it (a
  reader that opened the catalog just as it was replaced takes its lock a moment later).
- Removal renames a generation's folder out of the readers' pattern before deleting its files, so
  no reader ever lists half of one (:meth:`benchdb.store.parts_store.Store.compact`).
- Where the lock cannot be asked about (only Linux's open-file-description locks are used: they see
  the locks of every process, this one included) or a hard link cannot be made, no link is kept and
  that grace of one compaction is all: a connection open across two compactions then gets DuckDB's
  "No files found" (or "Cannot open file") for ``samples`` and must reconnect.
- POSIX record locks belong to a process, which drops all of its locks on a file when it closes any
  descriptor of that file. A program that keeps its own DuckDB connection open and, in the same
  process, writes through benchdb's library (whose write session reads the current catalog) can
  lose its lease that way: that connection then has the grace of one compaction only. Writers in
  processes of their own (the command line) never touch a reader's lock.
"""

from __future__ import annotations

import os
import struct
import sys
from pathlib import Path

try:
    import fcntl
except ImportError:  # not POSIX
    fcntl = None  # type: ignore[assignment]

#: ``struct flock`` as Linux lays it out on 64-bit machines (type, whence, start, len, pid).
_FLOCK = "hhqqi4x"
_LINUX = sys.platform.startswith("linux") and fcntl is not None and hasattr(fcntl, "F_OFD_GETLK")
#: Descriptors of kept catalogs found locked, held open for the rest of the process: closing one
#: would drop this very process's locks on that file (a reader's lease) along with it.
_HELD_OPEN: dict[tuple[int, int], int] = {}


def _prefix(path: Path) -> str:
    return f".{path.name}.read-"


def keep(path: Path, low: int, high: int) -> None:
    """Before a writer renames a new catalog over ``path``: keep the outgoing one, which reads
    generations ``low`` .. ``high``, by a hard link (nothing when it reads none, or where no link
    can be made or no lock asked about)."""
    if not _LINUX or high < low:
        return
    try:
        ino = os.stat(path).st_ino
        os.link(path, path.with_name(f"{_prefix(path)}{low:010d}-{high:010d}-{ino}"))
    except FileExistsError:
        pass
    except OSError:  # no hard links on this file system, no room: the grace of one compaction
        pass


def read_ranges(path: Path) -> list[tuple[int, int]]:
    """The generations (low, high) of each replaced catalog of the warehouse at ``path`` that a
    reader still has open, or whose lock cannot be asked about (kept, to be safe); the kept
    catalogs nobody holds are removed."""
    if not _LINUX:
        return []
    ranges = []
    for link in path.parent.glob(f"{_prefix(path)}*"):
        fields = link.name[len(_prefix(path)) :].split("-")
        if len(fields) != 3 or not all(f.isdigit() for f in fields):
            continue
        try:
            locked = held(link)
        except FileNotFoundError:  # another writer found nobody holding it and removed it
            continue
        except OSError:  # its lock cannot be asked about: a reader may hold it
            locked = True
        if locked:
            ranges.append((int(fields[0]), int(fields[1])))
        else:
            try:
                link.unlink()
            except OSError:  # removed meanwhile, or not ours to remove: it protects nothing
                pass
    return ranges


def held(file: Path) -> bool:
    """Whether any process (this one too) holds a lock on ``file``."""
    st = os.stat(file)
    key = (st.st_dev, st.st_ino)
    fd = _HELD_OPEN.get(key)
    mine = fd is None
    if fd is None:
        fd = os.open(file, os.O_RDONLY)
    try:
        query = struct.pack(_FLOCK, fcntl.F_WRLCK, os.SEEK_SET, 0, 0, 0)
        locked = struct.unpack(_FLOCK, fcntl.fcntl(fd, fcntl.F_OFD_GETLK, query))[0] != fcntl.F_UNLCK
    except BaseException:
        if mine:
            os.close(fd)
        raise
    if locked:
        _HELD_OPEN[key] = fd
    else:  # nobody holds it, this process neither: closing drops no lock
        _HELD_OPEN.pop(key, None)
        os.close(fd)
    return locked


def hold(fd: int) -> bool:
    """Take a shared lock on the open file ``fd`` that lasts until ``fd`` is closed, whatever else
    this process opens and closes (an open-file-description lock); False where there are none."""
    if not _LINUX:
        return False
    fcntl.fcntl(fd, fcntl.F_OFD_SETLK, struct.pack(_FLOCK, fcntl.F_RDLCK, os.SEEK_SET, 0, 0, 0))
    return True

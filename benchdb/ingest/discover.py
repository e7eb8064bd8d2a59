"""Find contract files under folders, files or fsspec URLs, and hash them."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from pathlib import Path

from benchdb.errors import BenchdbError
from benchdb.ingest.mirror import mirror
from benchdb.paths import hidden

_HASH_CHUNK = 1 << 20


def discover(paths: Iterable[str | os.PathLike]) -> list[Path]:
    """Contract files under the given files/folders (or fsspec URLs), recursively, sorted. Hidden
    files (the writer's in-flight temp files start with '.') are never picked up."""
    found: set[Path] = set()
    for raw in paths:
        if "://" in str(raw):
            raw = mirror(str(raw))
        p = Path(raw)
        if not p.exists():
            raise BenchdbError(f"path {raw} does not exist; give a results folder or .parquet file")
        if p.is_file():
            _check_measurement_file(p, raw)
            found.add(p.resolve())
            continue
        for root, dirs, files in os.walk(p):
            dirs[:] = [d for d in dirs if not hidden(d)]
            real_root = Path(os.path.realpath(root))  # once per folder, not once per file
            for name in files:
                if name.endswith(".parquet") and not hidden(name):
                    full = os.path.join(root, name)
                    found.add(Path(full).resolve() if os.path.islink(full) else real_root / name)
    return sorted(found)


def _check_measurement_file(path: Path, given: str | os.PathLike) -> None:
    """A file named on the command line is refused before any warehouse is opened when it cannot be a
    measurement file: not Parquet (no PAR1 at both ends), or Parquet without the contract's key-value
    metadata. A folder's files are judged by the load instead, each rejected with why, as the others load."""
    import pyarrow.parquet as pq

    from benchdb.schema.contract import METADATA_KEY

    with open(path, "rb") as fh:
        head = fh.read(4)
        fh.seek(max(0, path.stat().st_size - 4))
        tail = fh.read(4)
    if head != b"PAR1" or tail != b"PAR1":
        raise BenchdbError(
            f"{given} is not a Parquet file; give a results folder or the .parquet files `benchdb run` wrote"
        )
    try:
        kv = pq.read_metadata(path).metadata or {}
    except Exception:  # a torn footer: the load rejects it with the reader's words
        return
    if METADATA_KEY not in kv:
        raise BenchdbError(
            f"{given} is a Parquet file without benchdb's contract metadata ({METADATA_KEY.decode()}): "
            "give the .parquet files `benchdb run` wrote, or convert other results with `benchdb import`"
        )


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(_HASH_CHUNK):
            h.update(chunk)
    return h.hexdigest()

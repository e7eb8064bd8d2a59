"""The warehouse's storage: the DuckDB file (open, lock, sandbox), its migrations, the catalog of
shipped views, the raw samples as Parquet parts beside it, write sessions on a copy, and the
answers kept per state of the file. This module stays light: it imports no engine."""

from __future__ import annotations

import os
from pathlib import Path

DEFAULT_DB = "benchdb.duckdb"


def resolve_db(db: str | os.PathLike | None) -> Path:
    """``--db`` if given, else ``$BENCHDB_DB``, else ``./benchdb.duckdb``."""
    return Path(db or os.environ.get("BENCHDB_DB") or DEFAULT_DB)

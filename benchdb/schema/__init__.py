"""The contract, identity and warehouse schema. This module stays light: it imports no engine."""

from __future__ import annotations

import os
from pathlib import Path

DEFAULT_DB = "benchdb.duckdb"


def resolve_db(db: str | os.PathLike | None) -> Path:
    """``--db`` if given, else ``$BENCHDB_DB``, else ``./benchdb.duckdb``."""
    return Path(db or os.environ.get("BENCHDB_DB") or DEFAULT_DB)

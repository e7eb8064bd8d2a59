"""Where benchdb keeps what it can make again: ``$BENCHDB_CACHE``, else ``~/.cache/benchdb``."""

from __future__ import annotations

import os
from pathlib import Path


def cache_root() -> Path:
    return Path(os.environ.get("BENCHDB_CACHE") or Path.home() / ".cache" / "benchdb")

"""SQL as files: views, macros and the queries the library runs, read from this package's folder.

Python passes values as bound parameters; nothing here formats values into SQL text.
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported by its callers; this module stays import-light
    import duckdb

#: The folder of the .sql files (a plain package folder: no importlib.resources at start-up).
FOLDER = Path(__file__).parent


@cache
def load(name: str) -> str:
    """Text of ``benchdb/sql/<name>`` (e.g. ``queries/metric_stats.sql``)."""
    return (FOLDER / name).read_text(encoding="utf-8")


def literal(path: str | os.PathLike) -> str:
    """``path`` as DuckDB's file readers take it literally: every name DuckDB is given is a glob
    pattern, so ``*``, ``?`` and ``[`` become one-character classes (``evil*.parquet`` would also
    read every ``evil....parquet`` beside it)."""
    return "".join(f"[{ch}]" if ch in "*?[" else ch for ch in str(path))


def string(text: str) -> str:
    """A SQL string literal, for where DuckDB takes no bound parameter (a view's definition, COPY's
    target, ATTACH's path before DuckDB 2.0)."""
    return "'" + text.replace("'", "''") + "'"


def ident(name: str) -> str:
    """A quoted SQL identifier (a column or table name read from a catalog, never a user's value)."""
    return '"' + name.replace('"', '""') + '"'


def literals(paths) -> list[str]:
    """:func:`literal` of each path: the ``$files`` parameter of a query over discovered files."""
    return [literal(p) for p in paths]


def rows(cursor) -> list[dict[str, Any]]:
    """The rows a query left to fetch on ``cursor`` (a DuckDB connection or cursor after
    ``execute``, or the Spark stand-in), each a dict of column name to value in column order."""
    cols = [d[0] for d in cursor.description]
    return [dict(zip(cols, row, strict=True)) for row in cursor.fetchall()]


def view_files() -> list[str]:
    """View definitions in apply order (file names sort in dependency order)."""
    folder = FOLDER / "views"
    return sorted(f"views/{p.name}" for p in folder.iterdir() if p.name.endswith(".sql"))


def views_digest() -> str:
    """Hash of the macros and views this code ships; stored in the database to detect changes."""
    import hashlib

    h = hashlib.sha256(load("macros.sql").encode())
    for name in view_files():
        h.update(name.encode())
        h.update(load(name).encode())
    return h.hexdigest()


def metric_stats_query() -> str:
    """``queries/metric_stats.sql`` over a relation ``stage_samples`` (columns scenario_id, metric,
    unit, value): statistics per (scenario_id, metric)."""
    return load("queries/stat_groups.sql") + load("queries/metric_stats.sql")


def install_macros(con: duckdb.DuckDBPyConnection) -> None:
    """Create (or replace) benchdb's SQL macros on a connection (persistent in a database file)."""
    con.execute(load("macros.sql"))


def apply_views(con: duckdb.DuckDBPyConnection) -> None:
    """Create or replace every macro and view; the caller owns the transaction."""
    install_macros(con)
    for name in view_files():
        con.execute(load(name))

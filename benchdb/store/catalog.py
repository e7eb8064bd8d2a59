"""Stored SQL is benchdb's SQL: the views, macros and tables a warehouse holds are checked against
the definitions this benchdb ships before any answer is read from it.

A warehouse is a file anyone can edit with DuckDB. A ``results_latest`` view redefined to read
another file (or to drop rows) would otherwise speak through ``benchdb report`` and ``check``. Every
reader opens the file sandboxed (no file but the warehouse, :func:`database.connect`), and before
reading it compares the catalog with what this code builds: each shipped view's and macro's
definition as DuckDB stores it, and each shipped table being a table. Objects benchdb does not
ship (an analyst's own views) are not benchdb's business and are left alone.

The expected catalog is built once per code version by running the migrations and views on an
in-memory database (~0.3 s), then kept in the user's private cache (:func:`benchdb.store.memo.private_folder`)
as JSON; a read costs three catalog queries.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING

from benchdb import sql

if TYPE_CHECKING:
    import duckdb


def current(con: duckdb.DuckDBPyConnection) -> dict:
    """The views, macros and tables of the open database's main schema."""
    views = dict(con.execute(sql.load("queries/catalog_views.sql")).fetchall())
    macros = dict(con.execute(sql.load("queries/catalog_macros.sql")).fetchall())
    tables = sorted(t for (t,) in con.execute(sql.load("queries/catalog_tables.sql")).fetchall())
    return {"views": views, "macros": macros, "tables": tables}


_LOW, _HIGH = 1357913579, 2468024680  # stand-ins no real generation numbers reach


def parts_template(con: duckdb.DuckDBPyConnection) -> str:
    """The ``samples`` view over parts as this DuckDB stores its definition, with ``{low}``,
    ``{high}`` and ``{low_gen}`` (the lowest generation's folder) where a warehouse's own values
    go. DuckDB binds (and so reads) the files of a view it creates: this makes one part in a
    scratch folder."""
    import tempfile

    from benchdb.store import parts, parts_store

    with tempfile.TemporaryDirectory(prefix="benchdb-catalog-") as scratch:
        folder = Path(scratch) / "w.duckdb.samples"
        store = parts_store.Store(folder.with_name("w.duckdb"))
        store.low = store.gen = _LOW
        parts.point(con, folder)
        store.write(con, parts.NULL_ROW)
        con.execute(parts.view_sql(_LOW, _HIGH).replace("VIEW samples", "VIEW benchdb_samples_template"))
        stored = con.execute("SELECT sql FROM duckdb_views() WHERE view_name = 'benchdb_samples_template'").fetchall()[
            0
        ][0]
        con.execute("DROP VIEW benchdb_samples_template")
    return (
        stored.replace("benchdb_samples_template", "samples")
        .replace(parts.gen_name(_LOW), "{low_gen}")
        .replace(str(_LOW), "{low}")
        .replace(str(_HIGH), "{high}")
    )


def _samples_view(want: dict, con: duckdb.DuckDBPyConnection) -> str:
    """The definition benchdb gives the ``samples`` view of this warehouse (its published parts)."""
    from benchdb.store import parts

    low, high, _ = parts.published(con)
    if high < low:
        return want["views"]["samples"]
    return (
        want["samples_parts"]
        .replace("{low_gen}", parts.gen_name(low))
        .replace("{low}", str(low))
        .replace("{high}", str(high))
    )


def views_digest() -> str:
    """Hash of the macros and views this code ships and of how the ``samples`` view finds its parts;
    stored in the database (``views_sha256``) to tell another version's views from edited ones."""
    from benchdb.store import parts

    return hashlib.sha256(f"{sql.views_digest()}:{parts.VIEW_FORM}".encode()).hexdigest()


def differences(con: duckdb.DuckDBPyConnection, want: dict) -> str | None:
    """The first object of ``want`` (the shipped catalog) whose stored definition differs, described;
    None when all match."""
    have = current(con)
    for name in sorted(want["tables"]):
        if name not in have["tables"]:
            what = "is a view" if name in have["views"] else "is missing"
            return f"table {name} {what}"
    for kind in ("views", "macros"):
        for name, definition in sorted(want[kind].items()):
            got = have[kind].get(name)
            if kind == "views" and name == "samples":  # names this warehouse's own folder
                definition = _samples_view(want, con)
            if got is None:
                return f"{kind[:-1]} {name} is missing"
            if got != definition:
                return f"{kind[:-1]} {name} differs from the definition this benchdb ships"
    return None

"""DuckDB's engine, without the import cost of its Python layer.

``import duckdb`` takes ~100 ms on a small machine (measured: 123-149 ms for ``python -c "import
duckdb"`` against 43-53 ms for the engine alone), most of it the package's Python layer: the
relation API (``con.sql``), the set-up that lets DuckDB scan Python Arrow objects, and
``importlib.metadata`` for its version string. The engine itself is the C++ extension ``_duckdb``,
which the package re-exports unchanged (``duckdb.connect is _duckdb.connect``). Commands that run
SQL and fetch rows -- ``report``, ``query``, ``check`` -- need nothing else, so they take the
engine alone from here.

Code that scans a Python Arrow table (``con.register``) or uses the relation API imports the
``duckdb`` package itself first (:func:`full`); importing it finishes setting up the very same
module, so connections opened before work too. Writable connections do it always
(:func:`benchdb.schema.database.connect`), since ingest and migrations register Arrow tables.
"""

from __future__ import annotations

try:
    import _duckdb as duckdb
except ImportError:  # a duckdb build without the separate extension module: the package it is
    import duckdb  # type: ignore[no-redef]  # the same engine, re-exported by the package

__all__ = ["duckdb", "full"]


def full():
    """The whole ``duckdb`` package (Arrow scans and the relation API set up)."""
    import duckdb as package

    return package

"""One transaction: BEGIN, then COMMIT, or ROLLBACK and the error that stopped it.

DuckDB ends a transaction itself when Ctrl-C interrupts a statement inside it; a ROLLBACK after that
fails with "no transaction is active", and raised, it would replace the interrupt with an internal
error (seen on `benchdb query`, Ctrl-C while the expected catalog was being built)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # importing this module starts no engine: its callers' reports stay light
    import duckdb


@contextmanager
def transaction(con: duckdb.DuckDBPyConnection) -> Iterator[duckdb.DuckDBPyConnection]:
    con.execute("BEGIN TRANSACTION")
    try:
        yield con
        con.execute("COMMIT")
    except BaseException:
        rollback(con)
        raise


def rollback(con: duckdb.DuckDBPyConnection) -> None:
    """ROLLBACK what is still open; nothing where DuckDB ended the transaction already."""
    from benchdb.startup import duckdb

    try:
        con.execute("ROLLBACK")
    except duckdb.TransactionException as exc:
        if "no transaction is active" not in str(exc):
            raise

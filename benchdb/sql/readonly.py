"""Refuse statements that would write, before they reach the (read-only) connection."""

from __future__ import annotations

import sqlglot
from sqlglot import exp

from benchdb.errors import BenchdbError

_READ_ONLY = tuple(getattr(exp, name) for name in (
    "Select", "SetOperation", "Describe", "Show", "Values", "Subquery", "Summarize", "Pragma")
    if hasattr(exp, name))


def check_read_only(text: str) -> None:
    """Raise a clear error for any statement that is not a query.

    Text sqlglot cannot parse is left to DuckDB, whose read-only connection still refuses writes.
    """
    try:
        statements = sqlglot.parse(text, read="duckdb")
    except sqlglot.errors.SqlglotError:
        return
    statements = [s for s in statements if s is not None]
    if not statements:
        raise BenchdbError("the query is empty; give a SQL statement such as \"SELECT * FROM results_latest\"")
    for stmt in statements:
        if not isinstance(stmt, _READ_ONLY):
            kind = stmt.key.upper()
            raise BenchdbError(f"benchdb query is read-only: {kind} statements are refused; "
                               "use SELECT (ingest and db upgrade are the only writers)")

"""What `benchdb query` checks before the text reaches DuckDB.

The guard itself is the connection: :meth:`benchdb.warehouse.Warehouse.query` opens the warehouse
read-only with ``enable_external_access = false``, so DuckDB refuses every write (INSERT, DELETE,
CREATE, ...) and every statement that would touch another file (EXPORT, COPY ... TO, ATTACH,
INSTALL, read_csv of a path) with its own error. There is no allow-list of statement kinds here:
any query DuckDB can run read-only (PIVOT, SUMMARIZE, DESCRIBE, ...) is allowed. Only what DuckDB
cannot say nicely is checked, and the statements that write files: the connection may read the
warehouse's samples folder (:mod:`benchdb.schema.parts`), and DuckDB would let ``COPY ... TO``
write there too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from benchdb.errors import BenchdbError

if TYPE_CHECKING:
    import duckdb


def check_read_only(con: duckdb.DuckDBPyConnection, text: str) -> None:
    """Raise a clear error for a query with no statement in it (blank, ``;`` or only comments).
    ``con``: the connection the query will run on (parsing with the module-level function would
    first open DuckDB's default in-memory database: 20 ms of a command's start-up).

    Text DuckDB cannot parse is left to the execution, which reports the parser error.
    """
    from benchdb.startup import duckdb

    try:
        statements = con.extract_statements(text)
    except duckdb.Error:
        return
    if not statements:
        raise BenchdbError("the query is empty; give a SQL statement such as \"SELECT * FROM results_latest\"")
    writers = {duckdb.StatementType.COPY, duckdb.StatementType.EXPORT, duckdb.StatementType.ATTACH,
               duckdb.StatementType.COPY_DATABASE}
    for statement in statements:
        if statement.type in writers:
            raise BenchdbError(f"benchdb query is read-only and reads only the warehouse: {statement.type.name} "
                               "writes files; run it on your own DuckDB connection")

"""benchdb.store.query_guard: the check `benchdb query` runs on its text before DuckDB runs any of
it. Each refusal names what was refused; reads of every kind pass. The guard is called directly on
a DuckDB connection (what the command line and a warehouse do with it, and that no file changes,
is tests/guarantees/test_readonly_sandbox.py)."""

from __future__ import annotations

import duckdb
import pytest

from benchdb.errors import BenchdbError
from benchdb.store.query_guard import READ_ONLY, check_read_only

pytestmark = pytest.mark.core


@pytest.fixture(scope="module")
def con():
    con = duckdb.connect()
    yield con
    con.close()


def test_the_refusal_names_what_was_refused(con, tmp_path):
    def refusal(text: str) -> str:
        with pytest.raises(BenchdbError) as err:
            check_read_only(con, text)
        return str(err.value).removeprefix(f"{READ_ONLY}: ")

    assert refusal(f"PREPARE p AS COPY results TO '{tmp_path}/w.csv'; EXECUTE p").startswith(
        '"COPY" is not a read statement; it runs SELECT (also WITH, PIVOT, SUMMARIZE, DESCRIBE, SHOW), EXPLAIN, '
    )
    assert refusal("INSTALL httpfs").startswith('"INSTALL" is not a read statement')  # DuckDB's kind: LOAD
    assert refusal("RESET threads").startswith('"RESET" is not a read statement')  # DuckDB's kind: SET
    assert refusal("SELECT * FROM checkpoint()") == (
        "table function checkpoint() is refused: it is not one that only reads (such as read_parquet(), range(), "
        "duckdb_tables())"
    )
    assert refusal("EXECUTE p").startswith("EXECUTE p names no statement PREPAREd before it in the same query")
    assert refusal("SELECT 1 AS copy") == (
        'COPY inside a statement (in a WITH clause) is refused; quote "copy" where it names a column'
    )


@pytest.mark.parametrize(
    "text",
    [
        "SELECT count(*) FROM results",
        "WITH s AS (SELECT 1 AS a) SELECT a FROM s",
        "FROM results SELECT count(*)",
        "SUMMARIZE SELECT 1 AS a",
        "EXPLAIN ANALYZE SELECT 1",
        "CALL pragma_table_info('runs')",
        "SELECT * FROM range(3)",
        "PREPARE p AS SELECT $1 AS x; EXECUTE p(2)",
        "SELECT 'COPY x TO y' AS \"copy\" -- DELETE",
        "SELECT 1; SELECT 2",
    ],
)
def test_reads_pass(con, text):
    check_read_only(con, text)  # no error: the text may run


def test_text_that_holds_no_statement_or_does_not_parse_is_refused(con):
    for blank in ("", " ; ", "-- only a comment"):
        with pytest.raises(BenchdbError, match=r"^the query is empty; give a SQL statement"):
            check_read_only(con, blank)
    with pytest.raises(BenchdbError, match=r'^query failed: Parser Error: syntax error at or near "SELEC"'):
        check_read_only(con, "SELECT 1; SELEC 1")

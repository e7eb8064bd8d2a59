"""A transaction DuckDB ended itself (an interrupted statement) ends with the interrupt, not a
failed ROLLBACK (benchdb/store/transaction.py)."""

from __future__ import annotations

import threading

import pytest

from benchdb.startup import duckdb
from benchdb.store.transaction import rollback, transaction

LONG = "SELECT count(*) FROM range(1000000000000) t(x) WHERE x % 7 = 3"


def test_an_interrupted_transaction_raises_the_interrupt_and_keeps_nothing():
    con = duckdb.connect()
    con.execute("CREATE TABLE t (x INTEGER)")
    stopper = threading.Timer(0.3, con.interrupt)
    stopper.start()
    with pytest.raises(duckdb.InterruptException):
        with transaction(con):
            con.execute("INSERT INTO t VALUES (1)")
            con.execute(LONG).fetchall()
    stopper.join()
    assert con.execute("SELECT count(*) FROM t").fetchone() == (0,)
    with pytest.raises(duckdb.TransactionException, match="no transaction is active"):
        con.execute("ROLLBACK")  # what the bare statement did in its place


def test_a_transaction_commits_and_rollback_of_an_open_one_undoes_it():
    con = duckdb.connect()
    con.execute("CREATE TABLE t (x INTEGER)")
    with transaction(con):
        con.execute("INSERT INTO t VALUES (1)")
    con.execute("BEGIN TRANSACTION")
    con.execute("INSERT INTO t VALUES (2)")
    rollback(con)
    rollback(con)  # nothing open: nothing to do
    assert con.execute("SELECT x FROM t").fetchall() == [(1,)]

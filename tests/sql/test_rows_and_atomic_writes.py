"""The shared helper sql.rows: a cursor's rows as dicts. (paths.atomic_path / write_atomic: tests/test_paths.py.)"""

from __future__ import annotations

import duckdb

from benchdb import sql


def test_rows_keys_in_column_order_and_values():
    con = duckdb.connect()
    cur = con.execute("SELECT 2 AS b, 'x' AS a, NULL AS c UNION ALL SELECT 3, 'y', 1.5 ORDER BY b")
    got = sql.rows(cur)
    assert got == [{"b": 2, "a": "x", "c": None}, {"b": 3, "a": "y", "c": 1.5}]
    assert [list(r) for r in got] == [["b", "a", "c"]] * 2


def test_rows_of_empty_result_and_bound_parameters():
    con = duckdb.connect()
    assert sql.rows(con.execute("SELECT 1 AS one WHERE false")) == []
    assert sql.rows(con.execute("SELECT $v AS v", {"v": 7})) == [{"v": 7}]


def test_rows_takes_what_is_left_to_fetch():
    con = duckdb.connect()
    cur = con.execute("SELECT range AS i FROM range(3)")
    assert cur.fetchone() == (0,)
    assert sql.rows(cur) == [{"i": 1}, {"i": 2}]


def test_rows_matches_the_idiom_it_replaces():
    con = duckdb.connect()
    query = "SELECT range AS n, range * 2.5 AS half, 'r' || range AS name FROM range(5)"
    cur = con.execute(query)
    cols = [d[0] for d in cur.description]
    expected = [dict(zip(cols, r, strict=True)) for r in cur.fetchall()]
    assert sql.rows(con.execute(query)) == expected

"""benchdb.spark.macros: benchdb's SQL macros inlined for Spark SQL, which has none: each call replaced
by the macro's body with its arguments substituted, table macros as subqueries, and a call that cannot
be inlined refused by name."""

from __future__ import annotations

import re

import pytest
from conftest import need_module

sqlglot = need_module("sqlglot", "benchdb[test]")

from benchdb.spark import translate  # noqa: E402
from benchdb.spark.macros import Macro, inline_macros  # noqa: E402
from benchdb.spark.rewrite import UntranslatableSQL  # noqa: E402


def q(text: str) -> str:
    """The translation on one line (pretty-printing's line breaks and indents removed)."""
    out = re.sub(r"\s+", " ", translate.translate_query(text, "test"))
    return re.sub(r"\s+\)", ")", re.sub(r"\(\s+", "(", out))


def _macro(name: str, params: tuple[str, ...], body: str, table: bool = False) -> Macro:
    return Macro(name, params, sqlglot.parse_one(body, read="duckdb"), table)


def _inline(text: str, *defs: Macro) -> str:
    tree = inline_macros(sqlglot.parse_one(text, read="duckdb"), {m.name: m for m in defs}, "test")
    return tree.sql("duckdb")


def test_benchdb_macros_are_inlined():
    out = q("SELECT bdb_timing_metric(metric) FROM results")
    assert "BDB_" not in out.upper() and "'latency_s'" in out


def test_arguments_are_substituted_and_calls_nest():
    twice = _macro("twice", ("x",), "x * 2")
    inc = _macro("inc", ("y",), "twice(y) + 1")
    assert _inline("SELECT twice(a + 1), twice(b) FROM t", twice) == "SELECT (a + 1) * 2, b * 2 FROM t"
    assert _inline("SELECT inc(c) FROM t", twice, inc) == "SELECT c * 2 + 1 FROM t"
    # a column of another table that happens to share a parameter's name is left alone
    assert _inline("SELECT twice(t.x) FROM t", _macro("twice", ("x",), "x * 2 + u.x")) == (
        "SELECT t.x * 2 + u.x FROM t"
    )


def test_a_table_macro_becomes_a_subquery():
    recent = _macro("recent", ("n",), "SELECT * FROM runs ORDER BY started_at DESC LIMIT n", table=True)
    assert _inline("SELECT count(*) FROM recent(5)", recent) == (
        "SELECT COUNT(*) FROM (SELECT * FROM runs ORDER BY started_at DESC LIMIT 5) AS recent"
    )
    with pytest.raises(UntranslatableSQL, match=r"^test: table macro recent used outside FROM"):
        _inline("SELECT recent(5)", recent)


def test_calls_that_cannot_be_inlined_are_refused():
    with pytest.raises(UntranslatableSQL, match=r"^test: macro twice takes 1 arguments, got 2"):
        _inline("SELECT twice(a, b) FROM t", _macro("twice", ("x",), "x * 2"))
    with pytest.raises(UntranslatableSQL, match=r"^test: macros nest more than 20 deep \(a recursive macro\?\)"):
        _inline("SELECT loop(a) FROM t", _macro("loop", ("x",), "loop(x) + 1"))

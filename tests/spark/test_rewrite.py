"""benchdb.spark.rewrite: the fixes on top of sqlglot's DuckDB -> Spark translation, each one
something sqlglot alone gets wrong for benchdb's SQL, and the constructs with no faithful Spark form,
refused by name (no JVM here: what the translation says; tests/spark/test_session.py runs it)."""

from __future__ import annotations

import re

import pytest
from conftest import need_module

need_module("sqlglot", "benchdb[test]")

from benchdb.spark import translate  # noqa: E402
from benchdb.spark.rewrite import UntranslatableSQL, rewrite  # noqa: E402


def q(text: str) -> str:
    """The translation on one line (pretty-printing's line breaks and indents removed)."""
    out = re.sub(r"\s+", " ", translate.translate_query(text, "test"))
    return re.sub(r"\s+\)", ")", re.sub(r"\(\s+", "(", out))


def test_rewrites_sqlglot_gets_wrong():
    # QUALIFY is kept (no subquery with duplicate columns)
    out = q("SELECT a FROM t QUALIFY row_number() OVER (PARTITION BY a ORDER BY b) = 1")
    assert "QUALIFY" in out and out.count("SELECT") == 1
    # sorted list aggregates keep their order
    assert "ELSE ARRAY_SORT(COLLECT_LIST(x)) END" in q("SELECT list(x ORDER BY x) FROM t")
    assert "ARRAY_SORT(COLLECT_LIST(v))" in q("SELECT list_sort(list(v)) FROM t")
    assert "REVERSE(ARRAY_SORT(COLLECT_LIST(x)))" in q("SELECT list(x ORDER BY x DESC) FROM t")
    other = q("SELECT list(v ORDER BY i) FROM t")
    assert "NAMED_STRUCT('k0', i, 'v', v)" in other and "TRANSFORM(" in other
    # computed 1-based indexes stay 1-based (element_at), literal ones too; len of a list is size
    out = q(
        "SELECT s[CAST(floor(0.5 * (len(s) - 1)) AS BIGINT) + 1], s[1] FROM (SELECT list_sort(list(v)) AS s FROM t)"
    )
    assert "TRY_ELEMENT_AT(s, CAST(CAST(FLOOR(0.5 * (SIZE(s) - 1)) AS BIGINT) + 1 AS INT))" in out
    assert "TRY_ELEMENT_AT(s, 1)" in out and "LENGTH(" not in out
    assert "LENGTH(name)" in q("SELECT len(name) FROM t")  # a string stays a string
    # quantile_cont -> percentile
    assert "PERCENTILE(x, 0.9)" in q("SELECT quantile_cont(x, 0.9) FROM t")
    # a window aggregate's FILTER becomes a CASE
    out = q("SELECT max(x) FILTER (WHERE ok) OVER (PARTITION BY g) FROM t")
    assert "FILTER" not in out and "MAX(CASE WHEN ok THEN x END) OVER" in out
    # parameters are Spark named markers; a list parameter is typed so NULL binds
    out = q("SELECT * FROM t WHERE $models IS NULL OR list_contains($models, m)")
    assert ":models IS NULL" in out and "ARRAY_CONTAINS(CAST(:models AS ARRAY<STRING>), m)" in out


@pytest.mark.parametrize(
    "text, construct",
    [
        ("SELECT list(x ORDER BY y, z DESC) FROM t", "mixed directions"),
        ("SELECT s[2:3] FROM t", "list slice"),
        ("SELECT list(DISTINCT x) FROM t", "list(DISTINCT x) without ORDER BY"),
        (
            "SELECT (SELECT p.v FROM p WHERE p.h = o.h ORDER BY abs(p.t - o.t) LIMIT 1) FROM o AS o",
            "correlated scalar subquery with ORDER BY/LIMIT",
        ),
    ],
)
def test_untranslatable_constructs_are_named(text, construct):
    with pytest.raises(UntranslatableSQL, match="test") as err:
        q(text)
    assert construct in str(err.value)


def test_rewrite_of_a_parsed_tree():
    """rewrite() itself, on a tree as sqlglot reads DuckDB: an empty group's list is NULL in both
    engines, and a refusal says where and what to do."""
    import sqlglot

    tree = rewrite(sqlglot.parse_one("SELECT list(x ORDER BY x) AS xs FROM t", read="duckdb"), "here")
    out = tree.sql(dialect=translate.dialect())
    assert out == "SELECT CASE WHEN COUNT(*) = 0 THEN NULL ELSE ARRAY_SORT(COLLECT_LIST(x)) END AS xs FROM t"
    with pytest.raises(UntranslatableSQL) as err:
        rewrite(sqlglot.parse_one("SELECT s[2:3] FROM t", read="duckdb"), "here")
    assert str(err.value).startswith("here: the list slice s[2:3] ")
    assert str(err.value).endswith("has no faithful Spark SQL form; rewrite it in benchdb/sql so both engines agree")

"""benchdb's SQL translated to Spark (no JVM here: what the translation says).

The Spark run of these translations is tests/spark/test_session.py; each rewrite sqlglot alone gets
wrong, and the errors for what cannot be translated, are tests/spark/test_rewrite.py, the macros
inlined tests/spark/test_macros.py, `benchdb export --partitioned` tests/spark/test_partitioned_export.py;
this file checks that every view and report query translates, and `benchdb sql --dialect spark`.
"""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner
from conftest import need_module

need_module("sqlglot", "benchdb[test]")


from benchdb.cli import main as cli  # noqa: E402
from benchdb.spark import translate  # noqa: E402


def q(text: str) -> str:
    """The translation on one line (pretty-printing's line breaks and indents removed)."""
    out = re.sub(r"\s+", " ", translate.translate_query(text, "test"))
    return re.sub(r"\s+\)", ")", re.sub(r"\(\s+", "(", out))


def test_statements_other_than_views_queries_and_macros_are_not_translated():
    with pytest.raises(translate.UntranslatableSQL, match="test") as err:
        q("CREATE TABLE x (a INT)")
    assert "CREATE TABLE" in str(err.value)


def test_every_view_and_report_query_translates_from_the_same_files():
    skipped: list = []
    views = translate.views(skipped)
    names = {v.name for v in views}
    assert {"results_latest", "compat_matrix", "optimal_hardware", "trends", "verification"} <= names
    assert skipped == []  # roofline included (joins + row_number, no correlated LIMIT)
    assert len(translate.reports()) == len(translate.report_files()) >= 14


def test_cli_sql_dialect_spark():
    r = CliRunner().invoke(cli, ["sql", "--dialect", "spark"])
    assert "CREATE OR REPLACE TEMPORARY VIEW results_latest AS" in r.stdout
    assert "-- reports/optimal_hardware.sql" in r.stdout and "CREATE MACRO" not in r.stdout.upper()
    assert "CREATE OR REPLACE TEMPORARY VIEW roofline AS" in r.stdout
    assert r.exit_code == 0, r.stderr

"""A warehouse's stored SQL compared with what this benchdb ships (benchdb.store.catalog): a warehouse
benchdb wrote matches; a redefined view or macro, a missing view, or a table replaced by a view is named;
an analyst's own objects are left alone. Real DuckDB files; the shipped catalog as migrate builds it."""

from __future__ import annotations

import duckdb
import pytest
from support.contract_files import ingested_warehouse

from benchdb.store import catalog, migrate

pytestmark = pytest.mark.core


def _differences(db, *statements: str) -> str | None:
    con = duckdb.connect(str(db))
    try:
        for s in statements:
            con.execute(s)
        return catalog.differences(con, migrate.expected())
    finally:
        con.close()


def test_a_warehouse_benchdb_wrote_matches_and_an_analysts_own_objects_are_left_alone(tmp_path):
    db = ingested_warehouse(tmp_path)
    con = duckdb.connect(str(db), read_only=True)
    try:
        have = catalog.current(con)
    finally:
        con.close()
    assert {"results", "runs", "schema_version"} <= set(have["tables"])
    assert {"results_latest", "samples"} <= set(have["views"]) and "bdb_pct_min_n" in have["macros"]
    assert _differences(db) is None
    assert _differences(db, "CREATE VIEW my_view AS SELECT 1 AS x", "CREATE TABLE my_notes (n VARCHAR)") is None


def test_each_changed_object_is_named(tmp_path):
    db = ingested_warehouse(tmp_path)
    assert _differences(db, "CREATE OR REPLACE VIEW results_latest AS SELECT * FROM results") == (
        "view results_latest differs from the definition this benchdb ships"
    )
    db = ingested_warehouse(tmp_path / "2")
    assert _differences(db, "DROP VIEW trends") == "view trends is missing"
    db = ingested_warehouse(tmp_path / "3")
    assert _differences(db, "CREATE OR REPLACE MACRO bdb_pct_min_n(q) AS 1") == (
        "macro bdb_pct_min_n differs from the definition this benchdb ships"
    )
    db = ingested_warehouse(tmp_path / "4")
    assert _differences(db, "DROP TABLE architectures", "CREATE VIEW architectures AS SELECT 1 AS arch_id") == (
        "table architectures is a view"
    )


def test_the_views_digest_names_the_shipped_sql():
    digest = catalog.views_digest()
    assert len(digest) == 64 and digest == catalog.views_digest()

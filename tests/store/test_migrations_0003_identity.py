"""Migration 0003's companion (benchdb.store.migrations.0003_identity), run as the migration runs it on
the golden 0.1 warehouse (tests/fixtures/README.md): every result gets the options, options id and
series id a contract v1 file gets at ingest today (threads=1 and threads=2 become two series; OpenVINO
is keyed by the precision it ran), and a reviewed change point follows its series, keeping its review.
An empty warehouse gets the columns and nothing else."""

from __future__ import annotations

import json

import duckdb
import pytest
from support import old_warehouse

from benchdb.store import database, migrate
from benchdb.store.transaction import transaction

# Not in the core (dependency floors) set: the fixture is a duckdb 2.x file, which older DuckDB
# versions cannot open.


@pytest.fixture
def identity_migration():
    (mig,) = [m for m in database.migrations() if m.version == 3]
    assert mig.name == "identity" and mig.python is not None
    return mig


def test_results_get_todays_identity_and_a_reviewed_change_point_follows_its_series(tmp_path, identity_migration):
    db = old_warehouse.copy_to(tmp_path / "old.duckdb")
    result_id = old_warehouse.add_change_point(db)
    con = duckdb.connect(str(db))
    try:
        assert database.schema_version(con) == 2
        n = con.execute("SELECT count(*) FROM results").fetchone()[0]
        with transaction(con):
            identity_migration.run(con)
        assert con.execute("SELECT count(*) FROM results").fetchone()[0] == n
        assert con.execute("SELECT count(*) FROM results WHERE series_id IS NULL OR options_id IS NULL").fetchone() == (
            0,
        )
        numpy = con.execute(
            "SELECT batch_size, count(DISTINCT series_id), count(DISTINCT options->>'threads') "
            "FROM results WHERE backend = 'numpy' GROUP BY 1 ORDER BY 1"
        ).fetchall()
        assert numpy == [(1, 2, 2), (2, 2, 2)]
        ov = con.execute(
            "SELECT precision, options->>'precision_hint' FROM results WHERE backend = 'openvino'"
        ).fetchall()
        assert ov == [("fp32", "bf16")]
        ort = con.execute("SELECT DISTINCT options FROM results WHERE backend = 'onnxruntime'").fetchall()
        assert [json.loads(o[0]) for o in ort] == [
            {"graph_optimization": "ORT_ENABLE_ALL", "providers": ["CPU"], "threads": 2}
        ]
        cp = con.execute(
            "SELECT c.series_id = r.series_id, c.status, c.note, c.change_id <> 'oldchange001', c.options_id "
            "= r.options_id FROM change_points c JOIN results r ON r.result_id = ?",
            [result_id],
        ).fetchall()
        assert cp == [(True, "acked", "intended: BLAS upgrade", True, True)]
    finally:
        con.close()


def test_an_empty_warehouse_gets_the_columns_and_nothing_else(tmp_path, identity_migration):
    con = duckdb.connect(str(tmp_path / "empty.duckdb"))
    try:
        before = [m for m in database.migrations() if m.version < 3]
        con.execute(migrate._bootstrap_sql())
        for m in before:
            with transaction(con):
                m.run(con)
        with transaction(con):
            identity_migration.run(con)
        columns = {
            r[0]
            for r in con.execute("SELECT column_name FROM duckdb_columns() WHERE table_name = 'results'").fetchall()
        }
        assert {"options", "options_id", "series_id"} <= columns
        assert con.execute("SELECT count(*) FROM results").fetchone() == (0,)
        assert con.execute("SELECT count(*) FROM change_points").fetchone() == (0,)
    finally:
        con.close()

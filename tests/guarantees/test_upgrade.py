"""Upgrade, not rebuild: a warehouse written by benchdb 0.1.0 (schema 2) moves to the single
scenario identity with `benchdb db upgrade`, keeps every row, and agrees with a fresh ingest of
the very contract v1 files it was made from."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
from conftest import benchdb_cmd
from support import old_warehouse

from benchdb.store import database
from benchdb.warehouse import Warehouse

# Not in the core (dependency floors) set: the fixture is a duckdb 2.x file, which older DuckDB
# versions cannot open.

FIXTURES = Path(__file__).parents[1] / "fixtures"
TABLES = (
    "results",
    "samples",
    "runs",
    "hardware",
    "architectures",
    "ingested_files",
    "result_metrics",
    "change_points",
)


@pytest.fixture
def old_db(tmp_path: Path) -> Path:
    return old_warehouse.copy_to(tmp_path / "old.duckdb")


def _counts(path: Path) -> dict[str, int]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return {t: con.execute(f"SELECT count(*) FROM {t}").fetchall()[0][0] for t in TABLES}
    finally:
        con.close()


def test_golden_warehouse_upgrades_in_place_and_keeps_every_row(old_db):
    result_id = old_warehouse.add_change_point(old_db)
    before = _counts(old_db)
    hardware_before = duckdb.connect(str(old_db), read_only=True).execute("SELECT hardware_id FROM hardware").fetchall()

    refused = benchdb_cmd("ingest", str(FIXTURES / "contract_v1"), "--db", str(old_db))
    assert refused.returncode != 0 and "benchdb db upgrade" in refused.stderr

    proc = benchdb_cmd("db", "upgrade", "--db", str(old_db), check=True)
    assert "applied 0003_identity, 0004_file_ids" in proc.stdout
    assert _counts(old_db) == before
    con = duckdb.connect(str(old_db), read_only=True)
    try:
        assert database.schema_version(con) == database.code_schema_version()
        assert con.execute("SELECT hardware_id FROM hardware").fetchall() == hardware_before
        assert con.execute("SELECT count(*) FROM results WHERE series_id IS NULL OR options_id IS NULL").fetchall() == [
            (0,)
        ]
        # threads=1 and threads=2 were one series in 0.1; they are two now, per batch size.
        numpy = con.execute(
            "SELECT batch_size, count(DISTINCT series_id), count(DISTINCT options->>'threads') "
            "FROM results WHERE backend = 'numpy' GROUP BY 1 ORDER BY 1"
        ).fetchall()
        assert numpy == [(1, 2, 2), (2, 2, 2)]
        # OpenVINO asked for bf16 but compiled f32: keyed by what ran, the request kept in options.
        ov = con.execute(
            "SELECT precision, options->>'precision_hint', options->>'performance_hint' FROM results "
            "WHERE backend = 'openvino'"
        ).fetchall()
        assert ov == [("fp32", "bf16", "LATENCY")]
        ort = con.execute("SELECT DISTINCT options FROM results WHERE backend = 'onnxruntime'").fetchall()
        assert [json.loads(o[0]) for o in ort] == [
            {"graph_optimization": "ORT_ENABLE_ALL", "providers": ["CPU"], "threads": 2}
        ]
        # The reviewed change point follows its series, keeping its review.
        cp = con.execute(
            "SELECT c.series_id = r.series_id, c.status, c.note, c.change_id <> 'oldchange001' "
            "FROM change_points c JOIN results r ON r.result_id = ? ",
            [result_id],
        ).fetchall()
        assert cp == [(True, "acked", "intended: BLAS upgrade", True)]
        assert con.execute("SELECT count(*) FROM results_latest").fetchall() == [(7,)]
    finally:
        con.close()

    again = benchdb_cmd("db", "upgrade", "--db", str(old_db), check=True)
    assert f"already at schema version {database.code_schema_version()}" in again.stdout


def test_old_files_ingested_today_get_the_identity_the_upgrade_gave_them(old_db, tmp_path):
    Warehouse(old_db).upgrade()
    fresh = tmp_path / "fresh.duckdb"
    summary = Warehouse(fresh).ingest([FIXTURES / "contract_v1"])
    assert summary.new == 8 and not summary.rejected
    query = (
        "SELECT result_id, series_id, options_id, device, precision, input_shape, validity "
        "FROM results ORDER BY result_id"
    )
    upgraded = duckdb.connect(str(old_db), read_only=True).execute(query).fetchall()
    ingested = duckdb.connect(str(fresh), read_only=True).execute(query).fetchall()
    assert upgraded == ingested


def test_a_new_run_joins_the_series_of_an_upgraded_result(old_db, tmp_path):
    """Today's runner and the upgraded 0.1 row describe the same scenario: one series."""
    Warehouse(old_db).upgrade()
    con = duckdb.connect(str(old_db), read_only=True)
    old = con.execute(
        "SELECT series_id, hardware_id FROM results WHERE backend = 'numpy' AND batch_size = 1 "
        "AND options->>'threads' = '1'"
    ).fetchone()
    con.close()
    from benchdb.harness.scenario import RunOptions
    from benchdb.plan.planning import build_plan, series_ids

    items = build_plan([RunOptions("numpy", ("matmul:32",), threads=1)])
    from benchdb.harness import hardware
    from benchdb.schema import identity

    if identity.hardware_id(hardware.cpu_fingerprint()) != old[1]:
        # The fixture was written on another machine: compare on its hardware id instead.
        sc = items[0].scenarios[0]
        assert identity.series_id(sc.key(), old[1]) == old[0]
    else:
        assert series_ids(items) == [old[0]]

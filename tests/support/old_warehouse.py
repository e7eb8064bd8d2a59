"""The warehouse benchdb 0.1.0 wrote (schema 2; tests/fixtures/README.md), for the upgrade test and
the test of the migration that upgrades it: a fresh copy, and a reviewed change point as 0.1 stored
one."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import duckdb

GOLDEN = Path(__file__).parents[1] / "fixtures" / "warehouse_v0.1.0_schema2.duckdb.gz"


def copy_to(target: Path) -> Path:
    """A fresh copy of the 0.1.0 warehouse at ``target``."""
    with gzip.open(GOLDEN, "rb") as src, open(target, "wb") as dst:
        shutil.copyfileobj(src, dst)
    return target


def add_change_point(path: Path) -> str:
    """A reviewed change point on the threads=2, bs=1 numpy series, as 0.1 stored them; the result id
    of that series' result."""
    con = duckdb.connect(str(path))
    try:
        r = con.execute(
            "SELECT result_id, run_id, hardware_id FROM results WHERE backend = 'numpy' AND threads = 2 "
            "AND batch_size = 1"
        ).fetchone()
        con.execute(
            "INSERT INTO change_points (change_id, series_id, model_id, backend, device, mode, precision, "
            "batch_size, input_shape, hardware_id, run_id, change, detected_at, status, note) VALUES "
            "('oldchange001', 'oldseries', 'matmul:32', 'numpy', 'cpu', 'eager', 'fp32', 1, 'n=32', ?, ?, "
            "0.2, now(), 'acked', 'intended: BLAS upgrade')",
            [r[2], r[1]],
        )
        return r[0]
    finally:
        con.close()

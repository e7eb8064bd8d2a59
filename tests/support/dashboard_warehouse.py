"""The dashboard tests' warehouse: three daily runs of two matmul scenarios (the third 1.3x slower, with
one result that ran out of memory), written as contract files and ingested."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from conftest import make_meta, make_run, write_file

from benchdb.warehouse import Warehouse


def write_run(folder: Path, day: int, shift: float = 1.0, failing: bool = False) -> None:
    run = make_run(started_at=f"2026-11-{day:02d}T10:00:00+00:00")
    for model in ("matmul:64", "matmul:128"):
        rng = np.random.default_rng(day)
        write_file(folder, make_meta(run, model_id=model), rng.normal(1e-3 * shift, 1e-5, 40))
    if failing:
        write_file(folder, make_meta(run, model_id="matmul:4096", status="oom", error="out of memory at batch 1"), [])


def build(tmp_path: Path) -> Path:
    res = tmp_path / "results"
    for day in (1, 2, 3):
        write_run(res / f"d{day}", day, shift=1.0 if day < 3 else 1.3, failing=day == 3)
    db = tmp_path / "w.duckdb"
    Warehouse(db).ingest([res])
    return db

"""Bulk footer checks: ``footers.read_footers`` reads a batch's footers in one DuckDB
pass and checks the Arrow schema once per distinct schema, and must give every file exactly the
verdict and message ``contract.read_footer`` gives it on its own."""

from __future__ import annotations

import duckdb
import pytest
from conftest import make_meta, make_run, write_file
from support.contract_files import read_alone, variety, verdict

from benchdb.schema import contract, footers

pytestmark = pytest.mark.core


def test_bulk_footers_give_each_file_read_footers_verdict(tmp_path):
    files = variety(tmp_path)
    con = duckdb.connect()
    bulk = footers.read_footers(con, files)
    assert sorted(bulk) == sorted(map(str, files))
    for f in files:
        assert verdict(bulk[str(f)]) == verdict(read_alone(f)), f.name
    verdicts = {f.name: verdict(bulk[str(f)])[0] for f in files}
    assert verdicts["duration_iteration.parquet"] == "error"  # the stored Arrow schema counts
    assert verdicts["int64_iteration.parquet"] == verdicts["by_duckdb.parquet"] == "ok"
    assert str(bulk[str(tmp_path / "notes.parquet")]).startswith("file: not a readable Parquet file")
    assert sum(v == "ok" for v in verdicts.values()) == 11


def test_schema_is_checked_once_per_distinct_schema(tmp_path, monkeypatch):
    run = make_run()
    files = [write_file(tmp_path, make_meta(run, batch_size=b), name=f"f{b}.parquet") for b in range(1, 41)]
    checked = []
    real = footers._schema_error
    monkeypatch.setattr(footers, "_schema_error", lambda path, version: checked.append(path) or real(path, version))
    bulk = footers.read_footers(duckdb.connect(), files)
    assert all(isinstance(v, contract.FileFooter) for v in bulk.values())
    assert [v.scenario["batch_size"] for v in bulk.values()] == list(range(1, 41))
    assert len(checked) == 1

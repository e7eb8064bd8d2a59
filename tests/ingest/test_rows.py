"""What ingest records of a batch's files (benchdb.ingest.rows), from their validated footers: the key
every row of a file must carry (an upgraded v1 file's rows keep the values they were written with), a
file's row with its identities, and each new run, hardware and architecture once per batch. Real
contract files' footers."""

from __future__ import annotations

import copy
import json

import pyarrow as pa
import pytest
from conftest import HARDWARE, make_meta, make_run, write_file

from benchdb.ingest.rows import BATCH_SCHEMA, KEY_SCHEMA, Candidate, batch_row, dimension_tables, key_row
from benchdb.schema import contract, identity

pytestmark = pytest.mark.core


def _candidate(folder, meta) -> Candidate:
    path = write_file(folder, meta)
    return Candidate(path, path.stat().st_size, path.stat().st_mtime_ns, "f" * 64, contract.read_footer(path))


def test_the_key_every_row_carries_and_an_upgraded_v1_files_recorded_values(tmp_path):
    c = _candidate(tmp_path, make_meta(make_run(), batch_size=4))
    sc = c.valid_footer.scenario
    row = key_row(c)
    assert set(row) == set(KEY_SCHEMA.names)
    assert row["run_id"] == c.valid_footer.metadata["run"]["run_id"] and row["batch_size"] == 4
    assert {k: row[k] for k in identity.SCENARIO_FIELDS} == {k: sc[k] for k in identity.SCENARIO_FIELDS}
    v1 = copy.deepcopy(c.valid_footer.metadata)
    v1["contract_version"] = 1
    v1["scenario"]["recorded_as"] = {"device": "cuda", "precision": "bf16", "model_id": "not a key it may change"}
    upgraded = Candidate(c.path, c.size, c.mtime_ns, footer=contract.FileFooter(v1, c.valid_footer.num_rows))
    got = key_row(upgraded)
    assert (got["device"], got["precision"], got["model_id"]) == ("cuda", "bf16", sc["model_id"])
    v1["contract_version"] = 2  # a v2 file's rows carry its key as it is
    assert key_row(upgraded) == row


def test_a_files_row_holds_its_identities(tmp_path):
    meta = make_meta(make_run(), batch_size=2, options={"threads": 4})
    c = _candidate(tmp_path, meta)
    ids: dict[str, str] = {}
    row = batch_row(c, 7, ids)
    assert set(row) <= set(BATCH_SCHEMA.names) and pa.Table.from_pylist([row], schema=BATCH_SCHEMA).num_rows == 1
    sc = meta["scenario"]
    assert (row["file_id"], row["size_bytes"], row["sha256"], row["num_rows"]) == (
        7,
        c.size,
        "f" * 64,
        c.valid_footer.num_rows,
    )
    assert row["hardware_id"] == identity.hardware_id(HARDWARE) and list(ids.values()) == [row["hardware_id"]]
    assert row["options"] == json.dumps({"threads": 4}) and row["options_id"] == identity.options_id({"threads": 4})
    assert row["series_id"] == identity.series_id({**sc, "options_id": row["options_id"]}, row["hardware_id"])
    assert row["arch_id"] == identity.arch_id(meta["model"]) and row["repeats"] == 1 and row["summary_only"] is False
    assert row["started_at"] == meta["run"]["started_at"]  # the scenario gives none: the run's


def test_new_runs_hardware_and_architectures_once_per_batch(tmp_path):
    run = make_run()
    other_hw = dict(HARDWARE, device_name="Other CPU", cpu_model="Other CPU")
    batch = [
        _candidate(tmp_path / "a", make_meta(run, batch_size=1)),
        _candidate(tmp_path / "b", make_meta(run, batch_size=2)),
        _candidate(tmp_path / "c", make_meta(run, model_id="matmul:128")),
        _candidate(tmp_path / "d", make_meta(make_run(), hardware=other_hw)),
    ]
    ids: dict[str, str] = {}
    tables = dimension_tables(batch, ids)
    assert tables["new_runs"].num_rows == 2 and tables["new_runs"].column("run_id").to_pylist()[0] == run["run_id"]
    hw = tables["new_hardware"].to_pylist()
    assert [h["device_name"] for h in hw] == [HARDWARE["device_name"], "Other CPU"] and len(ids) == 2
    assert hw[0]["first_seen_run"] == run["run_id"] and json.loads(hw[0]["fingerprint"]) == HARDWARE
    archs = tables["new_architectures"].column("model_id").to_pylist()
    assert archs == ["matmul:64", "matmul:128"]

import json
import uuid

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import HARDWARE, make_meta, make_run, write_file

from benchdb.schema import contract, identity

pytestmark = pytest.mark.core


def test_round_trip(tmp_path):
    run = make_run()
    meta = make_meta(run, batch_size=4)
    path = write_file(tmp_path, meta, values=[0.5, 0.25, 0.125])
    footer = contract.read_footer(path)
    assert footer.metadata == meta
    assert footer.num_rows == 3
    table = pq.read_table(path)
    assert table.schema.remove_metadata() == contract.SAMPLE_SCHEMA
    assert table.column("value").to_pylist() == [0.5, 0.25, 0.125]
    assert set(table.column("scenario_id").to_pylist()) == {meta["scenario"]["scenario_id"]}
    assert set(table.column("batch_size").to_pylist()) == {4}
    # no temp file is left beside it
    assert [p.name for p in tmp_path.iterdir()] == [path.name]


def test_run_ids_are_time_ordered_uuid7():
    ids = [contract.new_run_id() for _ in range(50)]
    assert all(uuid.UUID(i).version == 7 for i in ids)
    assert len(set(ids)) == 50
    assert [i[:13] for i in ids] == sorted(i[:13] for i in ids)  # millisecond prefix never decreases


def test_hardware_id_normalises_case_spacing_and_memory():
    a = dict(HARDWARE)
    b = dict(
        HARDWARE, device_name="  test   cpu 9000 ", memory_bytes=HARDWARE["memory_bytes"] - 10_000_000, driver="other"
    )
    c = dict(HARDWARE, device_name="Test CPU 9001")
    assert identity.hardware_id(a) == identity.hardware_id(b)
    assert identity.hardware_id(a) != identity.hardware_id(c)


def test_failed_scenario_is_a_zero_row_file(tmp_path):
    meta = make_meta(make_run(), status="failed", validity="invalid", error="RuntimeError: boom")
    path = write_file(tmp_path, meta, values=[])
    footer = contract.read_footer(path)
    assert footer.num_rows == 0
    assert footer.scenario["status"] == "failed"
    assert footer.scenario["error"] == "RuntimeError: boom"


def _write_raw(path, table, meta_obj):
    md = {contract.METADATA_KEY: meta_obj if isinstance(meta_obj, bytes) else json.dumps(meta_obj).encode()}
    pq.write_table(table.replace_schema_metadata(md), path)
    return path


def _good(tmp_path):
    meta = make_meta(make_run())
    table = contract.samples_table(meta, [("latency_s", "s", 0, 0.0, 0.001)])
    return meta, table


def test_validator_missing_column(tmp_path):
    meta, table = _good(tmp_path)
    p = _write_raw(tmp_path / "a.parquet", table.drop_columns(["unit"]), meta)
    with pytest.raises(contract.ContractError, match=r"^unit: missing column"):
        contract.read_footer(p)


def test_validator_wrong_type(tmp_path):
    meta, table = _good(tmp_path)
    bad = table.set_column(table.schema.get_field_index("value"), "value", pa.array(["fast"]))
    p = _write_raw(tmp_path / "a.parquet", bad, meta)
    with pytest.raises(contract.ContractError, match=r"^value: expected double, found string"):
        contract.read_footer(p)


def test_validator_accepts_safe_numeric_widening(tmp_path):
    meta, table = _good(tmp_path)
    wide = table.set_column(table.schema.get_field_index("batch_size"), "batch_size", pa.array([1], pa.int64()))
    p = _write_raw(tmp_path / "a.parquet", wide, meta)
    assert contract.read_footer(p).num_rows == 1


def test_validator_unexpected_column(tmp_path):
    meta, table = _good(tmp_path)
    p = _write_raw(tmp_path / "a.parquet", table.append_column("extra", pa.array([1])), meta)
    with pytest.raises(contract.ContractError, match=r"^extra: unexpected column"):
        contract.read_footer(p)


def test_validator_missing_metadata(tmp_path):
    meta, table = _good(tmp_path)
    p = tmp_path / "a.parquet"
    pq.write_table(table.replace_schema_metadata({}), p)
    with pytest.raises(contract.ContractError, match=r"^metadata: no benchdb.contract"):
        contract.read_footer(p)


def test_validator_bad_json(tmp_path):
    _, table = _good(tmp_path)
    p = _write_raw(tmp_path / "a.parquet", table, b"{not json")
    with pytest.raises(contract.ContractError, match=r"^metadata: not valid JSON"):
        contract.read_footer(p)


def test_validator_unknown_contract_version(tmp_path):
    meta, table = _good(tmp_path)
    p = _write_raw(tmp_path / "a.parquet", table, {**meta, "contract_version": 99})
    with pytest.raises(contract.ContractError, match=r"^metadata.contract_version: unknown contract version 99"):
        contract.read_footer(p)


@pytest.mark.parametrize(
    "section,field,value,message",
    [
        ("run", "run_id", None, "metadata.run.run_id: missing"),
        ("hardware", "kind", None, "metadata.hardware.kind: missing"),
        ("scenario", "batch_size", "8", "metadata.scenario.batch_size: expected int, found str"),
        ("scenario", "status", "exploded", "metadata.scenario.status: 'exploded' is not one of"),
        ("scenario", "validity", "maybe", "metadata.scenario.validity: 'maybe' is not valid/invalid"),
        ("scenario", "scenario_id", "0" * 32, "metadata.scenario.scenario_id: does not match"),
    ],
)
def test_validator_metadata_fields(tmp_path, section, field, value, message):
    meta, table = _good(tmp_path)
    meta[section][field] = value
    p = _write_raw(tmp_path / "a.parquet", table, meta)
    with pytest.raises(contract.ContractError) as err:
        contract.read_footer(p)
    assert str(err.value).startswith(message)


def test_validator_truncated_file(tmp_path):
    meta = make_meta(make_run())
    p = write_file(tmp_path, meta)
    data = p.read_bytes()
    p.write_bytes(data[: len(data) // 2])
    with pytest.raises(contract.ContractError, match=r"^file: not a readable Parquet file"):
        contract.read_footer(p)


def test_writer_leaves_no_partial_file_on_error(tmp_path):
    meta = make_meta(make_run())
    table = contract.samples_table(meta, [("latency_s", "s", 0, 0.0, 0.001)])
    # The rename fails (a folder stands where the file should go): no temp file is left behind.
    target = tmp_path / "x.parquet"
    target.mkdir()
    with pytest.raises(OSError):
        contract.write_scenario(target, meta, table)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.parquet"]
    assert target.is_dir() and not any(target.iterdir())


def test_samples_table_values_are_float64():
    meta = make_meta(make_run())
    t = contract.samples_table(meta, [("latency_s", "s", i, 0.0, v) for i, v in enumerate(np.arange(3.0))])
    assert t.column("value").type == pa.float64()
    assert t.num_rows == 3

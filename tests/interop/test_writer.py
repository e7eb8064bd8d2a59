"""The shared writer of `benchdb import` (benchdb.interop.writer): a source's times read as UTC or
refused, run ids time-ordered and the same for the same file, a result's files planned (bad values refused
before anything is written, names ingest reads) and written whole or not at all. Real contract files."""

from __future__ import annotations

import uuid

import pytest

from benchdb.interop.writer import Imported, SourceError, cpu_vendor, plan_files, run_id_for, utc_iso, write_all
from benchdb.schema import contract

pytestmark = pytest.mark.core


def _item(**kw) -> Imported:
    base = dict(model_id="m", backend="pytorch", device="cpu", mode="eager", precision="fp32", batch_size=1)
    return Imported(**{**base, "input_shape": "n=1", "samples": {"latency_s": ("s", [1e-3, 2e-3])}, **kw})


def test_a_sources_time_is_utc_or_refused_by_name():
    assert utc_iso("2026-11-25T15:37:25Z") == "2026-11-25T15:37:25+00:00"
    assert utc_iso("2026-11-25T15:37:25") == "2026-11-25T15:37:25+00:00"  # naive = UTC
    assert utc_iso("2026-11-25T16:37:25+01:00") == "2026-11-25T16:37:25+01:00"
    assert utc_iso(0) == "1970-01-01T00:00:00+00:00" and utc_iso("20261125_153725") == "2026-11-25T15:37:25+00:00"
    assert utc_iso(None) is None and utc_iso("") is None
    with pytest.raises(SourceError, match=r"^started 'soon' is not a date \(expected ISO 8601"):
        utc_iso("soon", "started")
    with pytest.raises(SourceError, match=r"^date 1e\+300 is not a time in epoch seconds"):
        utc_iso(1e300)
    assert [cpu_vendor(n) for n in ("Intel(R) Xeon(R)", "AMD EPYC 9655", "Apple M3", None)] == [
        "GenuineIntel", "AuthenticAMD", None, None,
    ]  # fmt: skip


def test_run_ids_are_uuid7_ordered_by_the_sources_time():
    digest = "ab" * 32
    early, late = run_id_for("2026-11-01T00:00:00+00:00", digest), run_id_for("2026-11-02T00:00:00+00:00", digest)
    assert uuid.UUID(early).version == 7 and early < late
    assert (
        run_id_for("2026-11-01T00:00:00+00:00", digest) == early != run_id_for("2026-11-01T00:00:00+00:00", "cd" * 32)
    )


def test_planned_files_are_named_for_ingest_and_written_whole(tmp_path):
    source = tmp_path / ".hidden results.json"
    source.write_text("{}")
    planned = plan_files(
        [_item(model_id="./models/llama"), _item(batch_size=2)], "pytest-benchmark", source, tmp_path / "out"
    )
    names = [p.relative_to(tmp_path / "out").parts for p, _m, _r in planned]
    assert all(n[0] == "pytest-benchmark" and n[1].startswith("hidden_results-") for n in names)
    assert names[0][2].startswith("_models_llama-") and not any(part.startswith(".") for n in names for part in n)
    again = plan_files(
        [_item(model_id="./models/llama"), _item(batch_size=2)], "pytest-benchmark", source, tmp_path / "out"
    )
    assert [p for p, _m, _r in again] == [p for p, _m, _r in planned]  # the same file: the same ids
    written = write_all(planned)
    footer = contract.read_footer(written[1])
    assert footer.num_rows == 2 and footer.scenario["source"]["format"] == "pytest-benchmark"
    assert footer.metadata["run"]["tags"] == ["import:pytest-benchmark"]


def test_bad_values_are_refused_before_anything_is_written(tmp_path):
    source = tmp_path / "r.json"
    source.write_text("{}")
    for items, why in (
        ([_item(samples={"latency_s": ("s", [1.0, float("nan")])})], "metric latency_s has a non-numeric value nan"),
        ([_item(samples={"latency_s": ("s", [-1.0])})], "metric latency_s has a negative value -1: a time, size"),
        ([_item(samples={})], "m: no latency_s values"),
        ([_item(), _item()], r"two results with the same key \(m, n=1\)"),
    ):
        with pytest.raises(SourceError, match=f"^{why}"):
            plan_files(items, "pytest-benchmark", source, tmp_path / "out")
    assert not (tmp_path / "out").exists()
    planned = plan_files([_item(), _item(batch_size=2)], "pytest-benchmark", source, tmp_path / "out")
    planned[1][0].mkdir(parents=True)  # the second file cannot be written
    with pytest.raises(OSError):
        write_all(planned)
    assert not [p for p in (tmp_path / "out").rglob("*.parquet") if p.is_file()]  # the first, written, is removed

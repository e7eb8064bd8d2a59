"""`benchdb import kernels`: the JSON `kernels benchmark --output` writes (tests/fixtures/interop/kernels)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import benchdb_cmd, import_and_ingest, one_error_line
from conftest import db_rows as rows

from benchdb.interop import kernels_bench

pytestmark = pytest.mark.core

FIX = Path(__file__).parents[1] / "fixtures" / "interop" / "kernels" / "results.json"


def test_each_workload_is_a_summary_with_the_tools_own_figures(tmp_path):
    db = import_and_ingest(tmp_path, "kernels", FIX)
    doc = json.loads(FIX.read_text())
    got = {
        (r["model_id"], r["statistic"]): r["value"]
        for r in rows(
            db, "SELECT r.model_id, s.statistic, s.value FROM results r JOIN source_statistics s USING (result_id)"
        )
    }
    for r in doc["results"]:
        t = r["timingResults"]
        for key, stat in (("mean_ms", "mean"), ("std_ms", "stddev"), ("q1_ms", "q1"), ("iqr_ms", "iqr")):
            assert got[(f"kernels:{r['workload']}", stat)] == pytest.approx(t[key] / 1e3)
    meta = {
        r["model_id"]: r
        for r in rows(
            db,
            "SELECT r.model_id, h.kind, json_extract(r.settings, '$.verified') AS verified, "
            "json_extract_string(r.settings, '$.iterations') AS iterations, s.summary_only "
            "FROM results r JOIN hardware h USING (hardware_id) JOIN result_sources s USING (result_id)",
        )
    }
    assert meta["kernels:SiluWorkloads.large"]["verified"] == "true"
    assert meta["kernels:SiluWorkloads.noverify"]["verified"] is None  # the workload checks nothing
    assert {(m["kind"], m["iterations"], m["summary_only"]) for m in meta.values()} == {("cpu", "100", True)}


@pytest.mark.parametrize(
    ("change", "why"),
    [
        (lambda d: d.pop("machineInfo"), "not a `kernels benchmark` JSON file"),
        (lambda d: d["results"][0]["timingResults"].update(mean_ms=-1), "timingResults.mean_ms is -1, not a time"),
        (lambda d: d["results"][1]["timingResults"].pop("mean_ms"), "timingResults has no mean_ms"),
    ],
)
def test_a_file_that_is_not_one_is_refused_in_one_line(tmp_path, change, why):
    doc = json.loads(FIX.read_text())
    change(doc)
    bad = tmp_path / "results.json"
    bad.write_text(json.dumps(doc))
    r = benchdb_cmd("import", "kernels", str(bad), "--out", str(tmp_path / "out"))
    line = one_error_line(r)
    assert why in line and str(bad) in line
    assert not list((tmp_path / "out").rglob("*.parquet"))


def test_each_workload_is_parsed_with_the_tools_figures_in_seconds():
    doc = json.loads(FIX.read_text())
    items = kernels_bench.parse(FIX)
    assert [i.model_id for i in items] == [f"kernels:{r['workload']}" for r in doc["results"]]
    for item, r in zip(items, doc["results"], strict=True):
        stats = {s: v for _, _, s, v in item.statistics}
        assert stats["mean"] == pytest.approx(r["timingResults"]["mean_ms"] / 1e3)
        assert item.summary_only and item.samples == {}
    assert kernels_bench.hardware({"backend": "cuda", "gpu": "NVIDIA H200"})["device_name"] == "NVIDIA H200"
    assert kernels_bench.hardware({"backend": "cpu", "gpu": "N/A", "cpu": "x86_64"}) == {
        "kind": "cpu",
        "device_name": "x86_64",
        "os": None,
        "arch": "x86_64",
    }

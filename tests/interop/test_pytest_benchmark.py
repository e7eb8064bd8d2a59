"""`benchdb import pytest-benchmark` (benchdb/interop/pytest_benchmark.py): the real pytest-benchmark
5.3.1's JSON (tests/fixtures/interop/pytest_benchmark), each benchmark a result whose every round is a
sample, the machine it names its CPU."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import db_rows as rows
from conftest import import_and_ingest, result_metric

from benchdb.interop import pytest_benchmark

pytestmark = pytest.mark.core

FIX = Path(__file__).parents[1] / "fixtures" / "interop"


def test_pytest_benchmark_medians_and_counts_equal_the_source(tmp_path):
    src = FIX / "pytest_benchmark" / "pytest_benchmark.json"
    db = import_and_ingest(tmp_path, "pytest-benchmark", src)
    doc = json.loads(src.read_text())
    for b in doc["benchmarks"]:
        m = result_metric(db, b["fullname"], "latency_s")
        assert m["n"] == b["stats"]["rounds"] == len(b["stats"]["data"])
        assert m["median"] == pytest.approx(b["stats"]["median"], rel=1e-12)
        assert m["min"] == pytest.approx(b["stats"]["min"], rel=1e-12)
    prov = rows(db, "SELECT DISTINCT format, tool_version, summary_only FROM result_sources")
    assert prov == [{"format": "pytest-benchmark", "tool_version": doc["version"], "summary_only": False}]
    hw = rows(db, "SELECT kind, device_name, cores_logical, arch FROM hardware")
    cpu = doc["machine_info"]["cpu"]
    assert hw == [
        {
            "kind": "cpu",
            "device_name": cpu["brand_raw"],
            "cores_logical": cpu["count"],
            "arch": doc["machine_info"]["machine"],
        }
    ]


def test_each_benchmark_is_a_result_with_every_round_and_the_tools_own_figures():
    src = FIX / "pytest_benchmark" / "pytest_benchmark.json"
    doc = json.loads(src.read_text())
    items = pytest_benchmark.parse(src)
    assert [i.model_id for i in items] == [b["fullname"] for b in doc["benchmarks"]]
    for item, b in zip(items, doc["benchmarks"], strict=True):
        unit, values = item.samples["latency_s"]
        assert (unit, values) == ("s", b["stats"]["data"])
        stats = {s[2]: s[3] for s in item.statistics}
        assert stats["median"] == b["stats"]["median"] and stats["min"] == b["stats"]["min"]
        assert (item.tool, item.tool_version, item.summary_only) == ("pytest-benchmark", doc["version"], False)
    assert items[1].input_shape == "n=100"  # a parametrised benchmark's parameters are its shape
    cpu = doc["machine_info"]["cpu"]
    assert pytest_benchmark.hardware(doc["machine_info"])["device_name"] == cpu["brand_raw"]

"""`benchdb import hud-v3` (benchdb/interop/hud_v3.py): PyTorch HUD v3 benchmark records, grouped into
one result per benchmark and model, every metric in seconds."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest
from conftest import db_rows as rows
from conftest import import_and_ingest, result_metric

from benchdb.interop import hud_v3

pytestmark = pytest.mark.core

FIX = Path(__file__).parents[1] / "fixtures" / "interop"


def test_hud_v3_records_group_into_results_with_metrics_in_seconds(tmp_path):
    src = FIX / "hud" / "executorch_v3.jsonl"
    db = import_and_ingest(tmp_path, "hud-v3", src)
    recs = [json.loads(line) for line in src.read_text().splitlines()]
    for rec in recs:
        name = {"avg_inference_latency(ms)": "avg_inference_latency_s", "model_load_time(ms)": "model_load_time_s"}[
            rec["metric"]["name"]
        ]
        m = result_metric(db, rec["model"]["name"], name)
        values = rec["metric"]["benchmark_values"]
        assert m["n"] == len(values)
        assert m["median"] == pytest.approx(statistics.median(values) / 1000, rel=1e-12)
    got = rows(db, "SELECT model_id, backend, metric, precision FROM results ORDER BY model_id")
    assert got == [
        {"model_id": "llama3_spinquant", "backend": "qnn_q8", "metric": "avg_inference_latency_s", "precision": "int8"},
        {"model_id": "mv3", "backend": "xnnpack_q8", "metric": "avg_inference_latency_s", "precision": "int8"},
    ]


def test_records_of_one_model_are_one_result_with_its_metrics_in_seconds():
    src = FIX / "hud" / "executorch_v3.jsonl"
    recs = [json.loads(line) for line in src.read_text().splitlines()]
    items = {i.model_id: i for i in hud_v3.parse(src)}
    assert sorted(items) == sorted({r["model"]["name"] for r in recs})
    for rec in recs:
        item = items[rec["model"]["name"]]
        name = rec["metric"]["name"].replace("(ms)", "_s")
        unit, values = item.samples[name]
        assert unit == "s" and values == pytest.approx([v / 1000 for v in rec["metric"]["benchmark_values"]])
        assert (item.backend, item.precision) == (rec["model"]["backend"], "int8")

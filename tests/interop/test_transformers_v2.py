"""`benchdb import transformers` (benchdb/interop/transformers_v2.py): transformers' benchmark_v2 results
in their older (``measurements``) and newer (``measures``, token times) layouts, and files that drift
from both."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest
from conftest import db_rows as rows
from conftest import import_and_ingest, result_metric

from benchdb.interop import transformers_v2

pytestmark = pytest.mark.core

FIX = Path(__file__).parents[1] / "fixtures" / "interop"


def test_transformers_benchmark_v2_old_and_new_field_names(tmp_path):
    db = import_and_ingest(tmp_path, "transformers", FIX / "transformers")
    old = json.loads(
        (FIX / "transformers" / "meta-llama_Llama-3.2-1B-Instruct_benchmark_20250918_140211.json").read_text()
    )
    (entry,) = old.values()
    meas = entry["measurements"]
    for key, name in (
        ("e2e_latency", "generate_s"),
        ("time_to_first_token", "ttft_s"),
        ("inter_token_latency", "tpot_s"),
    ):
        m = result_metric(db, "meta-llama/Llama-3.2-1B-Instruct", name)
        assert m["n"] == len(meas[key])
        assert m["median"] == pytest.approx(statistics.median(meas[key]), rel=1e-12)
    new = json.loads((FIX / "transformers" / "meta-llama_Llama-3.2-1B_benchmark_20251103_081542.json").read_text())
    for entry in new.values():  # "measures", token times instead of ttft/itl lists, no model_id
        bs = entry["config"]["batch_size"]
        m = result_metric(db, "meta-llama_Llama-3.2-1B", "ttft_s", batch_size=bs)
        assert m["median"] == pytest.approx(statistics.median(t[0] for t in entry["measures"]["dt_tokens"]))
        e2e = result_metric(db, "meta-llama_Llama-3.2-1B", "generate_s", batch_size=bs)
        assert e2e["median"] == pytest.approx(statistics.median(entry["measures"]["e2e_latency"]), rel=1e-12)
    modes = rows(db, "SELECT DISTINCT mode, precision FROM results ORDER BY mode")
    assert modes == [{"mode": "compile", "precision": "fp16"}, {"mode": "eager", "precision": "bf16"}]


def test_transformers_drift_missing_and_renamed_fields_do_not_break(tmp_path):
    src = tmp_path / "drift"
    src.mkdir()
    doc = {
        "cfg1": {
            "measurements": {"e2e_latency": [1.0, 2.0, 3.0], "time_to_first_token": None},
            "config": {"batch_size": 2},
        },  # no metadata, no device, no dtype
        "cfg2": {
            "metadata": {"model_id": "org/m", "hardware_info": {}, "some_new_field": 1},
            "measures": {"e2e_latency": [0.5, 0.7], "token_times": [[1, 2]]},
            "config": {"seq_len": 64, "torch_dtype": "float16", "device": "cpu", "renamed": True},
        },
    }
    (src / "org_m_benchmark_20250101_000000.json").write_text(json.dumps(doc))
    db = import_and_ingest(tmp_path, "transformers", src)
    got = rows(db, "SELECT model_id, device, precision, batch_size, input_shape, n, median FROM results ORDER BY n")
    assert got == [
        {
            "model_id": "org/m",
            "device": "cpu",
            "precision": "fp16",
            "batch_size": 1,
            "input_shape": "seq_len=64",
            "n": 2,
            "median": pytest.approx(0.6),
        },
        {
            "model_id": "org_m",
            "device": "cuda:0",
            "precision": "fp32",
            "batch_size": 2,
            "input_shape": "seq_len=na",
            "n": 3,
            "median": 2.0,
        },
    ]


def test_the_newer_layout_gives_ttft_from_each_runs_first_token_time():
    src = FIX / "transformers" / "meta-llama_Llama-3.2-1B_benchmark_20251103_081542.json"
    doc = json.loads(src.read_text())
    items = transformers_v2.parse(src)
    assert sorted(i.batch_size for i in items) == sorted(e["config"]["batch_size"] for e in doc.values())
    for item in items:
        (entry,) = [e for e in doc.values() if e["config"]["batch_size"] == item.batch_size]
        assert item.samples["ttft_s"] == ("s", [t[0] for t in entry["measures"]["dt_tokens"]])
        assert item.samples["generate_s"] == ("s", entry["measures"]["e2e_latency"])
        assert (item.model_id, item.mode, item.precision) == ("meta-llama_Llama-3.2-1B", "compile", "fp16")

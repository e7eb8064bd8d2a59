"""`benchdb import optimum-benchmark` (benchdb/interop/optimum_benchmark.py): a benchmark's report and
config (one file, or a report with its config beside it), each target's every latency kept, memory and
energy as metrics, the environment block as the hardware."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import db_rows as rows
from conftest import import_and_ingest, result_metric

from benchdb.interop import optimum_benchmark

pytestmark = pytest.mark.core

FIX = Path(__file__).parents[1] / "fixtures" / "interop"


def test_optimum_benchmark_keeps_every_latency_value_per_target(tmp_path):
    db = import_and_ingest(tmp_path, "optimum-benchmark", FIX / "optimum_benchmark")
    bert = json.loads((FIX / "optimum_benchmark" / "bert_cpu" / "benchmark.json").read_text())
    fwd = bert["report"]["forward"]["latency"]
    m = result_metric(db, "google-bert/bert-base-uncased", "latency_s")
    assert m["n"] == fwd["count"] == len(fwd["values"])
    assert m["median"] == pytest.approx(fwd["p50"], rel=1e-12)
    assert result_metric(db, "google-bert/bert-base-uncased", "load_s")["n"] == 1
    assert result_metric(db, "google-bert/bert-base-uncased", "peak_rss_bytes")["max"] == pytest.approx(912.4 * 2**20)
    report = json.loads((FIX / "optimum_benchmark" / "gpt2_cuda" / "benchmark_report.json").read_text())
    for target, name in (("prefill", "ttft_s"), ("per_token", "tpot_s"), ("decode", "decode_s")):
        m = result_metric(db, "openai-community/gpt2", name)
        assert m["n"] == report[target]["latency"]["count"]
        assert m["median"] == pytest.approx(report[target]["latency"]["p50"], rel=1e-12)
    gpt2 = rows(
        db,
        "SELECT r.device, r.precision, r.batch_size, r.input_shape, h.kind, h.device_name "
        "FROM results r JOIN hardware h USING (hardware_id) WHERE model_id = 'openai-community/gpt2'",
    )
    assert gpt2 == [
        {
            "device": "cuda:0",
            "precision": "fp16",
            "batch_size": 2,
            "input_shape": "sequence_length=64,new_tokens=16",
            "kind": "cuda",
            "device_name": "NVIDIA A10G",
        }
    ]
    energy = result_metric(db, "openai-community/gpt2", "prefill_energy_j")
    assert energy["max"] == pytest.approx(4.62e-06 * 3.6e6)


def test_optimum_benchmark_cpu_environment_maps_to_the_native_hardware_id(tmp_path):
    """A CPU environment block describing this machine gives the hardware id of benchdb's own runs."""
    from benchdb.harness import hardware
    from benchdb.schema import identity

    fp = hardware.cpu_fingerprint()
    doc = json.loads((FIX / "optimum_benchmark" / "bert_cpu" / "benchmark.json").read_text())
    env = doc["config"]["environment"]
    env.update(
        cpu=fp["cpu_model"],
        cpu_count=fp["cores_logical"],
        machine=fp["arch"],
        cpu_ram_mb=fp["memory_bytes"] / 2**20 if fp.get("memory_bytes") else None,
    )
    src = tmp_path / "src" / "benchmark.json"
    src.parent.mkdir()
    src.write_text(json.dumps(doc))
    db = import_and_ingest(tmp_path, "optimum-benchmark", src)
    if fp.get("cpu_part") or (fp.get("vendor") or "") not in ("GenuineIntel", "AuthenticAMD"):
        pytest.skip("this CPU's vendor cannot be told from its model name (ARM, Apple)")
    assert rows(db, "SELECT hardware_id FROM hardware") == [{"hardware_id": identity.hardware_id(fp)}]


def test_a_report_beside_its_config_is_one_result_with_each_targets_latencies():
    folder = FIX / "optimum_benchmark" / "gpt2_cuda"
    report = json.loads((folder / "benchmark_report.json").read_text())
    (item,) = optimum_benchmark.parse(folder / "benchmark_report.json")
    assert (item.model_id, item.device, item.precision, item.batch_size) == (
        "openai-community/gpt2",
        "cuda:0",
        "fp16",
        2,
    )
    assert item.primary_metric == "ttft_s" and item.hardware["device_name"] == "NVIDIA A10G"
    for target, name in (("prefill", "ttft_s"), ("decode", "decode_s"), ("per_token", "tpot_s")):
        assert item.samples[name] == ("s", report[target]["latency"]["values"])
    assert item.samples["prefill_energy_j"][0] == "J"

"""`benchdb import FORMAT` for every supported format: import, ingest, and the warehouse's medians
(computed by benchdb from the imported samples) equal the source's own figures. Fixtures are
real tool output where the tool runs here (LoadGen, pytest-benchmark) and files written from the
formats' source code elsewhere (tests/fixtures/interop/README.md)."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest
from conftest import cli, import_and_ingest
from conftest import db_rows as rows

pytestmark = pytest.mark.core

FIX = Path(__file__).parents[1] / "fixtures" / "interop"


def metric(db, model_id, name, **where):
    extra = "".join(f" AND r.{k} = ${k}" for k in where)
    got = rows(
        db,
        "SELECT m.* FROM result_metrics m JOIN results r USING (result_id) "
        f"WHERE r.model_id = $model AND m.metric = $metric{extra}",
        {"model": model_id, "metric": name, **where},
    )
    assert len(got) == 1, (model_id, name, got)
    return got[0]


def test_pytest_benchmark_medians_and_counts_equal_the_source(tmp_path):
    src = FIX / "pytest_benchmark" / "pytest_benchmark.json"
    db = import_and_ingest(tmp_path, "pytest-benchmark", src)
    doc = json.loads(src.read_text())
    for b in doc["benchmarks"]:
        m = metric(db, b["fullname"], "latency_s")
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


def test_optimum_benchmark_keeps_every_latency_value_per_target(tmp_path):
    db = import_and_ingest(tmp_path, "optimum-benchmark", FIX / "optimum_benchmark")
    bert = json.loads((FIX / "optimum_benchmark" / "bert_cpu" / "benchmark.json").read_text())
    fwd = bert["report"]["forward"]["latency"]
    m = metric(db, "google-bert/bert-base-uncased", "latency_s")
    assert m["n"] == fwd["count"] == len(fwd["values"])
    assert m["median"] == pytest.approx(fwd["p50"], rel=1e-12)
    assert metric(db, "google-bert/bert-base-uncased", "load_s")["n"] == 1
    assert metric(db, "google-bert/bert-base-uncased", "peak_rss_bytes")["max"] == pytest.approx(912.4 * 2**20)
    report = json.loads((FIX / "optimum_benchmark" / "gpt2_cuda" / "benchmark_report.json").read_text())
    for target, name in (("prefill", "ttft_s"), ("per_token", "tpot_s"), ("decode", "decode_s")):
        m = metric(db, "openai-community/gpt2", name)
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
    energy = metric(db, "openai-community/gpt2", "prefill_energy_j")
    assert energy["max"] == pytest.approx(4.62e-06 * 3.6e6)


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
        m = metric(db, "meta-llama/Llama-3.2-1B-Instruct", name)
        assert m["n"] == len(meas[key])
        assert m["median"] == pytest.approx(statistics.median(meas[key]), rel=1e-12)
    new = json.loads((FIX / "transformers" / "meta-llama_Llama-3.2-1B_benchmark_20251103_081542.json").read_text())
    for entry in new.values():  # "measures", token times instead of ttft/itl lists, no model_id
        bs = entry["config"]["batch_size"]
        m = metric(db, "meta-llama_Llama-3.2-1B", "ttft_s", batch_size=bs)
        assert m["median"] == pytest.approx(statistics.median(t[0] for t in entry["measures"]["dt_tokens"]))
        e2e = metric(db, "meta-llama_Llama-3.2-1B", "generate_s", batch_size=bs)
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


def test_hud_v3_records_group_into_results_with_metrics_in_seconds(tmp_path):
    src = FIX / "hud" / "executorch_v3.jsonl"
    db = import_and_ingest(tmp_path, "hud-v3", src)
    recs = [json.loads(line) for line in src.read_text().splitlines()]
    for rec in recs:
        name = {"avg_inference_latency(ms)": "avg_inference_latency_s", "model_load_time(ms)": "model_load_time_s"}[
            rec["metric"]["name"]
        ]
        m = metric(db, rec["model"]["name"], name)
        values = rec["metric"]["benchmark_values"]
        assert m["n"] == len(values)
        assert m["median"] == pytest.approx(statistics.median(values) / 1000, rel=1e-12)
    got = rows(db, "SELECT model_id, backend, metric, precision FROM results ORDER BY model_id")
    assert got == [
        {"model_id": "llama3_spinquant", "backend": "qnn_q8", "metric": "avg_inference_latency_s", "precision": "int8"},
        {"model_id": "mv3", "backend": "xnnpack_q8", "metric": "avg_inference_latency_s", "precision": "int8"},
    ]


def test_mlperf_logs_are_summary_only_with_nearest_rank_percentiles(tmp_path):
    db = import_and_ingest(tmp_path, "mlperf", FIX / "mlperf")
    res = rows(
        db,
        "SELECT r.mode, r.n, r.median, r.metric, r.validity, r.validity_reasons, s.summary_only, "
        "s.percentile_method, s.tool_version FROM results r JOIN result_sources s USING (result_id) "
        "ORDER BY r.mode",
    )
    assert [r["mode"] for r in res] == ["Offline", "SingleStream"]
    for r in res:  # no samples: nothing computed by benchdb, the source's figures stored apart
        assert (r["n"], r["median"], r["summary_only"], r["percentile_method"]) == (0, None, True, "nearest_rank")
        assert r["tool_version"] == "6.0.17"
    assert rows(db, "SELECT count(*) AS n FROM samples") == [{"n": 0}]
    offline, single = res
    assert offline["validity"] == "invalid" and offline["metric"] == "throughput_items_s"
    assert any("Min duration satisfied: NO" in why for why in offline["validity_reasons"])
    assert single["validity"] == "valid" and single["metric"] == "latency_s"
    stats = {
        r["statistic"]: r["value"]
        for r in rows(
            db,
            "SELECT statistic, value FROM source_statistics st JOIN results r USING (result_id) "
            "WHERE r.mode = 'SingleStream' AND st.metric = 'latency_s'",
        )
    }
    assert stats["p50"] == pytest.approx(2206728e-9)
    assert stats["p90"] == stats["headline_p90"] == pytest.approx(4023083e-9)
    assert stats["p99.9"] == pytest.approx(7488652e-9)
    tput = rows(
        db,
        "SELECT value FROM source_statistics st JOIN results r USING (result_id) "
        "WHERE r.mode = 'Offline' AND st.statistic = 'value'",
    )
    assert tput == [{"value": pytest.approx(81076.1)}]


def test_importing_the_same_files_again_adds_nothing(tmp_path):
    db = import_and_ingest(tmp_path, "pytest-benchmark", FIX / "pytest_benchmark" / "pytest_benchmark.json")
    r = cli(
        "import", "pytest-benchmark", FIX / "pytest_benchmark" / "pytest_benchmark.json", "--out", tmp_path / "imported"
    )
    assert r.exit_code == 0
    r = cli("ingest", tmp_path / "imported", "--db", db)
    assert r.exit_code == 0, r.output
    assert rows(db, "SELECT count(*) AS n FROM results") == [{"n": 3}]


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

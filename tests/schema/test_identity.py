"""One scenario identity: options in the key, true hardware ids, canonical devices, series."""

from __future__ import annotations

import json
from dataclasses import replace

import duckdb
import pytest
from click.testing import CliRunner
from conftest import make_meta, make_run, need_module, write_file

from benchdb.cli import main
from benchdb.harness.scenario import RunOptions
from benchdb.plan.planning import build_plan
from benchdb.schema import contract, identity
from benchdb.warehouse import Warehouse

pytestmark = pytest.mark.core

FAST = (
    "settings: {warmup: 1, min_iters: 5, min_time: 0.01, max_time: 0.1, target_ci: 0.5, max_background_cpu: 100%, "
    "isolate: false}"
)


@pytest.mark.all_cpus  # runs with --threads 1 and --threads 2
def test_config_entries_differing_only_in_threads_give_distinct_files_results_and_series(tmp_path):
    cfg = tmp_path / "threads.yaml"
    out = tmp_path / "out"
    cfg.write_text(
        FAST
        + """
runs:
  - {backends: numpy, models: matmul:16, threads: 1}
  - {backends: numpy, models: matmul:16, threads: 2}
"""
    )
    res = CliRunner().invoke(main, ["run", "--config", str(cfg), "--out", str(out)])
    assert res.exit_code == 0, res.output
    files = sorted(out.rglob("*.parquet"))
    assert len(files) == 2
    # A second run of one of the two scenarios joins its series.
    res = CliRunner().invoke(
        main,
        [
            "run",
            "--backend",
            "numpy",
            "--model",
            "matmul:16",
            "--threads",
            "1",
            "--warmup",
            "1",
            "--min-iters",
            "5",
            "--min-time",
            "0.01",
            "--max-time",
            "0.1",
            "--max-background-cpu",
            "100%",
            "--no-isolation",
            "--out",
            str(out),
        ],
    )
    assert res.exit_code == 0, res.output
    db = tmp_path / "w.duckdb"
    summary = Warehouse(db).ingest([out])
    assert summary.new == 3 and not summary.rejected
    con = duckdb.connect(str(db), read_only=True)
    rows = con.execute(
        "SELECT options->>'threads' AS threads, count(*), count(DISTINCT series_id), "
        "any_value(series_id) FROM results GROUP BY 1 ORDER BY 1"
    ).fetchall()
    assert [(r[0], r[1], r[2]) for r in rows] == [("1", 2, 1), ("2", 1, 1)]
    assert rows[0][3] != rows[1][3]
    assert con.execute("SELECT count(*) FROM results_latest").fetchall() == [(2,)]
    assert con.execute("SELECT count(DISTINCT series_id) FROM trends").fetchall() == [(2,)]


def test_options_are_canonical_and_hashed():
    a = {"threads": 4, "providers": ["CUDA", "CPU"], "graph_optimization": "ORT_ENABLE_ALL"}
    b = {"graph_optimization": "ORT_ENABLE_ALL", "providers": ["CUDA", "CPU"], "threads": 4, "x": None}
    assert identity.options_id(a) == identity.options_id(b)
    # Provider order is a priority list: a different order is a different measurement.
    assert identity.options_id(a) != identity.options_id({**a, "providers": ["CPU", "CUDA"]})
    assert identity.options_id(a) != identity.options_id({**a, "threads": 8})
    key = {
        "model_id": "m",
        "backend": "onnxruntime",
        "device": "cuda:0",
        "mode": "opt-all",
        "precision": "fp32",
        "batch_size": 1,
        "input_shape": "seq_len=8",
    }
    assert identity.scenario_id("r", {**key, "options": a}) != identity.scenario_id(
        "r", {**key, "options": {**a, "threads": 8}}
    )
    assert identity.series_id({**key, "options": a}, "hw1") == identity.series_id({**key, "options": b}, "hw1")
    assert identity.series_id({**key, "options": a}, "hw1") != identity.series_id({**key, "options": a}, "hw2")


@pytest.mark.parametrize(
    "raw,canonical",
    [
        ("cpu", "cpu"),
        ("CPU", "cpu"),
        ("cuda", "cuda:0"),
        ("cuda:1", "cuda:1"),
        ("GPU.1", "gpu:1"),
        ("GPU", "gpu:0"),
        ("mps", "mps"),
        ("rocm", "rocm:0"),
        ("npu", "npu:0"),
        ("AUTO", "auto"),
    ],
)
def test_devices_have_one_spelling(raw, canonical):
    assert identity.normalize_device(raw) == canonical


def test_gen_tokens_are_part_of_the_shape_of_generative_pytorch_scenarios():
    need_module("transformers", "benchdb[torch]")
    base = RunOptions("pytorch", ("tiny:llama", "tiny:bert"), seq_lens=(8,), threads=1)
    plans = {g: {i.model: i.scenarios[0] for i in build_plan([replace(base, gen_tokens=g)])} for g in (4, 8)}
    assert plans[4]["tiny:llama"].input_shape == "seq_len=8,new_tokens=4"
    assert plans[8]["tiny:llama"].input_shape == "seq_len=8,new_tokens=8"
    assert plans[4]["tiny:bert"].input_shape == plans[8]["tiny:bert"].input_shape == "seq_len=8"
    k4, k8 = plans[4]["tiny:llama"].key(), plans[8]["tiny:llama"].key()
    assert identity.scenario_id("r", k4) != identity.scenario_id("r", k8)


def test_contract_v2_refuses_bad_options_and_non_canonical_devices(tmp_path):
    run = make_run()
    with pytest.raises(contract.ContractError, match="options.*threads"):
        make_meta(run, options={"threads": "4"})
    with pytest.raises(contract.ContractError, match="options.*not an option of numpy"):
        make_meta(run, options={"threads": 1, "nosuch": 1})
    with pytest.raises(contract.ContractError, match="device.*'cuda:0'"):
        make_meta(run, device="CUDA")
    meta = make_meta(run)
    assert meta["contract_version"] == 2 and meta["scenario"]["options"] == {"threads": 1}
    assert contract.read_footer(write_file(tmp_path, meta)).scenario["options"] == {"threads": 1}


def test_x86_hardware_ids_are_unchanged_by_the_new_identity_fields():
    fp = {
        "kind": "cpu",
        "vendor": "AuthenticAMD",
        "device_name": "AMD EPYC",
        "cpu_model": "AMD EPYC",
        "cores_logical": 2,
        "memory_bytes": 24 * 2**30,
        "arch": "x86_64",
        "cpu_affinity": 2,
    }
    # The id benchdb 0.1 gave this fingerprint (same fields, same normalisation).
    norm = {
        "kind": "cpu",
        "vendor": "authenticamd",
        "device_name": "amd epyc",
        "memory_gib": 24,
        "compute_capability": None,
        "cpu_model": "amd epyc",
        "cores_logical": 2,
        "arch": "x86_64",
    }
    import hashlib

    assert identity.hardware_id(fp) == hashlib.sha256(json.dumps(norm, sort_keys=True).encode()).hexdigest()[:16]

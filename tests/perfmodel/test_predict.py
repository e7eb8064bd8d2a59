"""`benchdb predict` on a synthetic warehouse whose true law is known: latency = k(backend) x
max(FLOPs / peak FLOP/s, bytes / bandwidth) on three calibrated hardware. The predictor must
recover it within 5 %; the roofline-alone baseline must not (it misses k); and with too little
data the answer is "insufficient data", not a number."""

import json

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import HARDWARE, make_meta, make_run, write_file
from support import perf_rows

from benchdb.cli import main
from benchdb.perfmodel import calibrate as cal
from benchdb.perfmodel import predict as pr
from benchdb.schema import identity
from benchdb.warehouse import Warehouse

#: name -> (peak FLOP/s fp32, triad bytes/s)
HW = {"Alpha": (100e9, 20e9), "Beta": (50e9, 40e9), "Gamma": (200e9, 10e9)}
K = {"fast": 1.5, "slow": 2.6}  # no exact ties between (hardware, backend) orders
#: model -> (family, parameters, FLOPs per item)
MODELS = {
    "m1": ("text", 1e6, 2e9),
    "m2": ("text", 2e7, 1e8),
    "m3": ("vision", 5e7, 4e9),
    "m4": ("vision", 3e6, 5e8),
    "m5": ("audio", 8e7, 2e10),
}
BATCHES = (1, 2, 4, 8)


def true_latency(model, hw, backend, batch):
    _, params, fpi = MODELS[model]
    peak, bw = HW[hw]
    return K[backend] * max(fpi * batch / peak, params * 4 / bw)


def fingerprint(name):
    return {**HARDWARE, "device_name": name, "cpu_model": name}


def build(tmp_path, models=MODELS, hardware=HW, calibrate=HW):
    out, db = tmp_path / "res", tmp_path / "w.duckdb"
    out.mkdir()
    rng = np.random.default_rng(3)
    for hw in hardware:
        run = make_run()
        for m in models:
            family, params, fpi = MODELS[m]
            info = {"model_id": m, "family": family, "num_parameters": int(params), "flops_per_item": fpi}
            for backend in K:
                for b in BATCHES:
                    meta = make_meta(
                        run,
                        model_id=m,
                        batch_size=b,
                        backend=backend,
                        input_shape="x=1",
                        hardware=fingerprint(hw),
                        model=info,
                    )
                    lat = true_latency(m, hw, backend, b)
                    write_file(out, meta, rng.normal(lat, lat * 1e-3, 30))
    wh = Warehouse(db)
    wh.ingest([out])
    for hw in calibrate:
        peak, bw = HW[hw]
        cal.store(
            wh,
            [
                cal.Peak("numpy", "cpu", "matmul", "fp32", peak, peak * 0.99, peak * 1.01, "flop/s", 10, 512),
                cal.Peak("numpy", "cpu", "triad", "fp64", bw, bw * 0.98, bw * 1.02, "bytes/s", 10, 1 << 24),
            ],
            "cpu",
            cal.Settings(threads=1),
            fingerprint=fingerprint(hw),
        )
    return db


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    return build(tmp_path_factory.mktemp("synthetic"))


def invoke(*args):
    return CliRunner().invoke(main, list(args))


def test_habitat_recovers_the_law_on_measured_scenarios(synthetic):
    gamma = identity.hardware_id(fingerprint("Gamma"))
    r = invoke(
        "predict",
        "--model",
        "m3",
        "--hardware",
        gamma[:8],
        "--backend",
        "slow",
        "--batch-size",
        "4",
        "--db",
        str(synthetic),
        "--format",
        "json",
    )
    assert r.exit_code == 0, r.output
    [a] = json.loads(r.output)
    assert a["method"] == "habitat" and "Alpha x1 threads, Beta x1 threads" in a["detail"]
    truth = true_latency("m3", "Gamma", "slow", 4)
    assert a["latency_s"] == pytest.approx(truth, rel=0.05)
    assert a["throughput_items_s"] == pytest.approx(4 / truth, rel=0.05)
    assert a["low_s"] <= a["latency_s"] <= a["high_s"]


def test_learned_correction_recovers_the_law_on_an_unmeasured_batch(synthetic):
    r = invoke("predict", "--model", "m5", "--hardware", "beta", "--batch-size", "16", "--db", str(synthetic))
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    assert len(lines) == 4  # two backends, each a line and its method
    for i, backend in enumerate(sorted(K)):
        assert lines[2 * i].startswith(f"m5 on Beta x1 threads, {backend} eager fp32, batch 16, x=1: latency ")
        assert lines[2 * i + 1].startswith(
            "  method: roofline + learned correction (ridge regression on 120 "
            "results of 5 models on 3 hardware configuration(s)"
        )
    r = invoke(
        "predict",
        "--model",
        "m5",
        "--hardware",
        "beta",
        "--batch-size",
        "16",
        "--db",
        str(synthetic),
        "--format",
        "json",
    )
    for a in json.loads(r.output):
        assert a["method"] == "learned"
        assert a["latency_s"] == pytest.approx(true_latency("m5", "Beta", a["target"]["backend"], 16), rel=0.05)


def test_evaluate_recovers_the_law_and_beats_the_baselines(synthetic):
    r = invoke("predict", "--evaluate", "--db", str(synthetic), "--format", "json")
    assert r.exit_code == 0, r.output
    table = {(e["grouping"], e["method"]): e for e in json.loads(r.output)}
    assert {g for g, _ in table} == {"leave one model out", "leave one batch size out", "leave one hardware out"}
    for grouping in ("leave one model out", "leave one batch size out", "leave one hardware out"):
        model = table[(grouping, "model")]
        assert model["answered"] == model["results"] == 120
        assert model["mdape_pct"] < 5.0
        assert model["rank_corr"] > 0.95
        assert table[(grouping, "roofline")]["mdape_pct"] > 30.0  # misses the backend's factor
    assert table[("leave one hardware out", "habitat")]["mdape_pct"] < 1.0
    assert table[("leave one model out", "habitat")]["answered"] == 0  # nothing of a held-out model remains
    text = invoke("predict", "--evaluate", "--db", str(synthetic)).output
    assert text.splitlines()[0] == (
        "120 results, 5 models, 3 hardware configurations (Alpha x1 threads; Beta x1 threads; Gamma x1 threads)"
    )


def test_insufficient_data_instead_of_a_number(synthetic, tmp_path):
    r = invoke("predict", "--model", "bert", "--hardware", "alpha", "--db", str(synthetic))
    assert r.exit_code == 2
    assert r.output.startswith("insufficient data: model 'bert' has no valid results in the warehouse")
    # one model, one hardware: no other hardware to scale from, too few models to learn from
    small = build(tmp_path, models={"m1": MODELS["m1"]}, hardware={"Alpha": HW["Alpha"]})
    r = invoke("predict", "--model", "m1", "--hardware", "alpha", "--batch-size", "16", "--db", str(small))
    assert r.exit_code == 2
    assert "batch 16, x=1: insufficient data: the learned correction needs at least 8 results of 2 models" in r.output
    assert "latency" not in r.output
    r = invoke("predict", "--evaluate", "--db", str(small))
    assert r.exit_code == 2 and r.output.startswith("insufficient data: --evaluate needs results of at least 3 models")


def test_uncalibrated_hardware_is_insufficient_data(tmp_path):
    db = build(tmp_path, models={k: MODELS[k] for k in ("m1", "m2")}, hardware={"Alpha": HW["Alpha"]}, calibrate={})
    r = invoke("predict", "--model", "m1", "--hardware", "alpha", "--db", str(db))
    assert r.exit_code == 2
    assert r.output.startswith("insufficient data: hardware 'alpha' has no calibration (`benchdb calibrate` on it)")


def test_evaluation_functions_directly(synthetic):
    with Warehouse(synthetic).reading() as con:
        rows, peaks = pr.load(con)
    assert len(rows) == 120 and {p["kind"] for p in peaks} == {"matmul", "triad"}
    assert {r["flops_method"] for r in rows} == {"model"}
    learned = pr.Learned(rows)
    errs = [abs(learned.predict(r) / r["latency_s"] - 1) for r in rows]
    assert max(errs) < 0.05


def test_a_feature_constant_in_training_does_not_blow_up_a_prediction():
    """Leave-one-batch-size-out with two batch sizes trains on one: log(batch) is constant there
    (its sd float noise, 1e-15). Standardised by that noise, a batch-1 target once predicted 1e176 x
    the truth. The feature drops out and the correction stays within what training saw."""
    rows = [perf_rows.row(f"m{i}", "A", "b", 4, 3.0 * r, r) for i, r in enumerate(np.geomspace(1e-5, 1e-2, 12))]
    learned = pr.Learned(rows)
    assert learned.ok and learned.constant[3]  # log batch
    target = perf_rows.row("m99", "A", "b", 1, 3.0 * 2e-4, 2e-4)
    assert learned.predict(target) == pytest.approx(3.0 * 2e-4, rel=0.05)
    far = perf_rows.row("m99", "A", "b", 1, 0.0, 2e-4, params=1e30)  # features far outside training
    assert 2.9 * 2e-4 <= learned.predict(far) <= 3.1 * 2e-4

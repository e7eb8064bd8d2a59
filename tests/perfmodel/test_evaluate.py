"""benchdb.perfmodel.evaluate: grouped cross-validation of every prediction method, on training rows
whose true law is known (latency = k(backend) x FLOPs / peak FLOP/s). Rows as the warehouse's
training query gives them, built in memory; `benchdb predict --evaluate` on a real warehouse is
tests/perfmodel/test_predict.py."""

from __future__ import annotations

import itertools

import pytest

from benchdb.perfmodel.evaluate import evaluate, format_evaluation, groupings
from benchdb.perfmodel.predict import METHODS

pytestmark = pytest.mark.core

PEAK = {"Alpha": 100e9, "Beta": 50e9, "Gamma": 200e9}
K = {"fast": 1.5, "slow": 2.6}
FLOPS_PER_ITEM = {"m1": 2e9, "m2": 1e8, "m3": 4e9, "m4": 5e8}
BATCHES = (1, 2, 4)


def _rows(hardware=PEAK) -> list[dict]:
    rows = []
    for hw, model, backend, batch in itertools.product(hardware, FLOPS_PER_ITEM, K, BATCHES):
        flops = FLOPS_PER_ITEM[model] * batch
        roofline = flops / PEAK[hw]
        rows.append(
            {
                "model_id": model,
                "family": "text",
                "num_parameters": 1e6,
                "hardware_id": hw,
                "threads": 1,
                "hardware_config": f"{hw} x1 threads",
                "backend": backend,
                "mode": "eager",
                "precision": "fp32",
                "batch_size": batch,
                "input_shape": "x=1",
                "latency_s": K[backend] * roofline,
                "roofline_s": roofline,
                "flops": flops,
                "bytes": None,
                "peak_flops": PEAK[hw],
                "peak_bandwidth": None,
            }
        )
    return rows


def test_every_method_is_cross_validated_per_grouping():
    rows = _rows()
    table = {(e["grouping"], e["method"]): e for e in evaluate(rows)}
    assert set(table) == {(f"leave one {g} out", m) for g in ("model", "batch size", "hardware") for m in METHODS}
    folds = {g: table[(g, "model")]["folds"] for g, _ in table}
    assert folds == {"leave one model out": 4, "leave one batch size out": 3, "leave one hardware out": 3}
    assert all(e["results"] == len(rows) == 72 for e in table.values())
    held_out_hw = table[("leave one hardware out", "habitat")]
    # the same scenario on the other hardware scales by the peak: exact
    assert held_out_hw["answered"] == 72 and held_out_hw["mdape_pct"] < 1.0 and held_out_hw["rank_corr"] > 0.95
    # nothing of a held-out model is measured anywhere: habitat has nothing to scale from
    assert table[("leave one model out", "habitat")]["answered"] == 0
    assert table[("leave one model out", "habitat")]["mdape_pct"] is None
    # the roofline alone misses the backend's factor: 1 - 1/1.5 and 1 - 1/2.6 of every latency
    roofline = table[("leave one batch size out", "roofline")]
    assert roofline["mdape_pct"] == pytest.approx(100 * (1 - 1 / 1.5) / 2 + 100 * (1 - 1 / 2.6) / 2, rel=0.01)


def test_hardware_is_left_out_only_with_three_configurations_and_the_table_says_so():
    two = {k: PEAK[k] for k in ("Alpha", "Beta")}
    rows = _rows(two)
    assert [name for name, _ in groupings(rows)] == ["model", "batch size"]
    table = evaluate(rows)
    assert {e["grouping"] for e in table} == {"leave one model out", "leave one batch size out"}
    text = format_evaluation(table, rows).splitlines()
    assert text[0] == "48 results, 4 models, 2 hardware configurations (Alpha x1 threads; Beta x1 threads)"
    assert text[2] == "leave one hardware out: not run (needs at least 3 hardware configurations)"
    assert len(text) == 3 + len(table) + 1 and text[-1].startswith("MdAPE: median absolute percentage error")
    (habitat_by_model,) = [line for line in text if line.startswith("leave one model out") and "habitat" in line]
    assert habitat_by_model.split()[-4:] == ["0/48", "-", "-", "0"]  # no answer: no error, no correlation

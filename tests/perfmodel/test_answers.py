"""The performance model's answers in their forms for a person (:mod:`benchdb.perfmodel.answers`)."""

from __future__ import annotations

import pytest

from benchdb.perfmodel.answers import Data, Predictions, calibration_lines, evaluation, si

pytestmark = pytest.mark.core


def test_figures_take_an_si_prefix():
    assert [si(v, "FLOP/s") for v in (None, 12.0, 1.5e3, 2.25e9, 3e12)] == [
        "-",
        "12 FLOP/s",
        "1.5 kFLOP/s",
        "2.25 GFLOP/s",
        "3 TFLOP/s",
    ]


def test_no_calibration_says_how_to_make_one():
    assert calibration_lines([], "w.duckdb") == ["no calibrations in w.duckdb; run `benchdb calibrate`"]
    row = {
        "calibrated_at": "2026-11-01 10:00:00.123",
        "hardware_name": "epyc",
        "hardware_id": "h1",
        "threads": 8,
        "backend": "numpy",
        "kind": "matmul",
        "precision": "fp32",
        "value": 1.2e12,
        "unit": "FLOP/s",
    }
    assert calibration_lines([row], "w.duckdb") == [
        "2026-11-01 10:00:00  epyc (h1) threads=8  numpy    matmul fp32  1.2 TFLOP/s"
    ]


def test_evaluation_needs_three_models_and_nothing_answered_is_no_answer():
    rows = [{"model_id": m, "latency_s": 0.1} for m in ("a", "b")] + [{"model_id": "c", "latency_s": None}]
    table, usable = evaluation(Data(rows, []))
    assert table is None and [r["model_id"] for r in usable] == ["a", "b"]
    assert not Predictions(reason="no calibrated hardware matches").answered()

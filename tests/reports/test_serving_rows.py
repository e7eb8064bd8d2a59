"""How the serving sections word a row (benchdb/reports/serving_rows.py): its configuration, workload
and load, intervals, figures in their unit, its window, parallelism and a curve's notes."""

from __future__ import annotations

import pytest

from benchdb.reports import serving_rows as words

pytestmark = pytest.mark.core

POINT = {
    "hardware_name": "h100-sxm",
    "engine": "vllm",
    "engine_version": "0.33.0",
    "precision": "bf16",
    "devices": 2,
    "model_id": "llama",
    "endpoint": "completions",
    "in_tokens": 16,
    "out_tokens": 32,
    "load_kind": "concurrency",
    "concurrency": 4,
    "ttft_p50_ci_low_s": 0.0121,
    "ttft_p50_ci_high_s": 0.0149,
    "figures_window": "steady state",
    "steady_start_s": 0.25,
    "steady_end_s": 5.4,
}


def test_a_load_point_is_worded_by_its_configuration_workload_load_and_window():
    row = words.point_row(POINT)
    assert row["config"] == "h100-sxm x2 / vllm 0.33.0 / bf16"
    assert row["workload"] == "llama · completions · in=16 out=32"
    assert (row["load"], row["ttft_ci"], row["tpot_ci"]) == ("c=4", "12.1 .. 14.9 ms", None)
    assert row["window"] == "steady 0.2-5.4 s" and row["curve"] is None
    rate = {
        **POINT,
        "load_kind": "rate",
        "request_rate": 2.5,
        "arrival": "poisson",
        "devices": 1,
        "engine": None,
        "engine_version": None,
    }
    assert words.point_row(rate)["load"] == "2.5 req/s poisson"
    assert words.config(rate) == "h100-sxm / ? / bf16"
    assert words.window({"steady_state": "none"}) == "whole: no steady state"
    assert words.window({"figures_window": "whole"}) == "whole" and words.window({}) is None
    assert words.curve_place({"curve_point": 3, "curve_points": 8, "curve_region": "low"}) == "3/8 low"


def test_figures_loads_at_an_slo_and_parallelism_in_a_few_words():
    assert words.figure("ttft_p90_s", 0.05) == "50.00 ms" and words.figure("interactivity", 21.34567) == "21.35"
    assert words.figure("ttft_p90_s", None) is None
    assert words.slo_load({"load_at_slo": 3.456, "load_kind": "concurrency"}) == "c=3.46"
    assert words.slo_load({"load_at_slo": 3.456, "load_kind": "rate"}) == "3.46 req/s"
    assert words.parallelism_text('{"tp": 8, "ep": 8}') == "TP8 EP8"
    assert words.parallelism_text({"tp": 4, "ep": 1}) == "TP4"  # EP1 says nothing
    split = {
        "disaggregated": True,
        "prefill": {"workers": 2, "tp": 4, "ep": 4, "dp_attention": True},
        "decode": {"workers": 1, "tp": 8, "ep": 8},
    }
    assert words.parallelism_text(split) == "P 2x TP4 EP4 DPA / D 1x TP8 EP8"
    assert words.parallelism_text("{}") is None and words.parallelism_text(None) is None
    published = words.published_row(
        {**POINT, "speculative_decoding": "mtp", "measured_by": "InferenceX", "parallelism": '{"tp": 8}'}
    )
    assert published["system"] == "h100-sxm / vllm / bf16 +mtp" and published["load"] == "c=4"
    assert published["figures"] == "InferenceX: published summary, no interval"
    assert published["parallelism_text"] == "TP8"


def test_notes_say_which_points_found_a_steady_state_and_what_each_curve_spans():
    rows = [
        {"figures_window": "steady state"},
        {"steady_state": "none", "steady_state_reason": "a level shift"},
        {"figures_window": "whole"},
    ]
    (note,) = words.window_notes(rows)
    assert note.startswith("1 load point of 3 found a steady-state window")
    assert note.endswith("1 load point found none (a level shift): whole window.")
    assert words.window_notes([{"figures_window": "whole"}]) == []
    curve = [
        {
            "workload": "w",
            "config": "c",
            "curve_point": p,
            "curve_points": 4,
            "curve_region": region,
            "concurrency": conc,
            "curve_highest_useful": 64,
        }
        for p, region, conc in ((2, "low", 8), (1, "low", 1), (3, "high", 64))
    ] + [{"workload": "w", "config": "c"}]  # a point of no curve
    assert words.curve_notes(curve) == [
        "Curve (w, c): 3 of its 4 points by region, concurrency low 1, 8; high 64; the probe's highest "
        "useful concurrency 64."
    ]

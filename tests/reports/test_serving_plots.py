"""The serving report's plots (benchdb/reports/serving_plots.py): load points grouped into curves, per
workload a throughput-interactivity plot and a TTFT-load plot, and each workload's fronts."""

from __future__ import annotations

import html
import json

from benchdb.reports.document import Section
from benchdb.reports.serving_plots import curves, frontier_plots, points_plots


def _point(config: str, load: int, kind: str = "concurrency", **extra) -> dict:
    return {
        "workload": "llama · completions · in=16 out=32",
        "config": config,
        "load_kind": kind,
        "load_value": load,
        "load": f"c={load}",
        "interactivity": 100.0 / load,
        "output_throughput_per_device": 50.0 * load,
        "ttft_p50_s": 0.01 * load,
        "ttft_p50_ci_low_s": 0.009 * load,
        "ttft_p50_ci_high_s": 0.011 * load,
        **extra,
    }


def _meta(svg: str) -> tuple[str, list[tuple[str, str]]]:
    title = html.unescape(svg.split('data-title="', 1)[1].split('"', 1)[0])
    axes = json.loads(html.unescape(svg.split('data-axes="', 1)[1].split('"', 1)[0]))
    return title, [(a["x"], a["y"]) for a in axes]


def test_load_points_group_into_curves_by_configuration_and_load_kind():
    rows = [
        _point("A", 4),
        _point("A", 1),
        _point("A", 2, kind="rate"),
        _point("B", 1, measured_by="vllm bench serve", options_id="abcdef123"),
        _point("C", 8, curve_point=1),
    ]
    (head,) = curves(rows)
    got = {label: [p["load_value"] for p in pts] for label, pts in curves(rows)[head].items()}
    assert got == {
        "A": [1, 4],  # in order of load
        "A (open loop)": [2],
        "B [abcdef] (vllm bench serve)": [1],
        "C (--curve)": [8],
    }
    by_kind = curves(rows, ("load_kind",))
    assert sorted(by_kind) == [f"{head} · concurrency", f"{head} · rate"]
    assert "A" in by_kind[f"{head} · rate"]  # the kind is in the heading, not the label


def test_each_workload_gets_a_throughput_and_a_ttft_plot_and_a_front():
    rows = [_point("A", c) for c in (1, 2, 4)] + [_point("B", c) for c in (1, 2)]
    plots = points_plots(Section("serving_points", "t", "d", [], [], rows))
    assert [caption.split(":")[0] for caption, _ in plots] == [
        "Output-token throughput per device against interactivity",
        "TTFT p50 against load",
    ]
    assert _meta(plots[0][1])[1] == [("interactivity (tokens/s per user)", "output throughput (tokens/s per device)")]
    assert _meta(plots[1][1]) == (
        "TTFT vs load: llama · completions · in=16 out=32 · concurrency",
        [("load (concurrent requests)", "TTFT p50 (ms)")],
    )
    front = [dict(r, on_overall_front=r["config"] == "A") for r in rows]
    ((caption, svg),) = frontier_plots(Section("serving_frontier", "t", "d", [], [], front))
    assert caption.endswith("; dashed: overall") and _meta(svg)[0].startswith("Serving frontier: llama")
    assert points_plots(Section("serving_points", "t", "d", [], [], [{"load_value": None}])) == []
    assert frontier_plots(Section("serving_frontier", "t", "d", [], [], [])) == []

"""The HTML report's plots (benchdb/reports/plots.py): every section with rows gets its figures, each
naming its title and axes, and a result's drill-down draws its samples process by process."""

from __future__ import annotations

import html
import json

from support.fixtures_views import build

from benchdb.reports import build as builder
from benchdb.reports import plots
from benchdb.reports.document import Filters
from benchdb.warehouse import Warehouse


def _axes(svg: str) -> list[dict]:
    return json.loads(html.unescape(svg.split('data-axes="', 1)[1].split('"', 1)[0]))


def _title(svg: str) -> str:
    return html.unescape(svg.split('data-title="', 1)[1].split('"', 1)[0])


def test_every_section_with_rows_gets_its_figures(tmp_path):
    """Four sections (drawing is what costs here; tests/reports/test_build.py draws every section's)."""
    db = tmp_path / "r.duckdb"
    build(db)
    kinds = ["matrix", "batch-scaling", "speed-accuracy", "regressions"]
    with Warehouse(db).reading() as con:
        report = builder.build(con, str(db), kinds, Filters(), detail=True)
    assert plots.attach(report) == []
    drawn = {s.name: s.plots for s in report.sections}
    assert drawn["speed_accuracy"] == drawn["regressions"] == []  # no rows: nothing to draw
    (scaling,) = drawn["batch_scaling"]
    assert _title(scaling[1]) == "bert (seq_len=16)"
    assert [(a["x"], a["y"]) for a in _axes(scaling[1])] == [
        ("batch size (items)", "median latency (ms)"),
        ("batch size (items)", "throughput (items/s)"),
    ]
    (matrix,) = drawn["compat_matrix"]
    assert [(a["x_numeric"], a["y_numeric"]) for a in _axes(matrix[1])] == [(False, False)]  # two categories
    assert matrix[0] == "Compatibility heat map: family / model type x hardware / backend"
    for caption, svg in (p for ps in drawn.values() for p in ps):
        assert caption and _title(svg) and all(a["x"] and a["y"] for a in _axes(svg)), caption
    assert all(r["plot"] is None for r in report.drilldown)  # rows written by hand hold no samples


def test_a_drilldown_draws_each_process_with_the_median_and_its_interval():
    r = {
        "model_id": "bert",
        "input_shape": "seq_len=16",
        "batch_size": 1,
        "hardware_name": "Test CPU",
        "backend": "pytorch",
        "mode": "eager",
        "precision": "fp32",
        "metric": "latency_s",
        "unit": "s",
        "samples": [[1e-3, 1.1e-3, 1.2e-3], [1.05e-3, 1.15e-3], []],
        "median": 1.1e-3,
        "median_ci_low": 1.05e-3,
        "median_ci_high": 1.15e-3,
    }
    svg = plots.drilldown(r)
    assert _title(svg) == "bert · seq_len=16 · bs=1 · Test CPU / pytorch / eager / fp32"
    assert [(a["title"].split("\n")[0], a["x"], a["y"]) for a in _axes(svg)] == [
        ("Distribution (red: median, 95% CI)", "latency_s (ms)", "samples (count)"),
        ("ECDF", "latency_s (ms)", "fraction of samples (0-1)"),
    ]
    assert plots.drilldown({**r, "samples": [[], []]}) is None

"""The systems picture of ``report --per``: one mark per result, batch sizes never added together,
same-named systems labelled apart, labels whole (wrapped, never cut)."""

from __future__ import annotations

import json

from conftest import need_module

from benchdb.reports import system_plots
from benchdb.reports.optimal_rows import unique_system_labels

need_module("matplotlib", "benchdb[plots]")


def _row(submitter: str, batch: int, value: float, published: bool = True, name: str = "NVIDIA DGX B200") -> dict:
    return {
        "model_id": "llama2-70b",
        "mode": "Offline",
        "input_shape": "scenario=Offline",
        "batch_size": batch,
        "system_name": name,
        "devices": 8,
        "accelerator": "NVIDIA B200-SXM-180GB",
        "precision": "fp4",
        "options": json.dumps({"submitter": submitter}),
        "result_id": f"{value:08.0f}-{submitter}",
        "summary_only": published,
        "normalised": value,
        "normalised_unit": "tokens/s per accelerator",
        "normalised_ci_low": None if published else value * 0.98,
        "normalised_ci_high": None if published else value * 1.02,
    }


def test_one_mark_per_result_and_labels_that_differ():
    rows = [
        _row("NVIDIA", 1, 12840.0),
        _row("Google", 1, 9808.0),
        _row("Lambda", 1, 12500.0, name="NVIDIA DGX B200 (8x B200‑SXM‑180GB, TensorRT)"),  # non-breaking hyphens
        _row("Lambda", 1, 12400.0, name="NVIDIA DGX B200 (8x B200-SXM-180GB, TensorRT)"),
        _row("benchdb", 1, 7000.0, published=False, name="a very long system name " * 4),
        _row("NVIDIA", 4, 30000.0),
    ]
    for r, label in zip(rows, unique_system_labels(rows), strict=True):
        r["system_label"] = label
    groups = system_plots.groups(rows)
    assert sorted(k[3] for k in groups) == [1, 4]  # batch sizes are separate charts, never summed
    one = groups[("llama2-70b", "Offline", "scenario=Offline", 1)]
    fig = system_plots.draw(one, "t")
    ax = fig.axes[0]
    marks = [ln for ln in ax.lines if len(ln.get_xdata()) == 1 and ln.get_marker() in ("o", "D")]
    assert sorted(x for ln in marks for x in ln.get_xdata()) == sorted(r["normalised"] for r in one)
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert len(labels) == len(one)
    flat = [" ".join(lb.split()).replace("‑", "-") for lb in labels]
    assert len(set(flat)) == len(flat), flat  # never two marks that read the same
    assert not any(lb.endswith("…") for lb in labels)  # wrapped, never cut
    assert max(len(line) for lb in labels for line in lb.split("\n")) <= system_plots.WRAP
    # every label lies inside the saved picture (bbox_inches="tight" keeps it whole)
    fig.canvas.draw()
    r = fig.canvas.get_renderer()
    tight = fig.get_tightbbox(r)
    for t in ax.get_yticklabels():
        b = t.get_window_extent(r).transformed(fig.dpi_scale_trans.inverted())
        assert b.x0 >= tight.x0 - 1e-6 and b.x1 <= tight.x1 + 1e-6

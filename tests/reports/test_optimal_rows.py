"""How the optimal-hardware section words its rows (benchdb.reports.optimal_rows): system labels that
tell same-named systems apart, and no longer than they need to be."""

from __future__ import annotations

import json

import pytest


@pytest.mark.core
def test_same_named_systems_get_labels_that_differ():
    from benchdb.reports.optimal_rows import unique_system_labels

    def row(submitter, precision="fp4", system="B200x8", result="r"):
        return {
            "model_id": "m",
            "mode": "Offline",
            "input_shape": "s",
            "batch_size": 1,
            "system_name": "NVIDIA DGX B200",
            "devices": 8,
            "accelerator": "B200",
            "precision": precision,
            "options": json.dumps({"submitter": submitter, "system": system}),
            "result_id": result,
        }

    rows = [row("NVIDIA"), row("Google"), row("NVIDIA", "fp8"), row("Lambda", result="a1"), row("Lambda", result="b2")]
    labels = unique_system_labels(rows)
    assert len(set(labels)) == len(labels), labels
    assert labels[1] == "NVIDIA DGX B200 (8x B200) [Google]"
    assert labels[0] == "NVIDIA DGX B200 (8x B200) [NVIDIA, fp4]"
    # a label is only as long as it needs: alone in its group, a system keeps its name
    assert unique_system_labels([row("NVIDIA")]) == ["NVIDIA DGX B200 (8x B200)"]

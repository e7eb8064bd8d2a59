"""A model's badge (benchdb.hub.badges), from a real warehouse: the fastest latest valid result per
hardware kind at the model's smallest batch, as shields.io endpoint JSON and as a self-contained SVG
whose text from the data is escaped."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from conftest import make_meta, make_run, write_file

from benchdb.hub.badges import Badge, badges, slug
from benchdb.warehouse import Warehouse

pytestmark = pytest.mark.core


def test_the_badge_names_the_fastest_backend_at_the_smallest_batch_per_model(tmp_path):
    run = make_run()
    for model, backend, bs, ms in (
        ("org/fast", "numpy", 2, 3.0),
        ("org/fast", "onnxruntime", 2, 1.0),
        ("org/fast", "onnxruntime", 4, 0.5),  # a larger batch: not the badge's
        ("org/slow", "numpy", 1, 20.0),
        ("org/slow", "pytorch", 1, 10.0),
    ):
        values = np.random.default_rng(bs).normal(ms * 1e-3, 1e-6, 40)
        write_file(tmp_path / "res", make_meta(run, model_id=model, backend=backend, batch_size=bs), values)
    db = tmp_path / "w.duckdb"
    Warehouse(db).ingest([tmp_path / "res"])
    with Warehouse(db).reading() as con:
        got = {b.model_id: b.message for b in badges(con, None, None)}
        assert {b.model_id for b in badges(con, ["org/slow"], None)} == {"org/slow"}
        assert badges(con, None, ["no such hardware"]) == []
    assert got == {"org/fast": "best CPU: onnxruntime 1.000 ms (batch 2)", "org/slow": "best CPU: pytorch 10.00 ms"}


def test_a_badge_is_shields_json_and_an_svg_that_escapes_its_text():
    badge = Badge("org/<b>&x", "org/<b>&x", "best CPU: numpy 1 ms")
    assert slug(badge.model_id) == "org--b--x" and slug("tiny:bert") == "tiny--bert" and slug("///") == "model"
    doc = json.loads(badge.endpoint_json())
    assert doc == {"schemaVersion": 1, "label": "org/<b>&x", "message": "best CPU: numpy 1 ms", "color": "blue"}
    svg = badge.svg()
    assert "<b>" not in svg and "&amp;x" in svg
    root = ET.fromstring(svg)
    assert root.tag == "{http://www.w3.org/2000/svg}svg" and "org/<b>&x: best CPU: numpy 1 ms" in "".join(
        root.itertext()
    )
    assert int(root.get("width")) > int(ET.fromstring(Badge("m", "m", "x").svg()).get("width"))

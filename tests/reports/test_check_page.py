"""`benchdb check --format html`'s page (benchdb/reports/check_page.py): the gate's verdicts drawn, one
forest plot of every series' change with its interval, and each series' two distributions."""

from __future__ import annotations

import html
import json

import numpy as np
import pytest
from conftest import make_meta, make_run, write_file

from benchdb.reports import check_page
from benchdb.warehouse import Warehouse


def _axes(svg: str) -> list[dict]:
    return json.loads(html.unescape(svg.split('data-axes="', 1)[1].split('"', 1)[0]))


@pytest.fixture(scope="module")
def checked(tmp_path_factory):
    """Two runs of two series, each in 3 interleaved processes, the two sides of one A/B run (their
    tags: the gate knows their run-to-run noise): batch size 1 is 30 % slower in the second run, batch
    size 2 the same. (warehouse, the gate's result)"""
    root = tmp_path_factory.mktemp("compare")
    rng = np.random.default_rng(11)
    for day, slower, side in ((1, 1.0, "base"), (2, 1.3, "cand")):
        run = make_run(started_at=f"2026-11-0{day}T10:00:00+00:00", tags=["ab-0a1b2c3d", f"ab-0a1b2c3d-{side}"])
        for bs, factor in ((1, slower), (2, 1.0)):
            values = rng.normal(1e-3 * bs * factor, 1e-6, 60)
            write_file(root / "res" / str(day), make_meta(run, batch_size=bs), values, repeats=3)
    db = root / "w.duckdb"
    Warehouse(db).ingest([root / "res"])
    return db, Warehouse(db).check("latest~1", "latest")


def test_the_page_draws_the_gates_verdicts_a_forest_and_each_series(checked):
    db, result = checked
    assert sorted(c.verdict for c in result.comparisons) == ["regressed", "unchanged"]
    with Warehouse(db).reading() as con:
        page = check_page.html(con, result)
    assert "<h1>benchdb check: FAIL</h1>" in page and 'class="verdict-regressed"' in page
    assert page.count("<svg") == 3  # the forest and the two series' distributions
    assert 'id="series-0"' in page and 'id="series-1"' in page
    assert "shaded: the threshold band" in html.unescape(page)


def test_the_forest_and_the_distributions_name_their_axes_in_the_checks_unit(checked):
    _, result = checked
    forest = check_page.forest(result)
    assert _axes(forest)[0]["x"] == "change of the median latency_s, candidate vs baseline (%)"
    regressed = next(c for c in result.comparisons if c.verdict == "regressed")
    base = [[1e-3, 1.1e-3], [1.05e-3]]
    cand = [[1.3e-3, 1.35e-3]]
    svg = check_page.distributions(regressed, base, cand, "s", "latency_s")
    assert [(a["x"], a["y"]) for a in _axes(svg)] == [
        ("latency_s (ms)", "samples (count)"),
        ("latency_s (ms)", "fraction of samples (0-1)"),
    ]
    assert check_page.distributions(regressed, [], [], "s", "latency_s") is None

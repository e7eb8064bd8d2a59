"""The sections of `benchdb report --serving` (benchdb/reports/serving_sections.py), built on a real
warehouse holding one imported vLLM load point (its requests) and 40 published InferenceX rows, and
the --slo they answer."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import cli, import_and_ingest

from benchdb.errors import BenchdbError
from benchdb.reports.document import Filters
from benchdb.reports.serving_sections import describe_slo, parse_slo, sections
from benchdb.warehouse import Warehouse

pytestmark = pytest.mark.core

FIX = Path(__file__).parents[1] / "fixtures" / "interop"


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("serving-sections")
    vllm = FIX / "serving" / "vllm" / "c2_detailed.json"
    db = import_and_ingest(root, "vllm-serve", vllm, extra=("--hardware", "h100-sxm"))
    assert cli("import", "inferencex", FIX / "inferencex" / "benchmarks.json", "--out", root / "ix").exit_code == 0
    assert cli("ingest", root / "ix", "--db", db).exit_code == 0
    return db


def _sections(db: Path, f: Filters) -> dict:
    with Warehouse(db).reading() as con:
        return {s.name: s for s in sections(con, f)}


def test_an_slo_bounds_ttft_at_p90_tpot_at_p50_or_interactivity():
    slo = parse_slo("ttft:500ms, tpot:50ms")
    assert slo == {"max_ttft_p90_s": 0.5, "max_tpot_p50_s": 0.05}
    assert describe_slo(slo) == "TTFT p90 <= 500 ms and TPOT p50 <= 50 ms"
    inter = parse_slo("interactivity:20 tok/s")
    assert inter == {"min_interactivity": 20.0} and describe_slo(inter) == "interactivity >= 20 tokens/s per user"
    assert parse_slo(None) == {} and parse_slo("") == {}
    for text, says in (
        ("interactivity:20,interactivity:30", "interactivity is bounded twice"),
        ("interactivity:0", "interactivity is a positive number of tokens/s per user"),
        ("interactivity:fast", "interactivity is a positive number"),
    ):
        with pytest.raises(BenchdbError, match=says):
            parse_slo(text)


def test_the_sections_are_the_points_the_fronts_and_what_was_imported_or_published(db):
    got = _sections(db, Filters())
    assert list(got) == ["serving_points", "serving_frontier", "serving_sources", "serving_published_frontier"]
    (point,) = got["serving_points"].rows
    assert (point["config"], point["load"]) == ("h100-sxm / vllm / bf16", "c=2")
    assert point["workload"] == "stub · completions · in=16 out=32" and point["window"].startswith("steady ")
    assert got["serving_points"].notes[-1].startswith("Give `--slo ttft:500ms,tpot:50ms`")
    published = got["serving_published_frontier"]
    assert len(published.rows) == 37 and published.notes[0].startswith("37 of 40 published points on 6 systems")
    assert all(r["figures"] == "InferenceX: published summary, no interval" for r in published.rows)


def test_an_slo_adds_its_answer_and_a_cost_target_its_costs(db):
    f = Filters(slo=parse_slo("ttft:500ms,tpot:50ms"), prices={"h100-sxm": 2.0}, cost_at=60)
    got = _sections(db, f)
    assert list(got)[2:4] == ["serving_at_slo", "serving_cost"]
    (best,) = got["serving_at_slo"].rows
    assert (best["hardware_name"], best["engine"], best["load_at_slo"]) == ("h100-sxm", "vllm", 2.0)
    assert not any(n.startswith("Give `--slo") for n in got["serving_points"].notes)


def test_no_point_under_the_filters_is_said_once(db):
    got = _sections(db, Filters(models=("nosuch",)))
    assert list(got) == ["serving_points", "serving_frontier"]
    assert got["serving_points"].rows == [] and got["serving_frontier"].empty == got["serving_points"].empty
    assert got["serving_points"].empty.startswith("No serving results to report")

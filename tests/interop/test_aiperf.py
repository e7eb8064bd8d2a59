"""AIPerf's exports (benchdb/interop/aiperf.py), the real NVIDIA AIPerf 0.13.0's records and summary
against the stub (tests/fixtures/interop/serving/aiperf): the records are one load point timed again by
benchdb's definitions, AIPerf's own summary kept beside them. The import end to end is in
tests/interop/test_serving.py and tests/interop/test_serving_turns.py."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest

from benchdb.interop import aiperf

pytestmark = pytest.mark.core

FOLDER = Path(__file__).parents[1] / "fixtures" / "interop" / "serving" / "aiperf" / "c2"


def test_the_records_are_one_load_point_timed_by_benchdbs_definitions():
    recs = [json.loads(line) for line in (FOLDER / "profile_export.jsonl").read_text().splitlines() if line.strip()]
    metrics = [r["metrics"] for r in recs if "error" not in r]
    (item,) = aiperf.parse(FOLDER / "profile_export.jsonl")
    assert (item.mode, item.batch_size, item.input_shape) == ("completions", 2, "in=16,out=32,concurrency=2")
    ttft = [m["time_to_first_token"]["value"] / 1e3 for m in metrics]
    gaps = [g / 1e3 for m in metrics for g in m["inter_chunk_latency"]["value"]]
    assert sorted(item.values("ttft_s")) == pytest.approx(sorted(ttft), rel=1e-9)
    assert statistics.median(item.values("itl_chunk_s")) == pytest.approx(statistics.median(gaps), rel=1e-9)
    summary = json.loads((FOLDER / "profile_export_aiperf.json").read_text())
    theirs = {(m, s): v for m, _, s, v in item.statistics}
    assert theirs[("inter_token_latency", "p50")] == summary["inter_token_latency"]["p50"]
    assert item.definitions["itl_chunk_s"]["same_definition"] is True
    assert item.definitions["tpot_s"]["same_definition"] is False  # AIPerf re-tokenizes the output


def test_a_folder_gives_its_records_once_and_a_lone_summary_is_the_run(tmp_path):
    found = sorted(FOLDER.iterdir())
    assert FOLDER / "profile_export_aiperf.json" in found
    assert aiperf.select(found) == [FOLDER / "profile_export.jsonl"]
    lone = tmp_path / "profile_export_aiperf.json"
    assert aiperf.select([lone]) == [lone]

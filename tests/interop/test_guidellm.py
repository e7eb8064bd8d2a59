"""GuideLLM's benchmarks file (benchdb/interop/guidellm.py), the real GuideLLM 0.8.1's output against the
stub (tests/fixtures/interop/serving/guidellm): each benchmark one load point whose requests benchdb
times again by its own definitions, GuideLLM's own summary kept beside them. The import end to end, with
failed requests and beside benchdb's own runs, is in tests/interop/test_serving.py."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest

from benchdb.interop import guidellm

pytestmark = pytest.mark.core

SRC = Path(__file__).parents[1] / "fixtures" / "interop" / "serving" / "guidellm" / "guidellm_c2.json"


def test_each_successful_request_is_timed_again_and_the_tools_figures_are_kept():
    bench = json.loads(SRC.read_text())["benchmarks"][0]
    ok = bench["requests"]["successful"]
    (item,) = guidellm.parse(SRC)
    assert (item.backend, item.mode, item.batch_size) == ("openai", "completions", 2)
    assert item.input_shape == "in=16,out=32,concurrency=2" and item.tool_version == "0.8.1"
    timings = [r["info"]["timings"] for r in ok]
    ttft = [t["first_token_iteration"] - t["request_start"] for t in timings]
    e2e = [t["request_end"] - t["request_start"] for t in timings]
    assert sorted(item.values("ttft_s")) == pytest.approx(sorted(ttft), rel=1e-9)
    assert statistics.median(item.values("e2e_s")) == pytest.approx(statistics.median(e2e), rel=1e-9)
    assert "itl_chunk_s" not in {r[0] for r in item.rows}  # GuideLLM keeps no per-chunk times
    theirs = {(m, s): v for m, _, s, v in item.statistics}
    median_tpot = bench["metrics"]["time_per_output_token_ms"]["successful"]["median"]
    assert theirs[("time_per_output_token_ms", "median")] == median_tpot
    assert item.definitions["tpot_s"]["same_definition"] is False  # its TPOT counts the first token
    assert item.hardware["kind"] == "unknown"  # named by no file: never this machine

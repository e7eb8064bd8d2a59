"""`vllm bench serve`'s result file (benchdb/interop/vllm_serve.py), in vLLM 0.33.0's layout against the
stub (tests/fixtures/interop/serving/vllm): per-request lists timed again by benchdb's definitions,
vLLM's summary and --metadata kept. The import end to end is in tests/interop/test_serving.py."""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest

from benchdb.interop import vllm_serve

pytestmark = pytest.mark.core

FOLDER = Path(__file__).parents[1] / "fixtures" / "interop" / "serving" / "vllm"


def test_the_per_request_lists_are_one_load_point_and_metadata_engine_options():
    doc = json.loads((FOLDER / "c2_detailed.json").read_text())
    (item,) = vllm_serve.parse(FOLDER / "c2_detailed.json")
    assert (item.backend, item.precision, item.batch_size) == ("vllm", "bf16", 2)
    assert item.options["tensor_parallel_size"] == 1  # --metadata pairs become engine options
    ok = [i for i, e in enumerate(doc["errors"]) if not e]
    assert sorted(item.values("ttft_s")) == pytest.approx(sorted(doc["ttfts"][i] for i in ok), rel=1e-9)
    gaps = [g for i in ok for g in doc["itls"][i]]
    assert statistics.median(item.values("itl_chunk_s")) == pytest.approx(statistics.median(gaps), rel=1e-9)
    theirs = {(m, s): v for m, _, s, v in item.statistics}
    assert theirs[("ttft_ms", "median")] == doc["median_ttft_ms"]


def test_a_summary_without_requests_is_summary_only():
    doc = json.loads((FOLDER / "rate20_summary.json").read_text())
    (item,) = vllm_serve.parse(FOLDER / "rate20_summary.json")
    assert item.summary_only and item.rows == [] and item.input_shape.endswith("rate=poisson:20")
    assert {(m, s): v for m, _, s, v in item.statistics}[("ttft_ms", "p99.9")] == doc["p99.9_ttft_ms"]


def test_a_folder_leaves_out_the_pytorch_format_copy_vllm_writes_beside_each_result(tmp_path):
    result, copy = tmp_path / "vllm-qps2.json", tmp_path / "vllm-qps2.pytorch.json"
    assert vllm_serve.select([result, copy]) == [result]

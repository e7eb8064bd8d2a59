"""SGLang's bench_serving JSON lines (benchdb/interop/sglang_serve.py), in SGLang 0.5.23's layout against
the stub (tests/fixtures/interop/serving/sglang): a line with per-request lists is a load point timed
again by benchdb's definitions, one without them is summary-only. The import end to end is in
tests/interop/test_serving.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchdb.interop import sglang_serve

pytestmark = pytest.mark.core

FOLDER = Path(__file__).parents[1] / "fixtures" / "interop" / "serving" / "sglang"


def test_a_detailed_line_is_timed_again_and_a_summary_line_is_summary_only():
    (detailed,) = sglang_serve.parse(FOLDER / "c2_details.jsonl")
    doc = json.loads((FOLDER / "c2_details.jsonl").read_text().splitlines()[0])
    ok = [i for i, e in enumerate(doc["errors"]) if not e]
    assert sorted(detailed.values("ttft_s")) == pytest.approx(sorted(doc["ttfts"][i] for i in ok), rel=1e-9)
    assert (detailed.backend, detailed.batch_size, detailed.summary_only) == ("sglang", 2, False)
    assert detailed.definitions["tpot_s"]["same_definition"] is False
    lines = sglang_serve.parse(FOLDER / "runs.jsonl")
    assert [(i.input_shape.rsplit(",", 1)[1], i.summary_only) for i in lines] == [
        ("concurrency=4", False),
        ("rate=poisson:20", True),
    ]
    assert lines[1].rows == [] and lines[1].statistics


def test_a_folder_picks_the_result_lines_not_other_json_lines(tmp_path):
    prompts = tmp_path / "prompts.jsonl"
    prompts.write_text('{"prompt": "hello", "output_len": 8}\n')
    found = [*sorted(FOLDER.glob("*.jsonl")), prompts]
    assert sglang_serve.select(found) == found[:-1]

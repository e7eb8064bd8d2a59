"""`benchdb import llm-d` (benchdb/interop/llmd.py): llm-d Benchmark Report v0.1 files
(tests/fixtures/interop/llmd); the export to them is tests/interop/test_llmd_export.py's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from conftest import benchdb_cmd, import_and_ingest, one_error_line
from conftest import db_rows as rows

from benchdb.interop import llmd

pytestmark = pytest.mark.core

FIX = Path(__file__).parents[1] / "fixtures" / "interop" / "llmd"
EXAMPLE = FIX / "br_v0_1_example.yaml"
GUIDELLM = FIX / "benchmark_report,_guidellm_c2.json.yaml"


def _figures(db) -> dict[tuple[str, str], dict[str, float]]:
    got: dict[tuple[str, str], dict[str, float]] = {}
    for r in rows(
        db,
        "SELECT r.model_id, r.input_shape, s.metric, s.statistic, s.value "
        "FROM results r JOIN source_statistics s USING (result_id)",
    ):
        got.setdefault((r["model_id"], r["input_shape"]), {})[f"{r['metric']}:{r['statistic']}"] = r["value"]
    return got


def test_a_disaggregated_report_keeps_its_instances_and_its_figures_in_seconds(tmp_path):
    db = import_and_ingest(tmp_path, "llm-d", EXAMPLE, GUIDELLM)
    doc = yaml.safe_load(EXAMPLE.read_text())
    lat = doc["metrics"]["latency"]
    scale = {"ms": 1e-3, "s": 1.0, "ms/token": 1e-3, "s/token": 1.0}
    (example,) = [v for (m, _), v in _figures(db).items() if m == "deepseek-ai/DeepSeek-R1-0528"]
    ttft, tpot = lat["time_to_first_token"], lat["time_per_output_token"]
    assert example["ttft_s:median"] == pytest.approx(ttft["p50"] * scale[ttft["units"]])
    assert example["tpot_s:p90"] == pytest.approx(tpot["p90"] * scale[tpot["units"]])
    gpus = sum(a["count"] for a in doc["scenario"]["host"]["accelerator"])
    assert gpus == 17
    total = doc["metrics"]["throughput"]["total_tokens_per_sec"]
    assert example["total_throughput_per_gpu:value"] == pytest.approx(total / gpus)
    (r,) = rows(
        db,
        "SELECT accelerators, precision, input_shape, json_extract(options, '$.parallelism') AS p FROM results "
        "WHERE model_id = 'deepseek-ai/DeepSeek-R1-0528'",
    )

    p = json.loads(r["p"])
    assert (r["accelerators"], r["precision"]) == (17, "fp16") and r["input_shape"].endswith(",concurrency=15")
    assert p["disaggregated"] and [(i["type"], i["count"], i["parallelism"]["tp"]) for i in p["instances"]] == [
        ("prefill", 1, 1),
        ("decode", 8, 8),
        ("decode", 8, 8),
    ]
    assert p["instances"][1]["engine_args"]["--data-parallel-start-rank"] == 1
    # llm-d's converter of a GuideLLM report: ms and ms/token, no host: the accelerator is unknown
    (guidellm,) = [v for (m, _), v in _figures(db).items() if m == "e2e-mock-model"]
    native = yaml.safe_load(GUIDELLM.read_text())["metrics"]["latency"]["time_to_first_token"]
    assert native["units"] == "ms" and guidellm["ttft_s:mean"] == pytest.approx(native["mean"] / 1e3)


@pytest.mark.parametrize(
    ("change", "why"),
    [
        (lambda d: d.update(version="0.2"), "not an llm-d Benchmark Report v0.1"),
        (lambda d: d["scenario"]["host"]["type"].pop(), "differ in length"),
        (
            lambda d: d["metrics"]["latency"]["time_to_first_token"].update(units="minutes"),
            "time_to_first_token.units is 'minutes'",
        ),
    ],
)
def test_a_report_that_is_not_one_is_refused_in_one_line(tmp_path, change, why):
    doc = yaml.safe_load(EXAMPLE.read_text())
    change(doc)
    bad = tmp_path / "benchmark_report,_bad.yaml"
    bad.write_text(yaml.safe_dump(doc))
    r = benchdb_cmd("import", "llm-d", str(bad), "--out", str(tmp_path / "out"))
    line = one_error_line(r)
    assert why in line and str(bad) in line


def test_a_report_is_one_summary_only_point_with_its_figures_in_seconds():
    doc = yaml.safe_load(EXAMPLE.read_text())
    (item,) = llmd.parse(EXAMPLE)
    assert (item.model_id, item.precision, item.summary_only) == ("deepseek-ai/DeepSeek-R1-0528", "fp16", True)
    assert item.input_shape.endswith(",concurrency=15") and item.rows == []
    stats = {(m, s): v for m, _, s, v in item.statistics}
    ttft = doc["metrics"]["latency"]["time_to_first_token"]
    assert stats[("ttft_s", "median")] == pytest.approx(ttft["p50"] * {"ms": 1e-3, "s": 1.0}[ttft["units"]])
    assert item.options["parallelism"]["disaggregated"] is True

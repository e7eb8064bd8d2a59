"""`benchdb import mlperf-endpoints`: an MLPerf Endpoints submission's curve of load points, over the
submission checker's own test submission (tests/fixtures/interop/mlperf_endpoints/README.md), with the
rules' regions, tokens/s per user and tokens/s per kW reproduced from their published definitions."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from conftest import benchdb_cmd, cli, import_and_ingest, one_error_line
from conftest import db_rows as rows

from benchdb.interop import Declared
from benchdb.interop.mlperf import endpoints
from benchdb.interop.writer import SourceError

pytestmark = pytest.mark.core

FIX = Path(__file__).parents[1] / "fixtures" / "interop" / "mlperf_endpoints"
CURVE = FIX / "sub_a" / "results" / "sys_mi355x_8gpu" / "gpt-oss-120b"


def _points(db) -> dict[int, dict]:
    got: dict[int, dict] = {}
    for r in rows(
        db,
        "SELECT r.batch_size AS concurrency, json_extract_string(r.settings, '$.region') AS region, "
        "json_extract_string(r.settings, '$.offline') AS offline, s.metric, s.value "
        "FROM results r JOIN source_statistics s USING (result_id) WHERE s.statistic IN ('value', 'p90')",
    ):
        point = got.setdefault(r["concurrency"], {"region": r["region"], "offline": r["offline"]})
        point[r["metric"]] = r["value"]
    return got


def test_a_curve_is_imported_with_its_regions_and_the_rules_figures(tmp_path):
    db = import_and_ingest(tmp_path, "mlperf-endpoints", FIX)
    got = _points(db)
    assert {c: (p["region"], p["offline"]) for c, p in got.items()} == {
        4: ("low_latency", None),  # C_min = 4, C_max = 2048: low 5-17, medium 18-165, high 166-2048
        16: ("low_concurrency", None),
        1024: ("high_concurrency", None),
        2048: ("high_concurrency", "elected"),
    }
    stored = json.loads((CURVE / "r1024" / "result_summary.json").read_text())
    r1024 = got[1024]
    assert r1024["output_throughput"] == pytest.approx(stored["system_tps"], rel=1e-6)  # 9,734.93
    assert r1024["tps_per_user"] == pytest.approx(stored["tps_per_user"], rel=1e-5)  # 1000 / 5.5 ms
    assert r1024["ttft_s"] == pytest.approx(97.8218742186)
    assert r1024["system_tps_per_kw"] == pytest.approx(662.24, abs=0.005)  # 9,734.93 / 14.7 kW (air)
    assert r1024["output_throughput_per_gpu"] == pytest.approx(stored["system_tps"] / 8, rel=1e-6)
    published = rows(db, "SELECT concurrency, hardware_name FROM serving_published_points ORDER BY concurrency")
    assert [(p["concurrency"], p["hardware_name"]) for p in published] == [
        (c, "sys_mi355x_8gpu") for c in (4, 16, 1024, 2048)
    ]


def _copy(tmp_path: Path) -> Path:
    tree = tmp_path / "sub"
    shutil.copytree(FIX, tree)
    return tree / "sub_a" / "results" / "sys_mi355x_8gpu" / "gpt-oss-120b"


def test_a_head_node_without_accelerators_counts_none(tmp_path):
    curve = _copy(tmp_path)
    for desc in curve.glob("r*/system_desc.json"):
        doc = json.loads(desc.read_text())
        doc["node_types"].append({"system_node_ensemble_id": 1, "number_of_nodes": 1, "host_processors_per_node": 2})
        desc.write_text(json.dumps(doc))
    db = import_and_ingest(tmp_path, "mlperf-endpoints", curve.parents[2])
    assert {r["accelerators"] for r in rows(db, "SELECT accelerators FROM results")} == {8}


def test_a_point_without_tpot_fails_alone(tmp_path):
    curve = _copy(tmp_path)
    doc = json.loads((curve / "r16" / "result_summary.json").read_text())
    del doc["tpot"]
    (curve / "r16" / "result_summary.json").write_text(json.dumps(doc))
    r = benchdb_cmd("import", "mlperf-endpoints", str(curve.parents[2]), "--out", str(tmp_path / "out"))
    line = one_error_line(r)
    assert str(curve / "r16") in line and "no tpot p90 (tps_per_user = 1000 / tpot_p90_ms)" in line
    assert "imported 3 result(s)" in r.stdout


def test_a_region_or_figure_the_rules_do_not_give_is_a_disagreement(tmp_path):
    curve = _copy(tmp_path)
    point = yaml.safe_load((curve / "r16" / "point.yaml").read_text())
    point["region"] = "high_concurrency"
    (curve / "r16" / "point.yaml").write_text(yaml.safe_dump(point))
    doc = json.loads((curve / "r4" / "result_summary.json").read_text())
    doc["system_tps"] *= 1.05
    (curve / "r4" / "result_summary.json").write_text(json.dumps(doc))
    out, db = tmp_path / "out", tmp_path / "w.duckdb"
    r = cli("import", "mlperf-endpoints", curve.parents[2], "--out", out)
    assert r.exit_code == 0 and "2 disagreement(s)" in r.output, r.output
    assert "point.yaml: region 'high_concurrency', the rules' regions give 'low_concurrency'" in r.output
    assert cli("ingest", out, "--db", db).exit_code == 0
    got = rows(db, "SELECT source_format, disagreement FROM source_disagreements ORDER BY disagreement")
    assert [g["source_format"] for g in got] == ["mlperf-endpoints"] * 2
    assert got[1]["disagreement"].startswith("result_summary.json: system_tps: file 814.449")


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("- 16\n- 32\n", "point.yaml is not a mapping of settings"),
        ("concurrency: many\n", "names no whole concurrency"),
    ],
)
def test_a_point_yaml_that_is_not_a_point_fails_that_point_in_one_line(tmp_path, text, why):
    curve = _copy(tmp_path)
    (curve / "r16" / "point.yaml").write_text(text)
    r = benchdb_cmd("import", "mlperf-endpoints", str(curve.parents[2]), "--out", str(tmp_path / "out"))
    line = one_error_line(r)
    assert why in line and str(curve / "r16") in line
    assert "imported 3 result(s)" in r.stdout  # the curve's other points stand


def test_a_folder_without_points_is_one_line(tmp_path):
    r = benchdb_cmd("import", "mlperf-endpoints", str(tmp_path), "--out", str(tmp_path / "out"))
    assert "no MLPerf Endpoints points (r<N>/point.yaml) under" in one_error_line(r, code=r.returncode)
    assert r.returncode != 0


def _accuracy(overall: float, normalized: float | str) -> dict:
    """accuracy_results.json as the endpoints client's BFCL scorer writes it (a breakdown with
    subset_scores and the gate metrics)."""
    breakdown = {"subset_scores": {"simple": overall}, "overall_accuracy": overall}
    breakdown["normalized_single_turn_score"] = normalized
    return {"accuracy_scores": [{"dataset_name": "bfcl_v4", "score": overall, "breakdown": breakdown}]}


def test_the_checkers_accuracy_gate_invalidates_a_point_below_its_target(tmp_path):
    curve = _copy(tmp_path)
    for point in curve.glob("r*/point.yaml"):
        point.write_text(point.read_text().replace("model_name: gpt-oss-120b", "model_name: qwen3.6-27b"))
    (curve / "r4" / "accuracy_results.json").write_text(
        json.dumps(_accuracy(85.0, "86.10"))
    )  # a string, as older files
    (curve / "r16" / "accuracy").mkdir()
    (curve / "r16" / "accuracy" / "accuracy_results.json").write_text(json.dumps(_accuracy(80.0, 88.0)))
    r = benchdb_cmd("import", "mlperf-endpoints", str(curve.parents[2]), "--out", str(tmp_path / "out"))
    assert r.returncode == 0, r.stderr
    assert "r16: accuracy gate failed: overall_accuracy 80.00 < 83.64 (= 0.97 x 86.23)" in r.stdout
    db = tmp_path / "bench.duckdb"
    assert cli("ingest", tmp_path / "out", "--db", db).exit_code == 0
    got = {
        g["batch_size"]: g
        for g in rows(
            db,
            "SELECT batch_size, validity, validity_reasons, json_extract_string(settings, '$.accuracy_gate') AS gate "
            "FROM results",
        )
    }
    assert got[16]["validity"] == "invalid" and "overall_accuracy 80.00 < 83.64" in str(got[16]["validity_reasons"])
    assert got[4]["validity"] == "valid"
    assert got[4]["gate"] == (
        "passed: overall_accuracy 85.00 >= 83.64 (= 0.97 x 86.23); "
        "normalized_single_turn_score 86.10 >= 85.32 (= 0.97 x 87.96)"
    )
    assert got[1024]["gate"] is None  # no accuracy file: nothing to gate
    front = rows(db, "SELECT concurrency FROM serving_published_points ORDER BY concurrency")
    assert [f["concurrency"] for f in front] == [4, 1024, 2048]  # the failed point is on no curve


def test_a_model_the_checker_does_not_gate_keeps_its_scores_ungated(tmp_path):
    curve = _copy(tmp_path)
    (curve / "r4" / "accuracy_results.json").write_text(json.dumps(_accuracy(12.0, 12.0)))
    db = import_and_ingest(tmp_path, "mlperf-endpoints", curve.parents[2])
    got = _points(db)
    assert got[4]["accuracy:bfcl_v4"] == 12.0
    assert rows(db, "SELECT count(*) AS n FROM results WHERE validity <> 'valid'") == [{"n": 0}]


def test_cost_at_reads_tokens_per_megawatt_from_the_rules_provisioned_power(tmp_path):
    db = import_and_ingest(tmp_path, "mlperf-endpoints", FIX)
    (at,) = rows(db, "SELECT 1 / tpot_p50_s AS interactivity FROM serving_published_points WHERE concurrency = 1024")
    r = cli("report", "--serving", "--cost-at", str(at["interactivity"]), "--format", "json", "--db", db)
    assert r.exit_code == 0, r.output
    (row,) = json.loads(r.output)["serving_cost"]
    assert row["how"] == "measured" and row["power_from"] == "provisioned"
    assert row["facility_w_per_gpu"] == pytest.approx(14_700 / 8)  # 14.7 kW air-cooled, over 8 GPUs
    # the four points share one TPOT (the checker's test submission), so the front at it is its
    # highest throughput, r2048: the rules' own system_tps_per_kw of that point, per MW
    rule = _points(db)[2048]["system_tps_per_kw"] * 1000
    assert row["output_tokens_per_s_per_mw"] == pytest.approx(rule, rel=1e-6)
    assert row["tokens_per_s_per_mw"] is None  # the points publish output tokens only


def test_discover_finds_each_point_folder_and_import_paths_writes_one_curve(tmp_path):
    """The module's own two steps: every r<concurrency> folder holding a point.yaml, and the curve's
    points written as contract files, with the summary line's detail."""
    points = endpoints.discover([str(FIX)])
    assert sorted(int(p.name[1:]) for p in points) == [4, 16, 1024, 2048]
    assert endpoints.discover([str(CURVE / "r16" / "point.yaml")]) == [CURVE / "r16"]
    with pytest.raises(SourceError, match="no such file or folder"):
        endpoints.discover([str(tmp_path / "none")])
    summary = endpoints.import_paths([str(FIX)], tmp_path / "out", Declared())
    assert len(summary.written) == 4 and summary.failed == [] and [n for _, n in summary.imported] == [1, 1, 1, 1]
    assert summary.detail == "4 point(s) on 1 curve(s); 0 disagreement(s)"

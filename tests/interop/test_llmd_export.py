"""`benchdb export --format llm-d` (benchdb/interop/llmd_export.py): each measured serving load point as
an llm-d Benchmark Report v0.1 that llm-d's own schema accepts and `benchdb import llm-d` reads back."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from conftest import benchdb_cmd, import_and_ingest
from conftest import db_rows as rows

from benchdb.interop import llmd_export

pytestmark = pytest.mark.core

FIX = Path(__file__).parents[1] / "fixtures" / "interop" / "llmd"
EXAMPLE = FIX / "br_v0_1_example.yaml"


def test_export_writes_reports_llm_d_s_own_schema_accepts_and_they_import_back(tmp_path):
    """AIPerf load points imported with their requests, exported as llm-d reports: each passes llm-d's
    pydantic model (BenchmarkReportV01), and importing them again gives the same TTFT mean."""
    import sys

    sys.path.insert(0, str(FIX))
    from llmd_schema.schema_v0_1 import BenchmarkReportV01

    aiperf = Path(__file__).parents[1] / "fixtures" / "interop" / "serving" / "aiperf"
    db = import_and_ingest(tmp_path, "aiperf", aiperf, extra=("--engine", "vllm", "--hardware", "h100-sxm"))
    out = tmp_path / "llmd"
    r = benchdb_cmd("export", "--format", "llm-d", "--db", str(db), "--out", str(out))
    assert r.returncode == 0, r.stderr
    files = sorted(out.glob("benchmark_report,_benchdb-*.yaml"))
    points = rows(db, "SELECT result_id FROM serving_points")
    assert len(files) == len(points) >= 2 and f"as {len(files)} llm-d benchmark report(s)" in r.stdout + r.stderr
    for f in files:
        doc = yaml.safe_load(f.read_text())
        BenchmarkReportV01(**doc)  # llm-d's own validation: units, required fields, list lengths
        assert doc["scenario"]["load"]["name"] == "aiperf" and doc["scenario"]["host"]["accelerator"][0]["model"]
    db2 = import_and_ingest(tmp_path / "back", "llm-d", out)
    mean = {
        r["result_id"]: r["mean"]
        for r in rows(
            db,
            "SELECT result_id, avg(value) AS mean FROM samples WHERE metric = 'ttft_s' "
            "AND result_id IN (SELECT result_id FROM serving_points) GROUP BY ALL",
        )
    }
    back = rows(
        db2,
        "SELECT s.value FROM results r JOIN source_statistics s USING (result_id) "
        "WHERE s.metric = 'ttft_s' AND s.statistic = 'mean'",
    )
    assert sorted(b["value"] for b in back) == pytest.approx(sorted(mean.values()))


def test_export_with_no_measured_serving_point_is_one_line(tmp_path):
    db = import_and_ingest(tmp_path, "llm-d", EXAMPLE)  # a published summary: no requests to give
    r = benchdb_cmd("export", "--format", "llm-d", "--db", str(db), "--out", str(tmp_path / "llmd"))
    assert r.returncode != 0 and "Traceback" not in r.stderr
    (line,) = [ln for ln in r.stderr.splitlines() if ln.startswith("benchdb: error:")]
    assert "no measured serving load points" in line and not (tmp_path / "llmd").exists()


def test_a_point_without_its_requests_gives_no_report_and_one_with_them_names_its_generator():
    row = {
        "result_id": "r1",
        "series_id": "s1",
        "input_shape": "in=16,out=32,concurrency=2",
        "hardware_name": "h100-sxm",
        "devices": 2,
        "engine": "vllm",
        "engine_version": "0.33.0",
        "model_id": "m",
        "precision": "bf16",
        "load_kind": "concurrency",
        "concurrency": 2,
        "measured_by": "aiperf 0.13.0",
        "window_s": 5.0,
        "n_requests": 40,
        "errors": 1,
        "output_throughput": 120.0,
        "distributions": [
            {"metric": "ttft_s", "mean": 0.05, "p50": 0.049, "p99": float("nan")},
            {"metric": "tpot_s", "mean": 0.002},
            {"metric": "output_tokens", "mean": 32, "max": 32},
        ],
    }
    doc = llmd_export.report(row)
    assert doc["scenario"]["load"] == {"name": "aiperf", "type": "concurrency", "args": {"concurrency": 2}}
    assert doc["scenario"]["host"]["accelerator"] == [{"model": "h100-sxm", "count": 2}]
    assert doc["metrics"]["latency"]["time_to_first_token"] == {"units": "s", "mean": 0.05, "p50": 0.049}
    assert doc["metrics"]["latency"]["time_per_output_token"] == {"units": "s/token", "mean": 0.002}
    assert doc["metrics"]["requests"] == {
        "total": 40,
        "failures": 1,
        "output_length": {"units": "count", "mean": 32.0, "max": 32.0},
    }
    assert doc["metrics"]["throughput"] == {"output_tokens_per_sec": 120.0}
    ours = llmd_export.report({**row, "measured_by": None})
    assert ours["scenario"]["load"]["name"] == "nop" and "not in the schema's list" in str(ours["scenario"]["load"])
    assert llmd_export.report({**row, "distributions": [{"metric": "tpot_s", "mean": 0.002}]}) is None

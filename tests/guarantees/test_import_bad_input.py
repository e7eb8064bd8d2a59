"""Bad input to `benchdb import`: one line naming the file and the problem, nothing written from
that file, the other files still imported, exit code 1."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import benchdb_cmd

from benchdb.schema import contract

pytestmark = pytest.mark.core

FIX = Path(__file__).parents[1] / "fixtures" / "interop"


def run_import(fmt, *paths, out):
    return benchdb_cmd("import", fmt, *map(str, paths), "--out", str(out))


def written(out: Path) -> list[Path]:
    return sorted(out.rglob("*.parquet")) if out.exists() else []


def errors(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("benchdb: error:")]


def test_truncated_json_is_named_and_the_good_file_still_imports(tmp_path):
    good = FIX / "pytest_benchmark" / "pytest_benchmark.json"
    bad = tmp_path / "truncated.json"
    bad.write_text(good.read_text()[:5000])
    out = tmp_path / "out"
    r = run_import("pytest-benchmark", bad, good, out=out)
    assert r.returncode == 1
    (line,) = errors(r.stderr)
    assert str(bad) in line and "not valid JSON" in line and "truncated" in line
    assert "Traceback" not in r.stderr
    files = written(out)
    assert len(files) == 3  # the good file's three benchmarks, nothing from the bad one
    assert all(contract.read_footer(f).scenario["source"]["file"] == str(good) for f in files)
    assert "1 file(s) failed" in r.stdout


def test_a_file_of_another_format_is_refused_by_name(tmp_path):
    out = tmp_path / "out"
    other = next((FIX / "transformers").glob("*.json"))
    r = run_import("pytest-benchmark", other, out=out)
    assert r.returncode == 1
    (line,) = errors(r.stderr)
    assert str(other) in line and "not a pytest-benchmark JSON file" in line
    assert written(out) == []
    r = run_import("optimum-benchmark", FIX / "pytest_benchmark" / "pytest_benchmark.json", out=out)
    assert r.returncode == 1 and "benchmark_report.json without benchmark_config.json" in r.stderr
    assert written(out) == []


def test_loadgen_log_missing_its_result_line(tmp_path):
    broken = tmp_path / "logs" / "broken"
    shutil.copytree(FIX / "mlperf" / "singlestream", broken)
    summary = broken / "mlperf_log_summary.txt"
    summary.write_text(
        "".join(line for line in summary.read_text().splitlines(keepends=True) if not line.startswith("Result is"))
    )
    shutil.copytree(FIX / "mlperf" / "offline", tmp_path / "logs" / "offline")
    out = tmp_path / "out"
    r = run_import("mlperf", tmp_path / "logs", out=out)
    assert r.returncode == 1
    (line,) = errors(r.stderr)
    assert str(summary) in line and "no 'Result is : VALID|INVALID' line" in line
    files = written(out)
    assert len(files) == 1 and contract.read_footer(files[0]).scenario["mode"] == "Offline"


def test_one_bad_record_rejects_its_whole_file(tmp_path):
    lines = (FIX / "hud" / "executorch_v3.jsonl").read_text().splitlines()
    rec = json.loads(lines[1])
    rec["metric"]["benchmark_values"] = ["fast"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join([lines[0], json.dumps(rec)] + lines[2:]) + "\n")
    out = tmp_path / "out"
    r = run_import("hud-v3", bad, out=out)
    assert r.returncode == 1
    (line,) = errors(r.stderr)
    assert str(bad) in line and "non-numeric value 'fast'" in line
    assert written(out) == []


def test_unknown_format_and_missing_path(tmp_path):
    r = run_import("csv", tmp_path, out=tmp_path / "out")
    assert r.returncode == 2 and r.stderr.startswith("benchdb: error: invalid value for 'FORMAT': 'csv' is not one of")
    r = run_import("hud-v3", tmp_path / "nope.json", out=tmp_path / "out")
    assert r.returncode == 2
    assert errors(r.stderr) == [f"benchdb: error: {tmp_path / 'nope.json'}: no such file or folder"]

"""benchdb report: every report in every format through the CLI, escaping, and a real browser."""

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from benchdb.cli import main
from conftest import REPO, make_meta, make_run, write_file
from fixtures_views import build

HOSTILE = "<script>alert('pwned')</script>"
ARTIFACTS = Path(os.environ.get("BENCHDB_ARTIFACTS", REPO / "test-artifacts"))


def invoke(*args, env=None):
    return CliRunner().invoke(main, list(args), env=env)


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("reports") / "r.duckdb"
    build(path)
    return path


@pytest.mark.parametrize("flag,section", [("--optimal-hardware", "optimal_hardware"), ("--matrix", "compat_matrix"),
                                          ("--speedup", "speedup"), ("--scaling", "batch_scaling"),
                                          ("--memory", "memory"), ("--trends", "trends")])
@pytest.mark.parametrize("fmt", ["md", "json", "csv", "html"])
def test_each_report_in_each_format(db, flag, section, fmt):
    r = invoke("report", flag, "--format", fmt, "--db", str(db))
    assert r.exit_code == 0, r.output
    out = r.stdout
    if fmt == "json":
        rows = json.loads(out)
        assert isinstance(rows, list) and rows
    elif fmt == "csv":
        header = out.splitlines()[0].split(",")
        assert len(out.splitlines()) > 1 and "model_id" in header or "family" in header
    elif fmt == "md":
        assert out.startswith("# benchdb report\n")
        assert "\n| " in out
    else:
        assert out.startswith("<!DOCTYPE html>") and f'id="{section}"' in out


def test_optimal_hardware_markdown_content(db):
    r = invoke("report", "--optimal-hardware", "--db", str(db))
    lines = r.stdout.splitlines()
    assert lines[2].startswith("9 results (7 valid) of 2 models on 2 hardware in 3 runs;")
    assert ("| bert | 1 | seq_len=16 | Test GPU | pytorch | eager | fp32 | 500.0 | Test CPU / onnxruntime / eager "
            "/ fp32 | 200.0 | +150.0% | 3 |") in lines
    assert "| llama | 1 | seq_len=16 | Test CPU | pytorch | eager | fp32 | 10 |  |  |  | 1 |" in lines


def test_json_and_csv_use_view_columns(db):
    rows = json.loads(invoke("report", "--matrix", "--format", "json", "--db", str(db)).stdout)
    assert list(rows[0]) == ["family", "model_type", "hardware_id", "hardware_name", "hardware_kind", "backend",
                             "results", "ok", "failed", "oom", "timeout", "unsupported", "mismatch", "skipped",
                             "relative_throughput", "rating", "rating_label", "top_error"]
    csv = invoke("report", "--speedup", "--format", "csv", "--db", str(db)).stdout.splitlines()
    assert csv[0] == ("model_id,batch_size,input_shape,hardware_name,hardware_id,backend,device,mode,precision,"
                      "median_s,baseline_hardware,baseline_median_s,speedup,result_id,baseline_result_id")
    assert len(csv) == 7
    both = json.loads(invoke("report", "--all", "--format", "json", "--db", str(db)).stdout)
    assert list(both) == ["optimal_hardware", "compat_matrix", "speedup", "batch_scaling", "memory", "trends",
                          "regressions"]


def test_constraints_and_filters(db, tmp_path):
    r = invoke("report", "--optimal-hardware", "--max-latency-ms", "3", "--format", "json", "--db", str(db))
    assert [(x["model_id"], x["batch_size"], x["best_hardware"]) for x in json.loads(r.stdout)] == [
        ("bert", 1, "Test GPU")]
    prices = tmp_path / "prices.yaml"
    prices.write_text("Test GPU: 3.6\nTest CPU: 0.36\n")
    r = invoke("report", "--optimal-hardware", "--objective", "cost", "--prices", str(prices), "--model", "bert",
               "--format", "json", "--db", str(db))
    got = json.loads(r.stdout)
    assert [(x["batch_size"], x["best_backend"], round(x["best_value"], 6)) for x in got] == [
        (1, "onnxruntime", 0.5), (4, "pytorch", 0.5)]
    r = invoke("report", "--scaling", "--hardware", "Test GPU", "--format", "json", "--db", str(db))
    assert {x["hardware_name"] for x in json.loads(r.stdout)} == {"Test GPU"}


def test_report_errors_are_one_line(db, tmp_path):
    r = invoke("report", "--db", str(db))
    assert r.exit_code == 2 and r.stderr.strip() == (
        "benchdb: error: choose a report: --optimal-hardware, --matrix, --speedup, --scaling, --memory, "
        "--trends, --regressions or --all")
    r = invoke("report", "--optimal-hardware", "--model", "nope", "--db", str(db))
    assert r.exit_code == 1
    assert r.stderr.strip().startswith("benchdb: error: nothing to report: no results match models nope;")
    r = invoke("report", "--optimal-hardware", "--objective", "cost", "--db", str(db))
    assert r.exit_code == 2 and "--objective cost needs --prices FILE" in r.stderr
    r = invoke("report", "--all", "--format", "csv", "--db", str(db))
    assert r.exit_code == 2 and "CSV holds one table" in r.stderr
    bad = tmp_path / "p.yaml"
    bad.write_text("- just\n- a list\n")
    r = invoke("report", "--optimal-hardware", "--objective", "cost", "--prices", str(bad), "--db", str(db))
    assert r.exit_code == 2 and "must map hardware names to USD per hour" in r.stderr


def test_empty_warehouse_is_a_clear_message(tmp_path):
    from benchdb.schema import database

    path = tmp_path / "empty.duckdb"
    database.open_writable(path)[0].close()
    r = invoke("report", "--all", "--db", str(path), "--out", str(tmp_path / "r.html"))
    assert r.exit_code == 1
    assert r.stderr.strip() == (f"benchdb: error: nothing to report: {path} holds no results yet; "
                                "load some with `benchdb ingest RESULTS_DIR`")
    assert not (tmp_path / "r.html").exists()


@pytest.fixture
def hostile_db(tmp_path):
    res = tmp_path / "res"
    run = make_run()
    for bs in (1, 2):
        write_file(res, make_meta(run, model_id=HOSTILE, batch_size=bs), name=f"h{bs}.parquet")
    path = tmp_path / "h.duckdb"
    assert invoke("ingest", str(res), "--db", str(path)).exit_code == 0
    return path


def test_hostile_model_name_is_escaped(hostile_db, tmp_path):
    out = tmp_path / "r.html"
    r = invoke("report", "--all", "--db", str(hostile_db), "--out", str(out))
    assert r.exit_code == 0, r.output
    page = out.read_text()
    assert HOSTILE not in page
    assert "&lt;script&gt;alert(&#39;pwned&#39;)&lt;/script&gt;" in page
    md = invoke("report", "--optimal-hardware", "--db", str(hostile_db)).stdout
    assert HOSTILE not in md and "&lt;script&gt;" in md


def test_github_summary_appends(db, tmp_path):
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    r = invoke("report", "--matrix", "--github-summary", "--format", "json", "--db", str(db),
               env={"GITHUB_STEP_SUMMARY": str(summary)})
    assert r.exit_code == 0
    text = summary.read_text()
    assert text.startswith("earlier step\n# benchdb report") and "## Compatibility matrix" in text
    r = invoke("report", "--matrix", "--github-summary", "--db", str(db), env={"GITHUB_STEP_SUMMARY": ""})
    assert r.exit_code == 2 and "$GITHUB_STEP_SUMMARY is not set" in r.stderr


def test_html_report_is_self_contained_with_plots(db, tmp_path):
    out = tmp_path / "r.html"
    assert invoke("report", "--all", "--db", str(db), "--out", str(out)).exit_code == 0
    page = out.read_text()
    assert not re.search(r"""(src|href)=["']https?://""", page)          # nothing from the network
    assert page.count("<svg") >= 6                                       # one plot per section at least
    assert page.count('<table class="sortable"') == 6


def _chromium():
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(not _chromium() and os.environ.get("CI") != "true",
                    reason="chromium is not installed (CI installs Debian's chromium)")
def test_html_report_in_headless_chromium(db, tmp_path):
    out = tmp_path / "report.html"
    assert invoke("report", "--all", "--db", str(db), "--out", str(out)).exit_code == 0
    browser = _chromium()
    assert browser, "CI must provide chromium"
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--v=0"]
    dom = subprocess.run([browser, *flags, "--dump-dom", out.as_uri()], capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    html = dom.stdout
    assert html.count('data-sortable="ready"') == 6          # the sorting script ran on every table
    for title in ("Optimal hardware by throughput", "Compatibility matrix", "Speedup against CPU PyTorch eager",
                  "Batch scaling", "Peak memory", "Trends"):
        assert f">{title}</h2>" in html
    assert html.count("<svg") >= 6
    console = [line for line in dom.stderr.splitlines() if ":CONSOLE" in line]
    assert console == [], console
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / "report.png"
    subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", f"--screenshot={shot}",
                    "--window-size=1400,3000", out.as_uri()], capture_output=True, timeout=120)
    assert shot.exists() and shot.stat().st_size > 10_000

"""benchdb report: every report in every format through the CLI, escaping, and a real browser."""

import json
import os
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import REPO, make_meta, make_run, need_chromium, write_file
from support.fixtures_views import build

from benchdb.cli import main
from benchdb.schema import contract

HOSTILE = "<script>alert('pwned')</script>"
ARTIFACTS = Path(os.environ.get("BENCHDB_ARTIFACTS", REPO / "test-artifacts"))


def invoke(*args, env=None):
    return CliRunner().invoke(main, list(args), env=env)


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("reports") / "r.duckdb"
    build(path)
    return path


@pytest.mark.parametrize(
    "flag,section",
    [
        ("--optimal-hardware", "optimal_hardware"),
        ("--matrix", "compat_matrix"),
        ("--speedup", "speedup"),
        ("--batch-scaling", "batch_scaling"),
        ("--scaling", "batch_scaling"),
        ("--memory", "memory"),
        ("--trends", "trends"),
    ],
)
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
    r = invoke("report", "--optimal-hardware", "--wide", "--db", str(db))
    lines = r.stdout.splitlines()
    assert lines[2].startswith(
        "9 latest timing results (one per series; 6 valid) of 2 models on 2 hardware, from 13 results in 3 runs "
        "(2 verification checks);"
    )
    # one process each, one run: +150 % is measured, but whether it holds on the next run is not
    # the answer first: model, batch, best, its figure, margin, verdict; then what stands behind it
    assert lines[lines.index("## Optimal hardware by throughput") + 4].startswith(
        "| model | batch | best hardware / backend / mode / precision | best items/s | margin [95 % CI] | verdict |"
    )
    assert (
        "| bert | 1 | Test GPU / pytorch / eager / fp32 | 500.0 | +150.0% [noise unknown] | unconfirmed "
        "| seq_len=16 | 1+1 | 1+1 | Test CPU / onnxruntime / eager / fp32 | 200.0 | 3 | 2.000 ms |  |  | 10 "
        "| 900.0 MiB | 0.4 | 3 | 4 |"
    ) in lines
    # one column, one unit: 10 items/s beside 500 and 1,000 keeps the column's decimals
    assert (
        "| llama | 1 | Test CPU / pytorch / eager / fp32 | 10.0 |  | only one | seq_len=16 | 1 | 1 |  |  | 1 | "
        "100.000 ms |  |  | 10 |  |  | 8 |  |"
    ) in lines
    assert "> Of 2 winners with a runner-up: 0 win, 0 tie, 2 unconfirmed." in lines
    # what the sections left out, and why; what ran but is invalid is listed, flagged
    assert (
        "> Left out: 3 of 9 latest timing results that are not a valid timing (2 invalid, 1 oom); the 2 that ran "
        'are listed, flagged, under "Measured but left out".'
    ) in lines
    assert "## Measured but left out" in lines


def test_json_and_csv_use_view_columns(db):
    rows = json.loads(invoke("report", "--matrix", "--format", "json", "--db", str(db)).stdout)
    assert list(rows[0]) == [
        "family",
        "model_type",
        "hardware_id",
        "hardware_name",
        "hardware_kind",
        "backend",
        "results",
        "ok",
        "failed",
        "oom",
        "timeout",
        "unsupported",
        "mismatch",
        "skipped",
        "invalid",
        "relative_throughput",
        "rating",
        "rating_label",
        "top_error",
    ]
    csv = invoke("report", "--speedup", "--format", "csv", "--db", str(db)).stdout.splitlines()
    assert csv[0] == (
        "model_id,batch_size,input_shape,hardware_name,hardware_id,backend,device,mode,precision,"
        "median_s,baseline_hardware,baseline_median_s,speedup,result_id,baseline_result_id,"
        "speedup_ci_low,speedup_ci_high,speedup_basis,speedup_verdict"
    )
    assert len(csv) == 8
    both = json.loads(invoke("report", "--all", "--format", "json", "--db", str(db)).stdout)
    assert list(both) == [
        "optimal_hardware",
        "compat_matrix",
        "speedup",
        "speed_accuracy",
        "batch_scaling",
        "memory",
        "trends",
        "regressions",
    ]


def test_constraints_and_filters(db, tmp_path):
    r = invoke("report", "--optimal-hardware", "--max-latency-ms", "3", "--format", "json", "--db", str(db))
    assert [(x["model_id"], x["batch_size"], x["best_hardware"]) for x in json.loads(r.stdout)] == [
        ("bert", 1, "Test GPU")
    ]
    prices = tmp_path / "prices.yaml"
    prices.write_text("Test GPU: 3.6\nTest CPU: 0.36\n")
    r = invoke(
        "report",
        "--optimal-hardware",
        "--objective",
        "cost",
        "--prices",
        str(prices),
        "--model",
        "bert",
        "--format",
        "json",
        "--db",
        str(db),
    )
    got = json.loads(r.stdout)
    assert [(x["batch_size"], x["best_backend"], round(x["best_value"], 6)) for x in got] == [
        (1, "onnxruntime", 0.5),
        (4, "pytorch", 0.5),
    ]
    r = invoke("report", "--batch-scaling", "--hardware", "Test GPU", "--format", "json", "--db", str(db))
    assert {x["hardware_name"] for x in json.loads(r.stdout)} == {"Test GPU"}


def test_report_errors_are_one_line(db, tmp_path):
    r = invoke("report", "--db", str(db))
    assert r.exit_code == 2 and r.stderr.strip() == (
        "benchdb: error: choose a report: --optimal-hardware, --matrix, --speedup, --speed-accuracy, "
        "--batch-scaling, --memory, --trends, --regressions, --serving, --sources or --all"
    )
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
    from benchdb.store import database

    path = tmp_path / "empty.duckdb"
    database.open_writable(path)[0].close()
    r = invoke("report", "--all", "--db", str(path), "--out", str(tmp_path / "r.html"))
    assert r.exit_code == 1
    assert r.stderr.strip() == (
        f"benchdb: error: nothing to report: {path} holds no results yet; load some with `benchdb ingest RESULTS_DIR`"
    )
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
    # Markdown escapes only what would start markup (a tag, an entity): never run as HTML where rendered
    assert HOSTILE not in md and "&lt;script>" in md


def test_github_summary_appends(db, tmp_path):
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    r = invoke(
        "report",
        "--matrix",
        "--github-summary",
        "--format",
        "json",
        "--db",
        str(db),
        env={"GITHUB_STEP_SUMMARY": str(summary)},
    )
    assert r.exit_code == 0
    text = summary.read_text()
    assert text.startswith("earlier step\n# benchdb report") and "## Compatibility matrix" in text
    r = invoke("report", "--matrix", "--github-summary", "--db", str(db), env={"GITHUB_STEP_SUMMARY": ""})
    assert r.exit_code == 2 and "$GITHUB_STEP_SUMMARY is not set" in r.stderr


def test_html_report_is_self_contained_with_plots(db, tmp_path):
    out = tmp_path / "r.html"
    assert invoke("report", "--all", "--db", str(db), "--out", str(out)).exit_code == 0
    page = out.read_text()
    assert not re.search(r"""(src|href)=["']https?://""", page)  # nothing from the network
    assert page.count("<svg") >= 6  # one plot per section at least
    # the answer on top, the 6 sections, the invalid results (flagged) and the environment: every table sortable
    assert page.count("<table") == page.count('<table class="sortable') == 9
    assert 'id="environment"' in page and 'id="left-out"' in page and 'id="results"' in page


def test_html_report_in_headless_chromium(db, tmp_path):
    out = tmp_path / "report.html"
    assert invoke("report", "--all", "--db", str(db), "--out", str(out)).exit_code == 0
    browser = need_chromium()
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--v=0"]
    dom = subprocess.run([browser, *flags, "--dump-dom", out.as_uri()], capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    html = dom.stdout
    assert html.count('data-sortable="ready"') == html.count("<table") == 9  # the sorting script ran on every table
    for title in (
        "Optimal hardware by throughput",
        "Compatibility matrix",
        "Speedup against CPU PyTorch eager",
        "Batch scaling",
        "Peak memory",
        "Trends",
    ):
        assert f">{title}</h2>" in html
    assert html.count("<svg") >= 6
    console = [line for line in dom.stderr.splitlines() if ":CONSOLE" in line]
    assert console == [], console
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / "report.png"
    subprocess.run(
        [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            f"--screenshot={shot}",
            "--window-size=1400,3000",
            out.as_uri(),
        ],
        capture_output=True,
        timeout=120,
    )
    assert shot.exists() and shot.stat().st_size > 10_000


# ----------------------------------------------------------------------------- fail closed
def _steady_history(folder, n_runs, model="m1", step_at=None, step=0.0):
    """One numpy run per day of one scenario, ~10 ms, shifted by `step` from run `step_at` on."""
    rng = np.random.default_rng(5)
    runs = []
    for i in range(n_runs):
        run = make_run(started_at=f"2026-10-{i + 1:02d}T10:00:00+00:00", git_commit=f"{i:02d}" + "b" * 38)
        runs.append(run)
        scale = 1 + (step if step_at is not None and i >= step_at else 0.0)
        write_file(
            folder,
            make_meta(run, model_id=model),
            rng.lognormal(np.log(0.01 * scale), 0.01, 60),
            name=f"{model}-{i}.parquet",
        )
    return runs


def _verify_only_file(folder, run, rel_err=3e-7, status="ok", model="m1", name="verify.parquet"):
    """A --verify-only result as the graph backends write it: primary metric max_rel_err (a ratio),
    timing_method none, extra.verify_only true, status ok/mismatch, validity from the status."""
    meta = make_meta(run, model_id=model, status=status, validity="valid" if status == "ok" else "invalid")
    meta["scenario"].update(
        primary_metric="max_rel_err",
        timing_method="none",
        extra={"verify_only": True, "tolerance": 1e-3, "max_abs_err": rel_err * 10, "max_rel_err": rel_err},
    )
    rows = [
        ("max_abs_err", "abs", 0, 0.0, rel_err * 10),
        ("max_rel_err", "ratio", 0, 0.0, rel_err),
        ("load_s", "s", 0, 0.0, 0.5),
    ]
    return contract.write_scenario(folder / name, meta, contract.samples_table(meta, rows))


def test_regressions_without_open_change_points_is_good_news(db):
    """Valid data, no open change point: exit 0 and a section that says how much was searched."""
    r = invoke("report", "--regressions", "--db", str(db))
    assert r.exit_code == 0, r.output
    assert r.stderr == ""
    assert (
        "_No open change points in 7 series (3 runs); 0 of them have the 6 valid runs a change point needs "
        "(3 on each side of it)._"
    ) in " ".join(r.stdout.splitlines())
    r = invoke("report", "--regressions", "--format", "json", "--db", str(db))
    assert r.exit_code == 0 and json.loads(r.stdout) == []
    r = invoke("report", "--regressions", "--format", "html", "--db", str(db))
    assert r.exit_code == 0 and '<p class="empty">No open change points in 7 series (3 runs);' in r.stdout
    # a filter that matches nothing is still an error
    r = invoke("report", "--regressions", "--model", "nope", "--db", str(db))
    assert r.exit_code == 1
    assert r.stderr.startswith("benchdb: error: nothing to report: no results match models nope;")


def test_regressions_on_a_real_history_exit_0_until_a_shift(tmp_path):
    res, path = tmp_path / "res", tmp_path / "w.duckdb"
    _steady_history(res, 6)
    assert invoke("ingest", str(res), "--db", str(path)).exit_code == 0
    r = invoke("report", "--regressions", "--db", str(path))
    assert r.exit_code == 0, r.output
    assert "_No open change points in 1 series (6 runs)._" in r.stdout.splitlines()
    # a real shift is listed; once acknowledged, the report is good news again, and says so
    shifted = tmp_path / "shifted"
    _steady_history(shifted, 12, model="m2", step_at=6, step=0.10)
    assert invoke("ingest", str(shifted), "--db", str(path)).exit_code == 0
    rows = json.loads(invoke("report", "--regressions", "--format", "json", "--db", str(path)).stdout)
    assert [(x["model_id"], round(x["change"], 2)) for x in rows] == [("m2", 0.1)]
    assert invoke("ack", rows[0]["change_id"], "--note", "expected", "--db", str(path)).exit_code == 0
    r = invoke("report", "--regressions", "--db", str(path))
    assert r.exit_code == 0, r.output
    assert "_No open change points in 2 series (18 runs); 1 acknowledged change point._" in r.stdout.splitlines()
    r = invoke("report", "--regressions", "--model", "m1", "--db", str(path))
    assert r.exit_code == 0 and "_No open change points in 1 series (6 runs)._" in r.stdout.splitlines()


def test_energy_without_power_samples_says_what_is_missing(db, tmp_path):
    r = invoke("report", "--optimal-hardware", "--objective", "energy", "--hardware", "Test CPU", "--db", str(db))
    assert r.exit_code == 1 and r.stdout == ""
    assert r.stderr.strip() == (
        "benchdb: error: nothing to report: --objective energy: no result has power samples (power_w) among "
        "the 4 latest valid timing results matching hardware Test CPU; energy needs NVIDIA telemetry (pynvml, "
        "recorded by the pytorch backend on CUDA devices); use --objective throughput, latency or cost"
    )
    # where power samples exist, energy ranks them (and says the others were left out)
    r = invoke("report", "--optimal-hardware", "--objective", "energy", "--format", "json", "--db", str(db))
    assert r.exit_code == 0
    assert [(x["model_id"], x["best_hardware"]) for x in json.loads(r.stdout)] == [("bert", "Test GPU")]
    # a real warehouse of CPU runs: no power samples at all
    res, path = tmp_path / "res", tmp_path / "w.duckdb"
    _steady_history(res, 2)
    assert invoke("ingest", str(res), "--db", str(path)).exit_code == 0
    r = invoke("report", "--all", "--objective", "energy", "--db", str(path))
    assert r.exit_code == 1
    assert r.stderr.startswith(
        "benchdb: error: nothing to report: --objective energy: no result has power "
        "samples (power_w) among the 1 latest valid timing result; energy needs NVIDIA"
    )
    assert "no valid results" not in r.stderr


def test_cost_without_a_matching_price_says_what_is_missing(db, tmp_path):
    prices = tmp_path / "prices.yaml"
    prices.write_text("Some Other GPU: 2.0\n")
    r = invoke("report", "--optimal-hardware", "--objective", "cost", "--prices", str(prices), "--db", str(db))
    assert r.exit_code == 1 and r.stdout == ""
    assert r.stderr.strip() == (
        "benchdb: error: nothing to report: --objective cost: no price matches the hardware of the 7 latest "
        "valid timing results (Test CPU, Test GPU); --prices gives prices for: Some Other GPU (names must match "
        "hardware names exactly)"
    )
    prices.write_text("Test GPU: 3.6\n")
    r = invoke("report", "--optimal-hardware", "--objective", "cost", "--prices", str(prices), "--db", str(db))
    assert r.exit_code == 0
    assert "> no price for: Test CPU (left out of the cost ranking)" in r.stdout.splitlines()


def test_verify_only_results_are_verification_not_latency(tmp_path):
    """Real contract files: timed runs, then one --verify-only check of the same scenario."""
    res, path = tmp_path / "res", tmp_path / "w.duckdb"
    runs = _steady_history(res, 3)
    check_run = make_run(started_at="2026-10-09T10:00:00+00:00", git_commit="09" + "c" * 38)
    _verify_only_file(res, check_run)
    assert invoke("ingest", str(res), "--db", str(path)).exit_code == 0
    latest = json.loads(
        invoke(
            "query", "select run_id, metric, median from results_latest", "--format", "json", "--db", str(path)
        ).stdout
    )
    assert [(x["run_id"], x["metric"]) for x in latest] == [(runs[-1]["run_id"], "latency_s")]
    assert latest[0]["median"] == pytest.approx(0.01, rel=0.05)
    r = invoke("report", "--optimal-hardware", "--objective", "latency", "--format", "json", "--db", str(path))
    assert r.exit_code == 0
    assert json.loads(r.stdout)[0]["best_value"] == pytest.approx(0.01, rel=0.05)
    trends = json.loads(invoke("report", "--trends", "--format", "json", "--db", str(path)).stdout)
    assert [t["run_id"] for t in trends] == [run["run_id"] for run in runs]
    assert all(t["change_vs_previous"] is None or abs(t["change_vs_previous"]) < 0.1 for t in trends)
    matrix = json.loads(invoke("report", "--matrix", "--format", "json", "--db", str(path)).stdout)
    assert [(m["ok"], m["invalid"], m["relative_throughput"], m["rating_label"]) for m in matrix] == [
        (1, 0, 1.0, "best")
    ]
    checks = json.loads(
        invoke(
            "query",
            "select run_id, status, verify_only, max_abs_err, max_rel_err, tolerance, agrees from verification",
            "--format",
            "json",
            "--db",
            str(path),
        ).stdout
    )
    assert checks == [
        {
            "run_id": check_run["run_id"],
            "status": "ok",
            "verify_only": True,
            "max_abs_err": pytest.approx(3e-6),
            "max_rel_err": pytest.approx(3e-7),
            "tolerance": 1e-3,
            "agrees": True,
        }
    ]
    md = invoke("report", "--optimal-hardware", "--db", str(path)).stdout
    assert md.splitlines()[2].startswith(
        "1 latest timing result (one per series; 1 valid) of 1 model on 1 hardware, from 4 results in 4 runs "
    )
    assert "(1 verification check)" in " ".join(md.split())


def test_only_verification_results_is_not_a_latency_report(tmp_path):
    res, path = tmp_path / "res", tmp_path / "w.duckdb"
    run = make_run()
    _verify_only_file(res, run)
    _verify_only_file(res, run, rel_err=0.5, status="mismatch", model="m2", name="v2.parquet")
    assert invoke("ingest", str(res), "--db", str(path)).exit_code == 0
    for kind in ("--all", "--optimal-hardware", "--trends", "--matrix", "--regressions"):
        r = invoke("report", kind, "--db", str(path))
        assert r.exit_code == 1, (kind, r.output)
        assert r.stderr.startswith(
            f"benchdb: error: nothing to report: no valid timing result in {path}: 2 results, 2 verification checks "
            "(not timings: see the `verification` view);"
        ), (kind, r.stderr)
    checks = json.loads(
        invoke(
            "query",
            "select model_id, status, agrees from verification order by 1",
            "--format",
            "json",
            "--db",
            str(path),
        ).stdout
    )
    assert checks == [
        {"model_id": "m1", "status": "ok", "agrees": True},
        {"model_id": "m2", "status": "mismatch", "agrees": False},
    ]


def test_empty_sections_say_why(db, tmp_path):
    r = invoke("report", "--optimal-hardware", "--max-latency-ms", "0.001", "--db", str(db))
    assert r.exit_code == 1
    assert r.stderr.strip() == (
        "benchdb: error: nothing to report: no latest valid timing result matches latency <= 0.001 ms"
    )
    r = invoke("report", "--speedup", "--model", "m1", "--db", str(db))
    assert r.exit_code == 1 and "no results match models m1" in r.stderr
    res, path = tmp_path / "res", tmp_path / "w.duckdb"
    _steady_history(res, 1)
    assert invoke("ingest", str(res), "--db", str(path)).exit_code == 0
    r = invoke("report", "--trends", "--db", str(path))
    assert r.exit_code == 1
    assert r.stderr.strip() == (
        "benchdb: error: nothing to report: no series has two valid timing results yet (1 series with one)"
    )
    r = invoke("report", "--speedup", "--db", str(path))
    assert r.exit_code == 1
    assert r.stderr.strip() == (
        "benchdb: error: nothing to report: no CPU PyTorch eager fp32 baseline for the same model, batch size and shape"
    )

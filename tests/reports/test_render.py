"""The pages a performance engineer looks at, from a real warehouse (real contract files,
real ingest, real samples), checked in headless Chromium: the optimal section tells a tie from a win,
every figure leads to its result's drill-down, and `check --format html` is one comparison page."""

import json
import os
import re
import subprocess
from html import unescape
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import REPO, make_meta, make_run, need_chromium, write_file

from benchdb.cli import main

ARTIFACTS = Path(os.environ.get("BENCHDB_ARTIFACTS", REPO / "test-artifacts"))
MODEL = "tiny:bert"


def invoke(*args):
    return CliRunner().invoke(main, list(args))


def _lat(seed, median, n=60, spread=0.02):
    return np.random.default_rng(seed).lognormal(np.log(median), spread, n)


@pytest.fixture(scope="module")
def wh(tmp_path_factory):
    """Two runs on one CPU. bs=1: onnxruntime eager and graph within 1 % (a tie), pytorch 2x slower.
    bs=2: onnxruntime graph clearly fastest. An invalid result with a 100x tail. The second run measures
    bs=1 again, pytorch 30 % slower (a regression), in 3 processes per side; the two runs are the
    sides of one interleaved A/B run (their tags), so the gate knows their run-to-run noise."""
    tmp = tmp_path_factory.mktemp("pages")
    res, path = tmp / "res", tmp / "w.duckdb"
    r1 = make_run(started_at="2026-11-01T10:00:00+00:00", git_commit="a" * 40, tags=["ab-0a1b2c3d", "ab-0a1b2c3d-base"])
    r2 = make_run(started_at="2026-11-02T10:00:00+00:00", git_commit="b" * 40, tags=["ab-0a1b2c3d", "ab-0a1b2c3d-cand"])
    seq = {"model_id": MODEL, "input_shape": "seq_len=16"}
    write_file(
        res, make_meta(r1, backend="onnxruntime", mode="eager", **seq), _lat(1, 1.00e-3), name="a.parquet", repeats=3
    )
    write_file(
        res, make_meta(r1, backend="onnxruntime", mode="graph", **seq), _lat(2, 1.005e-3), name="b.parquet", repeats=3
    )
    write_file(res, make_meta(r1, backend="pytorch", **seq), _lat(3, 2e-3, n=90), name="c.parquet", repeats=3)
    for i, (backend, mode, med) in enumerate((("onnxruntime", "graph", 1.0e-3), ("pytorch", "eager", 3e-3))):
        write_file(
            res,
            make_meta(r1, backend=backend, mode=mode, batch_size=2, **seq),
            _lat(10 + i, med),
            name=f"bs2-{i}.parquet",
            repeats=3,
        )
    tail = np.concatenate([_lat(5, 1e-3, n=40), np.full(20, 0.1)])
    write_file(res, make_meta(r1, backend="openvino", validity="invalid", **seq), tail, name="inv.parquet")
    write_file(res, make_meta(r2, backend="pytorch", **seq), _lat(4, 2.6e-3, n=90), name="d.parquet", repeats=3)
    r = invoke("ingest", str(res), "--db", str(path))
    assert r.exit_code == 0, r.output
    return path


def test_optimal_tells_a_tie_from_a_win(wh):
    r = invoke("report", "--optimal-hardware", "--format", "json", "--db", str(wh))
    assert r.exit_code == 0, r.output
    rows = {x["batch_size"]: x for x in json.loads(r.stdout)}
    tie, win = rows[1], rows[2]
    assert (tie["best_backend"], tie["runner_up_backend"]) == ("onnxruntime", "onnxruntime")
    assert tie["margin"] < 0.02 and tie["margin_ci_low"] < 0 < tie["margin_ci_high"]
    assert tie["margin_verdict"] == "tie"
    assert win["margin_verdict"] == "win" and win["margin_ci_low"] > 1.0  # 3x: the whole CI far above 0
    assert tie["best_p90_s"] > tie["best_median_s"] and tie["best_n"] == 60
    assert tie["margin_basis"] == win["margin_basis"] == "processes"  # 3 interleaved processes each
    md = invoke("report", "--optimal-hardware", "--db", str(wh)).stdout
    assert "| tie |" in md and "| win |" in md
    assert "Of 2 winners with a runner-up: 1 win, 1 tie, 0 unconfirmed." in md
    assert "(1 invalid); the one that ran is listed, flagged" in md


def test_invalid_results_are_shown_flagged(wh):
    md = invoke("report", "--all", "--wide", "--db", str(wh)).stdout
    section = md.split("## Measured but left out", 1)[1]
    line = next(ln for ln in section.splitlines() if ln.startswith(f"| {MODEL} "))
    cells = [c.strip() for c in line.split("|")]
    assert cells[5] == "openvino" and 90 < float(cells[11]) < 110  # p90 is ~100x the median


def _dom(page: Path) -> tuple[str, list[str]]:
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--v=0"]
    dom = subprocess.run(
        [need_chromium(), *flags, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120
    )
    assert dom.returncode == 0, dom.stderr[-2000:]
    return dom.stdout, [ln for ln in dom.stderr.splitlines() if ":CONSOLE" in ln]


def _check_page(html: str, console: list[str]) -> int:
    """No console errors; every table sortable (the script ran on it); every plot has a title and
    axis labels, with a unit in parentheses on every numeric axis. Returns how many plots."""
    assert console == [], console
    assert html.count("<table") == html.count('data-sortable="ready"') > 0
    svgs = re.findall(r"<svg ([^>]*)>", html)
    for attrs in svgs:
        title = unescape(re.search(r'data-title="([^"]*)"', attrs).group(1))
        axes = json.loads(unescape(re.search(r'data-axes="([^"]*)"', attrs).group(1)))
        assert title.strip(), attrs[:200]
        for ax in axes:
            for side in ("x", "y"):
                assert ax[side].strip(), (title, ax)
                if ax[f"{side}_numeric"]:
                    assert re.search(r"\(.+\)", ax[side]), (title, ax)
    return len(svgs)


def _shot(page: Path, name: str, height: int = 3000) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / name
    subprocess.run(
        [
            need_chromium(),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            f"--screenshot={shot}",
            f"--window-size=1400,{height}",
            page.as_uri(),
        ],
        capture_output=True,
        timeout=120,
    )
    assert shot.exists() and shot.stat().st_size > 10_000


@pytest.mark.slow
def test_report_and_comparison_pages_in_headless_chromium(wh, tmp_path):
    need_chromium()
    report = tmp_path / "report.html"
    r = invoke("report", "--all", "--db", str(wh), "--out", str(report))
    assert r.exit_code == 0, r.output
    page = report.read_text()
    assert not re.search(r"""(src|href)=["']https?://""", page)
    html, console = _dom(report)
    assert _check_page(html, console) >= 6
    # the optimal section with its tie, and a way from the row to the result's samples and command
    best = json.loads(invoke("report", "--optimal-hardware", "--format", "json", "--db", str(wh)).stdout)[0]
    rid = best["best_result_id"]
    assert re.search(r">\s*tie\s*<", html)  # the verdict cell
    assert f'href="#result-{rid}"' in html and f'id="result-{rid}"' in html
    drill = html.split(f'id="result-{rid}"', 1)[1].split("</details>", 1)[0]
    assert "<svg" in drill and "ECDF" in drill
    assert (
        f"benchdb run --backend onnxruntime --device cpu --model {MODEL} --batch-size 1 --seq-len 16 "
        "--mode eager --precision fp32 --threads 1"
    ) in unescape(drill)
    assert 'id="environment"' in html and "numpy " in html and 'id="left-out"' in html
    _shot(report, "report-pages.png", 6000)

    check = tmp_path / "check.html"
    r = invoke(
        "check",
        "--baseline",
        "latest~1",
        "--candidate",
        "latest",
        "--format",
        "html",
        "--out",
        str(check),
        "--db",
        str(wh),
    )
    assert r.exit_code == 1, r.output  # pytorch bs=1 regressed: the gate fails, the page is written
    assert check.exists() and not re.search(r"""(src|href)=["']https?://""", check.read_text())
    html, console = _dom(check)
    assert _check_page(html, console) == 2  # the forest plot and the one series' distributions
    assert "<h1>benchdb check: FAIL</h1>" in html and 'class="verdict-regressed"' in html
    assert "shaded: the threshold band" in html and 'id="series-0"' in html
    _shot(check, "check-page.png", 1400)

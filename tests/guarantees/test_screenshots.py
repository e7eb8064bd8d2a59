"""The report, the check page and the dashboard in a real headless Chromium at 1280x900: no page-level
horizontal scroll (a wide table scrolls inside its own box), and a latency reads the same in the
terminal and in the HTML. Screenshots go to BENCHDB_SCREENSHOTS (default: a pytest tmp folder)."""

from __future__ import annotations

import os
import re
import threading
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from conftest import make_meta, make_run, write_file

from benchdb.backends.ortweb import browser
from benchdb.cli import main

WIDTH, HEIGHT = 1280, 900
#: A latency as benchdb prints it: a number and an engineering unit.
LATENCY = re.compile(r"\d[\d,]*\.\d+ (?:µs|ms|ns)\b")


pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("browser_needed")]  # conftest: fails under CI=true


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def _lat(seed: int, median: float, n: int = 90) -> np.ndarray:
    return np.random.default_rng(seed).lognormal(np.log(median), 0.02, n)


@pytest.fixture(scope="module")
def wh(tmp_path_factory) -> Path:
    """Two interleaved A/B runs (3 processes per side) of microsecond matmuls and millisecond models,
    long identifiers, one outlier; the candidate's numpy matmul is 1.2 % slower."""
    tmp = tmp_path_factory.mktemp("shots")
    res, db = tmp / "res", tmp / "w.duckdb"
    runs = [
        make_run(
            started_at=f"2026-11-0{d}T19:09:00+00:00", git_commit=c * 40, tags=["ab-1a2b3c4d", f"ab-1a2b3c4d-{side}"]
        )
        for d, c, side in ((1, "a", "base"), (2, "b", "cand"))
    ]
    for k, run in enumerate(runs):
        slower = 1.012 if k else 1.0
        for bs in (1, 8):
            v = _lat(10 * k + bs, 1.613e-6 * bs * slower)
            v[0] = v[0] * 400  # one outlier must not flatten the histogram
            write_file(
                res,
                make_meta(run, model_id="matmul:256", input_shape="n=256", batch_size=bs),
                v,
                name=f"m{k}-{bs}.parquet",
                repeats=3,
            )
        for i, (backend, mode, med) in enumerate(
            (
                ("onnxruntime", "optimized-with-a-long-mode-name", 0.61e-3),
                ("openvino", "latency", 0.60e-3),
                ("pytorch", "eager", 2.1e-3),
            )
        ):
            write_file(
                res,
                make_meta(
                    run,
                    model_id="tiny:bert-with-a-long-identifier",
                    backend=backend,
                    mode=mode,
                    input_shape="seq_len=32",
                ),
                _lat(100 * k + i, med),
                name=f"b{k}-{i}.parquet",
                repeats=3,
            )
    r = invoke("ingest", res, "--db", db)
    assert r.exit_code == 0, r.output
    return db


def _open(page, url: str, name: str, shots: Path) -> str:
    page.goto(url)
    page.wait_for_load_state("networkidle")
    scroll = page.evaluate("document.scrollingElement.scrollWidth")
    page.screenshot(path=str(shots / f"{name}-{WIDTH}.png"), full_page=True)
    assert scroll <= WIDTH, f"{name} scrolls sideways at {WIDTH} px: {scroll} px wide"
    return page.inner_text("body")


@pytest.fixture
def shots(tmp_path) -> Path:
    folder = Path(os.environ.get("BENCHDB_SCREENSHOTS", tmp_path / "screens"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def test_report_check_page_and_dashboard_fit_1280_px_and_speak_the_terminals_units(wh, tmp_path, shots):
    from playwright.sync_api import sync_playwright

    from benchdb.web.server import make_server

    report, check = tmp_path / "report.html", tmp_path / "check.html"
    assert invoke("report", "--all", "--db", wh, "--out", report).exit_code == 0
    # the terminal's check and its page: the numpy matmul's two medians, in µs, that differ in print
    term = invoke("check", "--baseline", "latest~1", "--candidate", "latest", "--db", wh)
    assert term.exit_code in (0, 1, 3), term.output
    # at the terminal's width each row is one entry: "- model matmul:256; batch 1; ...; baseline ..."
    row = next(ln for ln in term.stdout.splitlines() if "matmul:256" in ln and "batch 1;" in ln)
    base, cand = LATENCY.findall(row)[:2]
    assert base.endswith("µs") and cand.endswith("µs") and base != cand
    assert "`" not in "".join(ln for ln in term.stdout.splitlines() if ln.startswith("- model"))
    r = invoke(
        "check", "--baseline", "latest~1", "--candidate", "latest", "--db", wh, "--format", "html", "--out", check
    )
    assert check.exists(), r.output
    # the terminal's report: a latency cell of the batch-scaling table
    scaling = invoke("report", "--batch-scaling", "--db", wh).stdout
    latency = next(
        LATENCY.search(ln).group(0)
        for ln in scaling.splitlines()
        if ("| matmul:256" in ln or "model matmul:256;" in ln) and LATENCY.search(ln)
    )

    srv = make_server(str(wh), "127.0.0.1", 0)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    errors: list[str] = []
    try:
        with sync_playwright() as pw:
            b = pw.chromium.launch(executable_path=browser.find(), headless=True, args=["--no-sandbox"])
            page = b.new_page(viewport={"width": WIDTH, "height": HEIGHT})
            page.on("pageerror", lambda e: errors.append(str(e)))
            text = _open(page, report.as_uri(), "report", shots)
            assert latency in text, (latency, "not in report.html")
            assert "--wide" not in text  # no terminal-only text in the page
            assert "order_statistics" not in text and "host_clock" not in text
            text = _open(page, check.as_uri(), "check", shots)
            assert base in text and cand in text
            assert "`" not in text  # Markdown rendered, no raw backticks
            base_url = f"http://127.0.0.1:{srv.server_address[1]}"
            for view in ("optimal", "results", "matrix"):
                page.goto(f"{base_url}/?view={view}")
                page.wait_for_selector("#status:has-text('row(s)')")
                _open(page, page.url, f"dashboard-{view}", shots)
            page.goto(f"{base_url}/?view=optimal")
            page.wait_for_selector("#status:has-text('row(s)')")
            heads = page.eval_on_selector_all("#table th", "els => els.map(e => e.textContent)")
            assert heads[:4] == ["model", "batch", "input", "best"] and not any("_" in h for h in heads)
            # every row's best links to its drill-down: the raw samples of its best result
            assert page.locator("#table tbody tr td a[title='raw samples of this result']").count() == 3
            assert page.locator("#table td.verdict", has_text="only one").count() == 2
            page.goto(f"{base_url}/?view=results&model=matmul:256")
            page.wait_for_selector("#status:has-text('row(s)')")
            cells = page.inner_text("#table")
            assert "µs" in cells and not re.search(r"\b0\.00\d+\b", cells)  # µs, not 0.0016 (ms) or seconds
            b.close()
    finally:
        srv.shutdown()
        srv.server_close()
    assert errors == []

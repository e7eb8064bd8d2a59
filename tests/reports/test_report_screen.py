"""The HTML report's first screen in a real headless Chromium at 1280x900: the answer (per model the
best, its margin and verdict) is above the fold, the busy-machine detail is one line that expands,
and the systems chart draws one mark per result with labels that neither collide nor get cut.

BENCHDB_SCREENSHOTS=DIR keeps the screenshot (docs/screenshots/report.png is made this way)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import cli
from support.golden_warehouse import build_warehouse

from benchdb.backends.ortweb import browser

WIDTH, HEIGHT = 1280, 900

pytestmark = pytest.mark.usefixtures("browser_needed")  # conftest: fails under CI=true


@pytest.fixture(scope="module")
def report_page(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("screen")
    db = build_warehouse(tmp)
    here = os.getcwd()
    os.chdir(tmp)  # the page names the warehouse as given: golden.duckdb, not a temporary path
    try:
        r = cli("report", "--all", "--db", db.name, "--out", "report.html")
    finally:
        os.chdir(here)
    assert r.exit_code == 0, r.output
    return tmp / "report.html"


def test_the_answer_is_on_the_first_screen(report_page, tmp_path):
    from playwright.sync_api import sync_playwright

    shots = Path(os.environ.get("BENCHDB_SCREENSHOTS", tmp_path))
    shots.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=browser.find(), headless=True, args=["--no-sandbox"])
        try:
            page = b.new_page(viewport={"width": WIDTH, "height": HEIGHT})
            page.goto(report_page.as_uri())
            page.screenshot(path=str(shots / "report.png"))
            answer = page.locator("table[data-section='answer']")
            assert answer.count() == 1, "no answer table"
            box = answer.bounding_box()
            assert box is not None and box["y"] + box["height"] <= HEIGHT, f"answer below the fold: {box}"
            assert box["x"] + box["width"] <= WIDTH, f"answer wider than the page: {box}"
            heads = answer.locator("th").all_inner_texts()
            for col in ("model", "batch", "best", "margin [95 % CI]", "verdict", "input", "runner-up"):
                assert col in heads, heads
            assert answer.locator("tbody tr").count() == 6
            # the busy machine: one line that expands, its table hidden until asked
            banner = page.locator("details#busy-machine")
            assert banner.count() == 1 and banner.get_attribute("open") is None
            assert not page.locator("table[data-section='busy-machine']").is_visible()
            summary = banner.locator("summary").bounding_box()
            assert summary is not None and summary["height"] < 60, summary
            banner.locator("summary").click()
            assert page.locator("table[data-section='busy-machine']").is_visible()
            assert "&lt;" not in page.inner_text("body")
        finally:
            b.close()

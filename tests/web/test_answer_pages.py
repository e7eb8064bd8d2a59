"""The dashboard's answer pages as drawn in a real Chromium, under `benchdb dashboard` and the static
`benchdb site`: one warehouse, one server, one site and one browser for the whole module.

The warehouse holds what made the pages wrong before: two published systems of one name from two
submitters (a copy of the v5.1 Lenovo whisper run submitted again as "Acme" with another figure), and
one measured model at two batch sizes on two backends of one machine. Screenshots of the home,
systems and optimal hardware pages at 1280x900 go to the folder BENCHDB_SCREENSHOTS names, else a
pytest tmp folder."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from contextlib import ExitStack
from pathlib import Path

import numpy as np
import pytest
from conftest import REPO, child, cli, free_port, make_meta, make_run, wait_for_server, write_file

from benchdb.warehouse import Warehouse

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("browser_needed")]

LENOVO = REPO / "tests" / "fixtures" / "interop" / "mlperf_repo" / "v5.1" / "closed" / "Lenovo"
WHISPER = "mlperf:whisper"
#: A number in exponent notation as a word of its own (not the digits inside a hex id).
EXPONENT = re.compile(r"(?<![\w.])[-+]?\d+(\.\d+)?[eE][-+]?\d+(?![\w.])")


def _warehouse(root: Path) -> Path:
    repo = root / "repo" / "v5.1" / "closed"
    shutil.copytree(LENOVO, repo / "Lenovo")
    shutil.copytree(LENOVO, repo / "Acme")  # the same system, submitted by another organisation
    for f in (repo / "Acme").rglob("mlperf_log_*.txt"):
        f.write_text(f.read_text().replace("43698.6", "40123.4"))
    out = root / "imported"
    r = cli("import", "mlperf", root / "repo" / "v5.1", "--round", "v5.1", "--out", out)
    assert r.exit_code == 0, r.output
    measured = root / "measured"
    run = make_run(started_at="2026-11-29T05:54:00+00:00")
    rng = np.random.default_rng(3)
    for backend, factor in (("numpy", 1.0), ("onnxruntime", 2.0)):  # numpy twice as fast: a clear win
        for batch in (1, 4):
            meta = make_meta(run, model_id="matmul:64", backend=backend, batch_size=batch)
            write_file(measured, meta, rng.normal(1e-3 * factor * batch, 1e-6, 60), repeats=3)
    db = root / "w.duckdb"
    Warehouse(db).ingest([out, measured])
    return db


@pytest.fixture(scope="module")
def bases(tmp_path_factory):
    """{"serve": URL of `benchdb dashboard`, "site": URL of the static site under python -m http.server}."""
    root = tmp_path_factory.mktemp("answers")
    db = _warehouse(root)
    site = root / "site"
    subprocess.run([sys.executable, "-m", "benchdb", "site", "--db", str(db), "--out", str(site)], check=True)
    urls = {}
    with ExitStack() as stack:
        for name, argv, cwd, probe in (
            ("serve", [sys.executable, "-m", "benchdb", "dashboard", "--db", str(db), "--port"], None, "/api/views"),
            ("site", [sys.executable, "-m", "http.server", "--bind", "127.0.0.1"], site, "/"),
        ):
            port = free_port()
            proc = stack.enter_context(
                child([*argv, str(port)], cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            )
            wait_for_server(f"http://127.0.0.1:{port}{probe}", proc)
            urls[name] = f"http://127.0.0.1:{port}"
        yield urls


@pytest.fixture(scope="module")
def shots(tmp_path_factory) -> Path:
    """BENCHDB_SCREENSHOTS (docs/screenshots refreshes the committed ones), else a pytest tmp folder."""
    folder = Path(os.environ.get("BENCHDB_SCREENSHOTS") or tmp_path_factory.mktemp("screens"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture(scope="module")
def browser(browser_needed):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=browser_needed, headless=True, args=["--no-sandbox"])
        yield b
        b.close()


@pytest.fixture
def page(browser):
    p = browser.new_page(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    p.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    p.on("pageerror", lambda e: errors.append(str(e)))
    yield p
    p.close()
    assert errors == []


def _open(page, url: str, ready: str) -> None:
    page.goto(url)
    page.wait_for_selector("#status:has-text('row(s)'), #status.error")
    assert "error" not in (page.get_attribute("#status", "class") or ""), page.inner_text("#status")
    page.wait_for_selector(ready)


#: Every text box of the charts: how many overlap another, how many stick out of their SVG or the window.
BOXES = """(sel) => {
  let overlaps = 0, clipped = 0;
  for (const svg of document.querySelectorAll(sel)) {
    const s = svg.getBoundingClientRect();
    const boxes = [...svg.querySelectorAll('text')].map((t) => t.getBoundingClientRect()).filter((b) => b.width > 0);
    for (const b of boxes) {
      if (b.left < s.left - 0.5 || b.right > s.right + 0.5 || b.left < 0 || b.right > window.innerWidth) clipped++;
    }
    for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
      const a = boxes[i], b = boxes[j];
      const apart = a.right - 0.5 <= b.left || b.right - 0.5 <= a.left
        || a.bottom - 0.5 <= b.top || b.bottom - 0.5 <= a.top;
      if (!apart) overlaps++;
    }
  }
  return { overlaps, clipped };
}"""


#: Table cells whose text sticks out of them (over the next cell).
OVERFLOWING = "(tds) => tds.filter((td) => td.scrollWidth > td.clientWidth + 1).map((td) => td.innerText)"


def _exponents(page) -> list[str]:
    """Numbers in exponent notation on the page; a shortened hex id (7e101873, its whole id on hover or
    in its link) is none."""
    ids = page.evaluate(
        "() => [...document.querySelectorAll('[title], a[href]')]"
        ".map((e) => `${e.title} ${e.getAttribute('href') || ''}`).join(' ')"
    )
    found = [m.group(0) for m in EXPONENT.finditer(page.inner_text("body"))]
    return [t for t in found if not re.search(rf"\b{re.escape(t)}[0-9a-f-]", ids)]


def _labels(page) -> list[str]:
    return page.eval_on_selector_all(
        "svg[aria-label^='systems side by side'] g[aria-label='y-axis tick label'] text",
        "(ts) => ts.map((t) => t.firstChild.textContent)",
    )


@pytest.mark.parametrize("mode", ["serve", "site"])
@pytest.mark.parametrize(("model", "results"), [(WHISPER, 2), ("matmul:64", 4)])
def test_systems_page_draws_one_mark_per_result_with_labels_apart(bases, page, mode, model, results, shots):
    _open(page, f"{bases[mode]}/?view=systems&model={model}", "svg[aria-label^='systems side by side']")
    marks = page.locator("svg[aria-label^='systems side by side'] :is(.mark-measured, .mark-published) circle")
    assert marks.count() == results
    labels = _labels(page)
    assert len(labels) == results
    charts = page.locator("svg[aria-label^='systems side by side']")
    for i in range(charts.count()):  # within one chart no two marks read the same
        mine = charts.nth(i).locator("g[aria-label='y-axis tick label'] text")
        texts = [mine.nth(j).evaluate("(t) => t.firstChild.textContent") for j in range(mine.count())]
        assert len(set(texts)) == len(texts), texts
    assert page.evaluate(BOXES, "svg[aria-label^='systems side by side']") == {"overlaps": 0, "clipped": 0}
    values = page.eval_on_selector_all(
        "svg[aria-label^='systems side by side'] .mark-values text", "(ts) => ts.map((t) => t.textContent)"
    )
    assert len(values) == results and all(re.fullmatch(r"[\d,.]+ (items|tokens)/s", v) for v in values), values
    assert not _exponents(page)
    if model == WHISPER:  # two published systems of one name: told apart by submitter, hollow marks
        assert sorted(labels) == [
            "ThinkSystem SR680a V3 (8x B200-SXM-180GB, TensorRT) · Acme",
            "ThinkSystem SR680a V3 (8x B200-SXM-180GB, TensorRT) · Lenovo",
        ]
        assert page.locator(".mark-published circle").count() == 2
        assert "no samples, so no interval" in page.inner_text(".legend")
    else:  # batch 1 and 4: two charts, never one row summed over both
        assert charts.count() == 2
        assert page.locator(".mark-interval line, .mark-interval path").count() == 4
        assert sorted(labels) == [
            "Test CPU 9000 · numpy",
            "Test CPU 9000 · numpy",
            "Test CPU 9000 · onnxruntime",
            "Test CPU 9000 · onnxruntime",
        ]
    # the table under the chart: a rank is a whole number, and the normalised figure carries its unit
    heads = [h.strip() for h in page.locator("#table th").all_inner_texts()]
    assert "normalised unit" not in heads and "per" in page.inner_text("label:has(select)")
    cells = page.locator("#table tbody tr").evaluate_all(
        "(trs, at) => trs.map((tr) => [tr.cells[at[0]].textContent, tr.cells[at[1]].textContent])",
        [heads.index("rank"), heads.index("normalised")],
    )
    assert len(cells) == results and all(re.fullmatch(r"[1-9]\d*", rank) for rank, _ in cells), cells
    assert all(re.fullmatch(r"[\d,.]+ (items|tokens)/s", figure) for _, figure in cells), cells
    assert page.locator("select[name=per] option").all_inner_texts()[0] == "per system"  # not "(default)"
    if mode == "serve" and model == WHISPER:
        page.screenshot(path=str(shots / "systems.png"))


def _row(page, table: str, *texts: str):
    rows = page.locator(f"{table} tbody tr")
    for t in texts:
        rows = rows.filter(has_text=t)
    assert rows.count() == 1, texts
    return [c.strip() for c in rows.first.locator("td").all_inner_texts()]


@pytest.mark.parametrize("mode", ["serve", "site"])
def test_home_page_leads_with_the_best_per_model(bases, page, mode, shots):
    _open_home(page, bases[mode])
    table = "table[aria-label^='best per model']"
    head = page.locator(f"{table} thead th").all_inner_texts()
    assert head[:5] == ["model", "batch", "input", "best", "best (unit in each cell)"]
    for batch in ("1", "4"):  # a row per batch size, never one summed over both
        row = page.locator(f"{table} tbody tr").filter(has_text="matmul:64")
        cells = dict(
            zip(head, [c.strip() for c in row.nth(int(batch == "4")).locator("td").all_inner_texts()], strict=True)
        )
        assert cells["batch"] == batch and cells["best"] == "Test CPU 9000 · numpy · fp32"
        # numpy is twice as fast as onnxruntime in three interleaved processes: a confirmed win
        assert cells["verdict"] == "win" and cells["runner-up"] == "Test CPU 9000 · onnxruntime"
        assert re.fullmatch(r"\+\d+\.\d%", cells["margin"])
        assert re.fullmatch(r"\[\+[\d.]+%, \+[\d.]+%\]", cells["margin 95 % CI"])
        assert re.fullmatch(r"[\d,.]+ items/s", cells["best (unit in each cell)"])
    cells = dict(zip(head, _row(page, table, WHISPER), strict=True))
    assert cells["best"].endswith("by Lenovo") and cells["runner-up"].endswith("by Acme")
    assert cells["margin"] == "+8.9%" and cells["verdict"] == "unconfirmed"
    assert cells["margin 95 % CI"] == "published: no samples"
    assert cells["best (unit in each cell)"] == "43,698.6 tokens/s"
    assert (
        page.locator("svg[aria-label='margin of each answer'] :is(.mark-measured, .mark-published) circle").count() == 3
    )
    assert page.evaluate(BOXES, "svg[aria-label='margin of each answer']") == {"overlaps": 0, "clipped": 0}
    assert page.inner_text("section:has(h2:has-text('What got slower')) p") == "None: no open change point."
    assert _row(page, "table[aria-label='what runs where']", "synthetic") == ["2 of 2 backend(s)"]
    assert page.eval_on_selector_all(f"{table} td", OVERFLOWING) == []
    assert not _exponents(page)
    if mode == "serve":
        page.screenshot(path=str(shots / "home.png"))


def _open_home(page, base: str) -> None:
    page.goto(f"{base}/")
    page.wait_for_selector("#status:has-text('answer(s)'), #status.error")
    assert "error" not in (page.get_attribute("#status", "class") or ""), page.inner_text("#status")


@pytest.mark.parametrize("mode", ["serve", "site"])
def test_optimal_page_per_accelerator_draws_the_margins_and_keeps_the_verdict_in_view(bases, page, mode, shots):
    _open(page, f"{bases[mode]}/?view=optimal&per=accelerator", "svg[aria-label='margin of each answer']")
    assert page.input_value("select[name=per]") == "accelerator"
    table = "table[aria-label^='best per model']"
    head = page.locator(f"{table} thead th")
    verdict = head.filter(has_text="verdict").first.bounding_box()
    assert verdict is not None and verdict["x"] + verdict["width"] <= 1280
    cells = _row(page, table, WHISPER)
    # the 8-accelerator system per accelerator: 43,698.6 / 8
    assert "5,462.3 tokens/s per accelerator" in cells
    assert all(
        re.fullmatch(r"[\d,.]+ (items|tokens)/s per accelerator", c)
        for c in page.locator(f"{table} td.figure").all_inner_texts()
    )
    assert page.evaluate(BOXES, "svg[aria-label='margin of each answer']") == {"overlaps": 0, "clipped": 0}
    assert page.eval_on_selector_all(f"{table} td", OVERFLOWING) == []
    assert not _exponents(page)
    if mode == "serve":
        page.screenshot(path=str(shots / "optimal.png"))


def test_runs_are_listed_by_what_they_are(bases, page):
    _open(page, f"{bases['serve']}/?view=runs", "#table td")
    head = page.locator("#table thead th").all_inner_texts()
    measured = dict(zip(head, _row(page, "#table", "benchdb "), strict=True))
    assert measured["started"] == "2026-11-29 05:54 UTC" and measured["submitter"] == "testhost"
    assert measured["results"] == "4" and measured["valid results"] == "4"
    imported = _row(page, "#table", "import: mlperf-loadgen", "Acme")
    assert "ThinkSystem SR680a V3 (8x B200-SXM-180GB, TensorRT)" in imported
    run = page.locator(f"#table tbody tr >> nth=0 >> td >> nth={head.index('run')} >> a")
    assert len(run.inner_text()) >= 8 and run.get_attribute("title").startswith(run.inner_text())
    # a run's results link where they are listed: measured ones to the results view, a published
    # run's figure (the results view lists measured results only) beside its model's other systems
    for name in ("results", "run"):  # the count and the run's id link to the same place
        col = head.index(name)
        rows = [page.locator("#table tbody tr", has_text=text).first for text in ("benchdb ", "Acme")]
        links = {row.locator("td").nth(col).locator("a").get_attribute("href") for row in rows}
        assert any("view=results&run=" in h for h in links), links
        assert f"?view=systems&model={WHISPER.replace(':', '%3A')}" in links, links


@pytest.mark.parametrize("mode", ["serve", "site"])
def test_sources_page_counts_each_source_and_round(bases, page, mode, shots):
    _open(page, f"{bases[mode]}/?view=sources", "#table td")
    head = page.locator("#table thead th").all_inner_texts()
    measured = dict(zip(head, _row(page, "#table", "benchdb"), strict=True))
    published = dict(zip(head, _row(page, "#table", "mlperf-loadgen"), strict=True))
    assert (measured["results"], measured["systems"]) == ("4", "1"), measured
    # the two Lenovo whisper runs (one as Acme: the same system description, one hardware row),
    # judged by --round v5.1; no published table here, so none checked
    assert (published["round"], published["results"], published["systems"], published["checked"]) == (
        "v5.1",
        "2",
        "1",
        "0",
    ), published
    page.screenshot(path=str(shots / f"sources-{mode}.png"))

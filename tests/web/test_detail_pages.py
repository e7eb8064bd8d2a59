"""The dashboard's detail pages drawn in a real Chromium over `benchdb dashboard`'s handler: a result's
drill-down leads with its timing metric on an axis that shows the distribution (one 100x outlier is
counted, not drawn) and prints its statistics with units; compare says why nothing matches; trends
draws a mark per run and its change points; the serving frontier draws measured and published points
apart. One warehouse and one browser for the module; screenshots go to the folder BENCHDB_SCREENSHOTS
names (BENCHDB_SCREENSHOTS=docs/screenshots refreshes the committed ones), else a pytest tmp folder."""

from __future__ import annotations

import os
import re
import threading
from pathlib import Path

import numpy as np
import pytest
from conftest import REPO, cli, db_rows, make_meta, make_run, write_file

from benchdb.backends.ortweb import browser
from benchdb.schema import contract
from benchdb.warehouse import Warehouse

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("browser_needed")]

#: A number in exponent notation (1.2e-05, 3E+04), as a whole word: ids like 5e18d95d0092 are not.
EXPONENT = re.compile(r"[-+]?\d+(\.\d+)?[eE][-+]?\d+")
DRILL_MODEL = "tiny:drill"
VLLM = REPO / "tests" / "fixtures" / "interop" / "serving" / "vllm"
INFERENCEX = REPO / "tests" / "fixtures" / "interop" / "inferencex" / "benchmarks.json"


def _drill_file(folder: Path, run: dict) -> None:
    """A result whose latency has 899 samples around 108 µs and one 100x outlier, one export_s sample
    and three peak-memory samples around 451.6 MB."""
    meta = make_meta(run, model_id=DRILL_MODEL, input_shape="seq=32")
    rng = np.random.default_rng(3)
    lat = list(rng.normal(108e-6, 4e-6, 899)) + [108e-4]
    rows = [("latency_s", "s", i, i * 1e-4, float(v)) for i, v in enumerate(lat)]
    rows.append(("export_s", "s", 0, 0.0, 5.9226))
    rows += [
        ("peak_rss_bytes", "bytes", i, 0.0, v) for i, v in enumerate((451_600_000.0, 448_200_000.0, 476_100_000.0))
    ]
    contract.write_scenario(folder / "drill.parquet", meta, contract.samples_table(meta, rows))


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory) -> dict:
    tmp = tmp_path_factory.mktemp("detail")
    res = tmp / "results"
    runs = []
    for day in range(1, 9):  # a clear step after day 4: a change point, acknowledged
        run = make_run(started_at=f"2026-11-{day:02d}T10:00:00+00:00")
        runs.append(run["run_id"])
        rng = np.random.default_rng(day)
        write_file(res / f"d{day}", make_meta(run), rng.normal(1e-3 * (1.0 if day <= 4 else 1.5), 1e-5, 40))
        if day == 8:
            _drill_file(res / f"d{day}", run)
    bad = make_run(started_at="2026-11-09T10:00:00+00:00")
    for model in ("matmul:64", "matmul:128", "matmul:256"):
        meta = make_meta(bad, model_id=model, validity="invalid")
        meta["scenario"]["validity_reasons"] = ["9 < min_iters 10"]
        write_file(res / "d9", meta, np.random.default_rng(9).normal(1e-3, 1e-5, 9))
    db = tmp / "w.duckdb"
    Warehouse(db).ingest([res])
    for fmt, paths, extra in (
        ("vllm-serve", [VLLM / "c2_detailed.json", VLLM / "c4_fail7_detailed.json"], ["--hardware", "h100-sxm"]),
        ("inferencex", [INFERENCEX], []),
    ):
        out = tmp / f"imported-{fmt}"
        r = cli("import", fmt, *paths, "--out", out, *extra)
        assert r.exit_code == 0, r.output
        Warehouse(db).ingest([out])
    with Warehouse(db).reading() as con:
        series = con.execute("SELECT series_id FROM results WHERE model_id = 'matmul:64' LIMIT 1").fetchone()[0]
        drill = con.execute(
            "SELECT result_id FROM results WHERE model_id = ? AND status = 'ok'", [DRILL_MODEL]
        ).fetchone()[0]
        change = con.execute("SELECT change_id FROM change_points WHERE series_id = ?", [series]).fetchall()
    assert change, "the step after day 4 is a change point"
    r = cli("ack", change[0][0], "--note", "expected: new kernel", "--db", db)
    assert r.exit_code == 0, r.output
    return {"db": db, "runs": runs, "bad": bad["run_id"], "series": series, "drill": drill}


@pytest.fixture(scope="module")
def base_url(warehouse):
    from benchdb.web.server import make_server

    srv = make_server(str(warehouse["db"]), "127.0.0.1", 0)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{srv.server_address[1]}"
    srv.shutdown()
    srv.server_close()


@pytest.fixture(scope="module")
def page(base_url):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=browser.find(), headless=True, args=["--no-sandbox"])
        pg = b.new_page(viewport={"width": 1280, "height": 900})
        pg.set_default_timeout(15_000)
        pg.errors = []  # type: ignore[attr-defined]
        pg.on("pageerror", lambda e: pg.errors.append(str(e)))  # type: ignore[attr-defined]
        yield pg
        assert not pg.errors, pg.errors  # type: ignore[attr-defined]
        b.close()


def _open(page, base_url: str, query: str, ready: str) -> None:
    page.goto(f"{base_url}/?{query}")
    page.wait_for_selector("#status:has-text('row(s)')")
    page.wait_for_selector(ready)


def _visible_numbers_in_exponent(page) -> list[str]:
    words = page.locator("main").inner_text().split()
    words += [w for t in page.locator("main svg text").all_text_contents() for w in t.split()]
    # a shortened hex id (7e101873) is no number: its whole id is on hover or in its link
    ids = page.evaluate(
        "() => [...document.querySelectorAll('main [title], main a[href]')]"
        ".map((e) => `${e.title} ${e.getAttribute('href') || ''}`).join(' ')"
    )
    shown = [t.strip(".,;:()[]%") for t in words]
    return [t for t in shown if EXPONENT.fullmatch(t) and not re.search(rf"\b{re.escape(t)}[0-9a-f-]", ids)]


@pytest.fixture(scope="module")
def shots(tmp_path_factory) -> Path:
    folder = Path(os.environ.get("BENCHDB_SCREENSHOTS") or tmp_path_factory.mktemp("screens"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _shot(page, folder: Path, name: str) -> None:
    path = folder / f"{name}.png"
    page.screenshot(path=str(path))
    assert path.stat().st_size < 300_000


def test_drilldown_leads_with_the_timing_metric_on_an_axis_that_shows_it(page, base_url, warehouse, shots):
    _open(page, base_url, f"view=samples&result={warehouse['drill']}", "figure.metric")
    figures = page.locator("figure.metric")
    assert figures.first.get_attribute("data-metric") == "latency_s"
    # the axis of the first histogram: its largest tick within 2x the 99.5th percentile (~116 µs), not
    # stretched to the 10.8 ms outlier
    ticks = figures.first.locator(
        "svg[aria-label^='histogram'] [aria-label='x-axis tick label'] text"
    ).all_text_contents()
    top = max(float(t.replace(",", "")) for t in ticks)
    assert 100 < top < 2 * 116, ticks
    note = figures.first.locator("figcaption").inner_text()
    assert "µs" in note and "0.5-99.5 % of samples shown" in note and "of 900 outside" in note, note
    # export_s (one sample) is a number, not a histogram
    export = page.locator("figure.metric[data-metric='export_s']")
    assert export.locator("svg").count() == 0 and "5.923 s" in export.inner_text()
    stats = page.locator("table[aria-label='statistics of each metric']").inner_text()
    assert "µs" in stats and "MiB" in stats and "451,600,000" not in stats
    assert re.search(r"\b900\b", stats) and "900.0" not in stats
    assert not _visible_numbers_in_exponent(page)
    # the raw samples: each value in its own metric's unit, no heading naming a unit its cells do not use
    head = page.locator("#table thead th").all_inner_texts()
    assert "time offset" in head and not [h for h in head if re.search(r"\b(s|bytes)$", h)], head
    rows = {m: _sample_row(page, head, m) for m in ("export_s", "latency_s", "peak_rss_bytes")}
    assert rows["export_s"]["value"] == "5.923 s", rows
    assert rows["latency_s"]["value"].endswith(" µs") and rows["peak_rss_bytes"]["value"].endswith(" MiB"), rows
    assert rows["latency_s"]["repeat"] == "0" and rows["latency_s"]["iteration"] == "0", rows
    _shot(page, shots, "drilldown")


def _sample_row(page, head: list[str], metric: str) -> dict[str, str]:
    row = page.locator("#table tbody tr").filter(has=page.locator(f"td:text-is('{metric}')")).first
    return dict(zip(head, [c.strip() for c in row.locator("td").all_inner_texts()], strict=True))


def _short_ids(page, links: str) -> list[tuple[str, str]]:
    """(shown text, whole id) of each id link of the table."""
    shown = page.eval_on_selector_all(
        f"#table {links}", "(as) => as.map((a) => [a.textContent, a.closest('td').title || a.title])"
    )
    return [(t, w) for t, w in shown if not t.isdigit()]  # not a run's count of results (the same link)


def _assert_distinct_prefixes(shown: list[tuple[str, str]], runs: int) -> None:
    texts = {t for t, _ in shown}
    whole = {w.split(":")[0] for _, w in shown}
    assert len(whole) >= runs and len(texts) == len(whole), shown  # one text per id, none shared
    assert all(len(t) >= 8 and w.startswith(t) for t, w in shown), shown


def test_runs_made_within_a_minute_show_short_ids_that_differ(page, base_url, warehouse):
    # UUIDv7: the first 8 characters are the start time, the same for every run of this warehouse
    assert len({r[:8] for r in warehouse["runs"]}) == 1
    _open(page, base_url, "view=runs", "#table td a")
    _assert_distinct_prefixes(_short_ids(page, "td a[href*='view=results&run=']"), 9)
    compare = page.eval_on_selector_all(
        "#table a[href*='view=compare']", "(as) => as.map((a) => a.textContent.replace('compare with ', ''))"
    )
    assert len(compare) >= 8 and len(set(compare)) == len(compare), compare


def test_compare_with_an_invalid_side_says_why(page, base_url, warehouse):
    _open(page, base_url, f"view=compare&base={warehouse['runs'][-1]}&cand={warehouse['bad']}", "p.why-empty")
    why = page.inner_text("p.why-empty")
    assert "candidate" in why and "3 results" in why and "invalid" in why and "9 < min_iters 10" in why, why


def test_trends_draws_a_mark_per_run_and_the_change_point(page, base_url, warehouse, shots):
    _open(page, base_url, f"view=trends&series={warehouse['series']}", "svg[aria-label^='median per run']")
    chart = page.locator("svg[aria-label^='median per run']")
    assert chart.locator("g.runs circle").count() == 8
    assert chart.locator("g.change-points circle").count() == 1
    assert "(ms)" in (chart.text_content() or "")
    table = page.inner_text("#table")
    assert "2026-11-08 10:00 UTC" in table and "T10:00:00" not in table  # the warehouse's times are UTC
    assert "acked" in table or "acknowledged" in table
    _assert_distinct_prefixes(_short_ids(page, "td a[href*='view=results&run=']"), 8)
    head = page.locator("#table thead th").all_inner_texts()
    assert len(set(head)) == len(head), head  # no two columns under one heading
    # what names the series is said once, above the table, and the table fits the window
    assert "model matmul:64" in page.inner_text("#table caption") and "model" not in head, head
    assert page.evaluate("document.querySelector('#table table').scrollWidth <= innerWidth")
    assert not _visible_numbers_in_exponent(page)
    _shot(page, shots, "trends")


def test_serving_frontier_draws_measured_and_published_points_apart(page, base_url, warehouse, shots):
    _open(page, base_url, "view=frontier", "[aria-label^='serving frontier']")
    chart = page.locator("[aria-label^='serving frontier']")
    assert chart.locator("g.measured > *").count() >= 1
    # every measured load point, on its configuration's front (filled) or beaten by its own (hollow)
    (measured,) = db_rows(
        warehouse["db"],
        "SELECT count(*) AS n FROM serving_points WHERE interactivity IS NOT NULL "
        "AND output_throughput_per_device IS NOT NULL",
    )
    assert chart.locator("g.measured > *").count() + chart.locator("g.beaten > *").count() == measured["n"] >= 1
    assert chart.locator("g.published").count() == 1 and chart.locator("g.published *").count() >= 1
    text = chart.inner_text() + " ".join(chart.locator("svg").all_text_contents())
    assert "tokens/s per user" in text and "tokens/s per accelerator" in text
    assert not _visible_numbers_in_exponent(page)
    _shot(page, shots, "serving-frontier")


def test_serving_draws_ttft_and_tpot_against_load_with_the_slo(page, base_url, shots):
    _open(page, base_url, "view=serving&ttft_ms=1000&tpot_ms=100", "[aria-label^='time to first token']")
    charts = page.locator("[aria-label^='time to first token'] svg[aria-label*='against load']")
    assert charts.count() == 2
    assert page.locator("[aria-label^='time to first token'] g.slo").count() == 2
    text = " ".join(charts.locator("text").all_text_contents())
    assert re.search(r"TTFT p90 \((ms|s)\)", text) and "TPOT p50 (ms)" in text, text
    assert "SLO 1.000 s" in text and "SLO 100.0 ms" in text, text
    assert not _visible_numbers_in_exponent(page)
    _shot(page, shots, "serving-load")

"""Reports normalise across systems: the system_results view, `report
--optimal-hardware --per system|accelerator|watt|cost --prices`, and the dashboard's systems page in a
real Chromium. The warehouse is built from real contract files: published (summary-only) MLPerf-style
results on three systems, written through the contract as `benchdb import` writes them, and benchdb's
own measured results, ingested into a real DuckDB file."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest
from conftest import (
    REPO,
    child,
    cli,
    db_rows,
    free_port,
    make_meta,
    make_run,
    need_browser,
    wait_for_server,
    write_file,
)

from benchdb.schema import contract, system
from benchdb.warehouse import Warehouse

H200 = system.normalize(
    {
        "system_name": "8x H200 SXM",
        "accelerators_per_node": 8,
        "interconnect": "NVLink 4",
        "accelerator": {"vendor": "NVIDIA", "name": "NVIDIA H200-SXM-141GB", "memory": "141GB"},
    }
)
MI300X = system.normalize(
    {
        "system_name": "8x MI300X",
        "accelerators_per_node": 8,
        "interconnect": "XGMI",
        "accelerator": {"vendor": "AMD", "name": "AMD Instinct MI300X 192GB HBM3", "memory": "192GB"},
    }
)
L40S = system.normalize(
    {
        "system_name": "2x L40S",
        "accelerators_per_node": 2,
        "accelerator": {"vendor": "NVIDIA", "name": "NVIDIA L40S", "memory": "48GB"},
    }
)
GPU = {
    "kind": "cuda",
    "vendor": "NVIDIA",
    "device_name": "NVIDIA H100 80GB HBM3",
    "memory_bytes": 80 * 2**30,
    "compute_capability": "9.0",
    "cpu_model": "Test CPU",
    "cores_logical": 8,
    "arch": "x86_64",
}
LLAMA = "mlperf:llama2-70b-99"
#: (system, scenario, published tokens/s, measured power W or None)
PUBLISHED = [
    (H200, "Offline", 34000.0, 5800.0),
    (MI300X, "Offline", 30000.0, None),
    (L40S, "Offline", 3000.0, None),
    (H200, "Server", 31000.0, None),
]


def published(
    folder: Path,
    hw: dict,
    model: str,
    scenario: str,
    value: float,
    *,
    unit: str = "tokens/s",
    metric: str = "tokens_per_s",
    power: float | None = None,
    batch_size: int = 1,
    input_shape: str | None = None,
) -> Path:
    """A summary-only contract file as `benchdb import mlperf` writes one: no samples, the source's
    headline (statistic 'value' of the primary metric) and measured power among its statistics."""
    stats = [{"metric": metric, "unit": unit, "statistic": "value", "value": value}]
    if power is not None:
        stats.append({"metric": "power_w", "unit": "W", "statistic": "mean", "value": power})
    meta = contract.build_metadata(
        run=make_run(started_at="2025-09-01T00:00:00+00:00"),
        hardware=hw,
        model={"model_id": model},
        scenario={
            "model_id": model,
            "backend": "mlperf-loadgen",
            "device": "unknown",
            "mode": scenario,
            "precision": "unknown",
            "batch_size": batch_size,
            "input_shape": input_shape or f"scenario={scenario}",
            "status": "ok",
            "error": None,
            "validity": "valid",
            "validity_reasons": [],
            "primary_metric": metric,
            "timing_method": "loadgen",
            "threads": None,
            "options": {"scenario": scenario, "source": "mlperf-loadgen"},
            "source": {
                "format": "mlperf-loadgen",
                "file": "mlperf_log_summary.txt",
                "tool": "mlcommons-loadgen",
                "tool_version": "5.1",
                "summary_only": True,
                "percentile_method": "nearest_rank",
                "statistics": stats,
            },
        },
    )
    return contract.write_scenario(
        folder / f"{meta['scenario']['scenario_id'][:12]}.parquet", meta, contract.samples_table(meta, [])
    )


def build_warehouse(tmp_path: Path) -> Path:
    """Published llama2-70b on three systems, and resnet50 measured by benchdb on one H100 (50
    samples around 2 ms at batch 8) beside a published 8x H200 resnet50 figure of the same input."""
    res = tmp_path / "results"
    for hw, scenario, value, power in PUBLISHED:
        published(res, hw, LLAMA, scenario, value, power=power)
    published(
        res,
        H200,
        "resnet50",
        "Offline",
        90000.0,
        unit="items/s",
        metric="throughput_items_s",
        batch_size=8,
        input_shape="3x224x224",
    )
    run = make_run()
    write_file(
        res,
        make_meta(
            run,
            model_id="resnet50",
            hardware=GPU,
            backend="pytorch",
            device="cuda:0",
            batch_size=8,
            input_shape="3x224x224",
            options={"threads": 1},
        ),
        np.random.default_rng(3).normal(2e-3, 2e-5, 50),
    )
    db = tmp_path / "w.duckdb"
    Warehouse(db).ingest([res])
    return db


@pytest.fixture
def wh(tmp_path) -> Path:
    return build_warehouse(tmp_path)


def report_json(db: Path, *args) -> dict:
    r = cli("report", "--optimal-hardware", "--format", "json", "--db", db, *args)
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


@pytest.mark.core
def test_system_results_normalise_a_published_and_a_measured_figure(wh):
    rows = {(r["model_id"], r["mode"], r["system_name"]): r for r in db_rows(wh, "SELECT * FROM system_results")}
    assert len(rows) == 6
    for hw, scenario, value, power in PUBLISHED:
        r = rows[(LLAMA, scenario, hw["system_name"])]
        assert r["summary_only"] and r["unit"] == "tokens/s" and r["higher_is_better"] and r["n"] == 0
        assert (r["value"], r["accelerators"], r["accelerators_per_node"], r["nodes"]) == (
            value,
            hw["accelerators_per_node"],
            hw["accelerators_per_node"],
            1,
        )
        assert r["value_per_system"] == value
        assert r["value_per_accelerator"] == pytest.approx(value / hw["accelerators_per_node"])
        assert r["power_w"] == power
        assert r["value_per_watt"] == (None if power is None else pytest.approx(value / power))
        # a published figure has no samples: no median, no interval
        assert r["median"] is r["median_ci_low"] is r["value_ci_low"] is r["value_ci_high"] is None
    m = rows[("resnet50", "eager", "NVIDIA H100 80GB HBM3")]
    med = db_rows(
        wh, "SELECT median, median_ci_low, median_ci_high FROM results WHERE model_id = 'resnet50' AND n > 0"
    )[0]
    assert not m["summary_only"] and m["measured_by"] == "benchdb" and m["unit"] == "items/s" and m["n"] == 50
    assert m["value"] == pytest.approx(8 / med["median"])
    assert (m["value_ci_low"], m["value_ci_high"]) == (
        pytest.approx(8 / med["median_ci_high"]),
        pytest.approx(8 / med["median_ci_low"]),
    )
    assert m["accelerators"] == 1 and m["value_per_accelerator"] == pytest.approx(m["value"])


@pytest.mark.core
def test_per_accelerator_ranks_systems_and_marks_published_figures(wh):
    doc = report_json(wh, "--per", "accelerator")
    best = {(r["model_id"], r["input_shape"]): r for r in doc["optimal_hardware"]}
    off = best[(LLAMA, "scenario=Offline")]
    assert (off["per"], off["unit"], off["best_system"], off["runner_up_system"]) == (
        "accelerator",
        "tokens/s per accelerator",
        "8x H200 SXM",
        "8x MI300X",
    )
    assert off["best_value"] == pytest.approx(34000 / 8) and off["runner_up_value"] == pytest.approx(30000 / 8)
    assert off["margin"] == pytest.approx((34000 / 8) / (30000 / 8) - 1)
    # two published figures: a ratio, never an interval or a win
    assert off["best_summary_only"] and off["margin_basis"] == "published"
    assert off["margin_ci_low"] is None and off["margin_verdict"] == "unconfirmed"
    # the measured H100 (one accelerator) against the published 8x H200 at the same input: per accelerator
    res = best[("resnet50", "3x224x224")]
    assert res["best_system"] == "8x H200 SXM" and res["best_value"] == pytest.approx(90000 / 8)
    assert res["runner_up_summary_only"] is False and res["margin_ci_low"] is None
    side = [
        (r["mode"], r["system_name"], r["rank"], r["summary_only"], r["normalised"])
        for r in doc["system_ranking"]
        if r["model_id"] == LLAMA
    ]
    assert side == [
        ("Offline", "8x H200 SXM", 1, True, pytest.approx(4250.0)),
        ("Offline", "8x MI300X", 2, True, pytest.approx(3750.0)),
        ("Offline", "2x L40S", 3, True, pytest.approx(1500.0)),
        ("Server", "8x H200 SXM", 1, True, pytest.approx(31000 / 8)),
    ]
    measured = next(r for r in doc["system_ranking"] if r["model_id"] == "resnet50" and not r["summary_only"])
    assert measured["normalised_ci_low"] == pytest.approx(measured["value_ci_low"])  # one accelerator


@pytest.mark.core
def test_per_system_is_the_figure_as_is_and_without_per_the_report_is_unchanged(wh):
    doc = report_json(wh, "--per", "system")
    off = next(r for r in doc["optimal_hardware"] if r["input_shape"] == "scenario=Offline")
    assert (off["best_system"], off["best_value"], off["unit"]) == ("8x H200 SXM", 34000.0, "tokens/s")
    plain = report_json(wh)
    assert isinstance(plain, list)  # one section: no side-by-side table without --per
    assert [r["best_value"] for r in plain] == [r["best_value"] for r in doc["optimal_hardware"]]
    md = cli("report", "--optimal-hardware", "--per", "accelerator", "--db", wh).stdout
    assert "## Optimal hardware by throughput per accelerator" in md
    assert "Normalised per accelerator: a throughput over the accelerators the result ran on" in md
    assert (
        "## Systems side by side, per accelerator" in md
        and "published: no interval" not in md.split("## Systems side by side")[0].split("| --- |")[0]
    )


@pytest.mark.core
def test_per_watt_ranks_only_what_has_power(wh):
    doc = report_json(wh, "--per", "watt", "--model", LLAMA)
    (off,) = [r for r in doc["optimal_hardware"] if r["input_shape"] == "scenario=Offline"]
    assert off["best_value"] == pytest.approx(34000 / 5800) and off["unit"] == "tokens/s per W"
    assert off["candidates"] == 1 and off["best_power_w"] == 5800.0
    missing = {(r["mode"], r["system_name"]): r["missing"] for r in doc["system_ranking"] if r["normalised"] is None}
    assert missing == {
        ("Offline", "8x MI300X"): "no power measured",
        ("Offline", "2x L40S"): "no power measured",
        ("Server", "8x H200 SXM"): "no power measured",
    }


@pytest.mark.core
def test_per_cost_uses_accelerator_and_system_prices_and_lists_no_price(wh, tmp_path):
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"accelerator_hour": {"NVIDIA H200-SXM-141GB": 3.5}, "system_hour": {"2x L40S": 2.4}}))
    doc = report_json(wh, "--per", "cost", "--prices", prices, "--model", LLAMA)
    side = {(r["mode"], r["system_name"]): r for r in doc["system_ranking"]}
    h200 = side[("Offline", "8x H200 SXM")]
    assert h200["price_per_hour"] == pytest.approx(3.5 * 8)
    assert h200["normalised"] == pytest.approx(34000 / (3.5 * 8)) and h200["rank"] == 2
    l40s = side[("Offline", "2x L40S")]
    assert l40s["normalised"] == pytest.approx(3000 / 2.4) and l40s["rank"] == 1
    mi = side[("Offline", "8x MI300X")]  # listed, not dropped: no price, no rank
    assert (mi["normalised"], mi["rank"], mi["missing"]) == (None, None, "no price")
    off = next(r for r in doc["optimal_hardware"] if r["input_shape"] == "scenario=Offline")
    assert off["unit"] == "tokens/s per USD/h" and off["candidates"] == 2
    md = cli(
        "report", "--optimal-hardware", "--per", "cost", "--prices", prices, "--model", LLAMA, "--wide", "--db", wh
    ).stdout
    assert "| 8x MI300X (8x AMD Instinct MI300X 192GB HBM3) | published | 30,000.0 | tokens/s | no price |" in md


@pytest.mark.core
@pytest.mark.parametrize(
    ("text", "words"),
    [
        (
            "accelerator_hour: {NVIDIA H200-SXM-141GB: cheap}\n",
            "accelerator_hour: 'NVIDIA H200-SXM-141GB' is 'cheap', not a price",
        ),
        ("accelerator_hour: {A: 1}\ngpu_hour: {B: 2}\n", "unknown field 'gpu_hour'"),
        ("system_hour: [1, 2]\n", "system_hour must map names to USD per hour, not a list"),
        ("accelerator_hour: {A: -3}\n", "accelerator_hour: 'A' is -3, not a price"),
        ("accelerator_hour: {A: .inf}\n", "accelerator_hour: 'A' is inf, not a price"),
        ("NVIDIA H200: -2.5\n", "'NVIDIA H200' is -2.5, not a price (a positive number of USD per hour)"),
        ("NVIDIA H200: 0\n", "'NVIDIA H200' is 0, not a price"),
        ("NVIDIA H200: .inf\n", "'NVIDIA H200' is inf, not a price"),
        ("NVIDIA H200: .nan\n", "'NVIDIA H200' is nan, not a price"),
        ('{"NVIDIA H200": NaN}', "'NVIDIA H200' is 'NaN', not a price"),
    ],
)
def test_a_bad_prices_file_is_one_line_naming_the_file_and_field(wh, tmp_path, text, words):
    bad = tmp_path / "prices.yaml"
    bad.write_text(text)
    r = cli("report", "--optimal-hardware", "--per", "cost", "--prices", bad, "--db", wh)
    assert r.exit_code == 2 and "Traceback" not in r.output
    assert r.output.strip().startswith(f"benchdb: error: prices file {bad}: {words}")
    assert len(r.output.strip().splitlines()) == 1


@pytest.mark.core
def test_per_refusals(wh):
    r = cli("report", "--optimal-hardware", "--per", "watt", "--objective", "latency", "--db", wh)
    assert r.exit_code == 2 and "--per watt divides a throughput: use it with --objective throughput" in r.output
    r = cli("report", "--optimal-hardware", "--per", "cost", "--db", wh)
    assert r.exit_code == 2 and "--per cost needs --prices FILE" in r.output
    r = cli("report", "--matrix", "--per", "accelerator", "--db", wh)
    assert r.exit_code == 2 and "--per applies to --optimal-hardware" in r.output


@pytest.mark.core
def test_the_dashboard_ranks_every_normalisation_as_the_terminal_does(wh, tmp_path):
    """One definition of the normalisations: for each one the SQL lists, the dashboard's systems view (a
    real server) and `report --optimal-hardware --per` rank the same systems in the same order with the
    same figures and reasons, per dollar-hour too with a system's own price beside accelerator prices."""
    import threading
    import urllib.error
    import urllib.request
    from urllib.parse import urlencode

    from benchdb.reports.optimal import normalisations
    from benchdb.web.server import make_server

    accelerator_hour = {"NVIDIA H200-SXM-141GB": 3.5, "NVIDIA H100 80GB HBM3": 2.0}
    system_hour = {"2x L40S": 2.4}
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"accelerator_hour": accelerator_hour, "system_hour": system_hour}))
    url_prices = {f"price:{k}": str(v) for k, v in accelerator_hour.items()}
    url_prices.update({f"system_price:{k}": str(v) for k, v in system_hour.items()})
    shown = ("model_id", "input_shape", "batch_size", "rank", "system_name", "normalised", "normalised_unit", "missing")
    srv = make_server(str(wh), "127.0.0.1", 0)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        ranked = {}
        for n in normalisations():
            terminal = report_json(wh, "--per", n.name, *(("--prices", prices) if n.priced else ()))["system_ranking"]
            query = urlencode({"per": n.name, **(url_prices if n.priced else {})})
            with urllib.request.urlopen(f"http://127.0.0.1:{srv.server_address[1]}/api/systems?{query}") as resp:
                doc = json.loads(resp.read())
            page = [dict(zip(doc["columns"], r, strict=True)) for r in doc["rows"]]
            page = [r for r in page if r["kind"] == "headline"]
            assert [[r[k] for k in shown] for r in page] == [[r[k] for k in shown] for r in terminal], n.name
            ranked[n.name] = [(r["system_name"], r["rank"]) for r in page if r["model_id"] == LLAMA]
        for refused in (
            "systems?per=cost&price%3AX=cheap",  # a price is a positive number of USD per hour
            "systems?per=cost&system_price%3AX=0",
            "systems?per=carbon",  # no such normalisation
            "optimal?per=cost",  # the optimal answers take no prices
            "results?price%3AX=1",
        ):
            with pytest.raises(urllib.error.HTTPError) as err:
                urllib.request.urlopen(f"http://127.0.0.1:{srv.server_address[1]}/api/{refused}")
            assert err.value.code == 400, refused
    finally:
        srv.shutdown()
        srv.server_close()
    # per dollar-hour the 2x L40S is priced by its own system price: first, ahead of the 8x H200
    assert ranked["cost"][:3] == [("2x L40S", 1), ("8x H200 SXM", 2), ("8x MI300X", None)]


# ------------------------------------------------------------------ the dashboard's systems page


@contextmanager
def _serve(argv: list[str], cwd=None) -> Iterator[str]:
    """The base URL of a server process started from ``argv`` (PORT: a free port), for a ``with`` block."""
    port = free_port()
    argv = [a.replace("PORT", str(port)) for a in argv]
    with child(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) as proc:
        base = f"http://127.0.0.1:{port}"
        wait_for_server(base + "/", proc)
        yield base


def _bars(page) -> tuple[list[str], list[str]]:
    """(the bars' system labels top to bottom, their value labels) of the first bar chart."""
    chart = page.locator("svg[aria-label^='systems side by side']").first
    # what a reader sees: a label's <title> (its whole text, on hover) is not part of it
    seen = "els => els.map(e => [...e.childNodes].filter(n => n.nodeName !== 'title').map(n => n.textContent).join(''))"
    return (
        chart.locator("g[aria-label='y-axis tick label'] text").evaluate_all(seen),
        chart.locator("g.mark-values text").evaluate_all(seen),
    )


def _walk_systems(base: str, shots: Path, name: str) -> None:
    from playwright.sync_api import sync_playwright

    errors: list[str] = []
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=need_browser(), headless=True, args=["--no-sandbox"])
        page = b.new_page(viewport={"width": 1280, "height": 1000})
        page.on("console", lambda m: errors.append(m.text) if m.type in ("error", "warning") else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        systems = f"{base}/?view=systems&model={LLAMA}&scenario=Offline"
        page.goto(systems + "&per=accelerator")
        page.wait_for_selector("g.mark-values text")
        assert _bars(page) == (
            ["8x H200 SXM", "8x MI300X", "2x L40S"],
            [
                f"{34000 / 8:,.1f} tokens/s per accelerator",
                f"{30000 / 8:,.1f} tokens/s per accelerator",
                f"{3000 / 2:,.1f} tokens/s per accelerator",
            ],
        )
        assert page.locator("g.mark-published > *").count() == 3  # drawn apart: hollow, no interval
        assert page.locator("g.mark-measured > *").count() == 0
        assert page.get_attribute("g.mark-published", "fill") == "white"
        assert page.input_value("select[name=per]") == "accelerator"
        assert "each system's headline figure, per accelerator" in page.inner_text("p.normalisation")
        page.screenshot(path=str(shots / f"{name}-systems-per-accelerator.png"), full_page=True)
        page.goto(systems)  # per system: the figures as is
        page.wait_for_selector("g.mark-values text")
        assert _bars(page)[1] == ["34,000.0 tokens/s", "30,000.0 tokens/s", "3,000.0 tokens/s"]
        price = "price%3ANVIDIA+H200-SXM-141GB=3.5"
        if name == "serve":
            page.goto(systems + f"&per=cost&{price}")  # only the priced system is drawn
            page.wait_for_selector("g.mark-values text")
            assert _bars(page) == (["8x H200 SXM"], [f"{34000 / 28:,.1f} tokens/s per USD/h"])
            assert page.inner_text("p.not-drawn") == (
                "Not drawn per dollar-hour: 2x L40S (Offline, batch 1): no price; "
                "8x MI300X (Offline, batch 1): no price"
            )
            # a system's own price comes before its accelerators', as `report --per cost` takes it
            page.goto(systems + f"&per=cost&{price}&system_price%3A2x+L40S=2.4")
            page.wait_for_selector("g.mark-values text")
            assert _bars(page) == (
                ["2x L40S", "8x H200 SXM"],
                [f"{3000 / 2.4:,.1f} tokens/s per USD/h", f"{34000 / 28:,.1f} tokens/s per USD/h"],
            )
            assert page.input_value("input[name='system_price:2x L40S']") == "2.4"
        else:  # a static site has no prices to divide by: it says so, as of any answer only a server computes
            page.goto(systems + f"&per=cost&{price}")
            page.wait_for_selector("#status.error")
            assert "a price is computed by the server" in page.inner_text("#status")
            page.goto(systems + "&per=cost")  # without prices: every system listed as having none
            page.wait_for_selector("p.not-drawn")
            assert page.inner_text("p.not-drawn").startswith(
                "Not drawn per dollar-hour: 2x L40S (Offline, batch 1): no price"
            )
        page.goto(f"{base}/?view=systems&model=resnet50&per=accelerator")  # measured beside published
        page.wait_for_selector("g.mark-measured > *")
        labels, values = _bars(page)
        assert labels == ["8x H200 SXM", "NVIDIA H100 80GB HBM3"]  # names differ: nothing added
        assert values[0].startswith("11,250.0 items/s per accelerator")
        assert values[1].endswith("items/s per accelerator")
        assert page.locator("g.mark-published > *").count() == 1 and page.locator("g.mark-measured > *").count() == 1
        page.screenshot(path=str(shots / f"{name}-systems-measured-and-published.png"), full_page=True)
        page.goto(f"{base}/?view=systems&model=dsr1&in=1024&out=1024")  # serving: each system's frontier
        page.wait_for_selector("[aria-label^='serving frontier per system']")
        assert page.locator("g.front-published path").count() >= 2
        page.screenshot(path=str(shots / f"{name}-systems-serving.png"), full_page=True)
        b.close()
    assert errors == []


@pytest.mark.slow
@pytest.mark.usefixtures("browser_needed")  # conftest: fails under CI=true, else skips
def test_systems_page_in_chromium_served_and_static(tmp_path):
    db = build_warehouse(tmp_path)
    ix = tmp_path / "inferencex"
    r = cli(
        "import", "inferencex", REPO / "tests" / "fixtures" / "interop" / "inferencex" / "benchmarks.json", "--out", ix
    )
    assert r.exit_code == 0, r.output
    Warehouse(db).ingest([ix])
    shots = Path(os.environ.get("BENCHDB_SCREENSHOT_DIR") or tmp_path)
    shots.mkdir(parents=True, exist_ok=True)
    with _serve([sys.executable, "-m", "benchdb", "dashboard", "--db", str(db), "--port", "PORT"]) as base:
        _walk_systems(base, shots, "serve")
    site = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "benchdb", "site", "--db", str(db), "--out", str(site)], check=True, capture_output=True
    )
    with _serve([sys.executable, "-m", "http.server", "PORT", "--bind", "127.0.0.1"], cwd=site) as base:
        _walk_systems(base, shots, "site")


@pytest.mark.core
def test_per_accelerator_markdown_speaks_one_number_format_and_one_wording(wh):
    """Every figure of a column in one scale per unit (11,250.0 beside 4,250.0 tokens/s, never
    1.125e+04), and the verdict column and the summary say the same of published figures."""
    r = cli("report", "--optimal-hardware", "--per", "accelerator", "--wide", "--db", wh)
    assert r.exit_code == 0, r.output
    assert not re.search(r"\d\.?\d*e[+-]\d", r.stdout), r.stdout
    assert "11,250.0 items/s per accelerator" in r.stdout, r.stdout
    assert "unconfirmed: published figure, no interval" in r.stdout
    summary = next(ln for ln in r.stdout.splitlines() if ln.startswith("> Of "))
    assert "unconfirmed" in summary and "published figure, no interval" in summary, summary
    assert "beside a published figure" not in r.stdout

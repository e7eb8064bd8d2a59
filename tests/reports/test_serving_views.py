"""Serving results (backend openai) in the warehouse: the serving_points and
serving_frontier views and the bdb_serving_at_slo macro over real contract files ingested into a
real DuckDB file, checked against figures worked out by hand; `benchdb report --serving`; and
`benchdb check --metric ttft_s` on serving results."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from conftest import HARDWARE, benchdb_cmd, db_rows, make_meta, make_run

from benchdb.schema import contract
from benchdb.schema.serving import UNITS
from benchdb.warehouse import Warehouse

GPU_A = {**HARDWARE, "device_name": "Test GPU A", "cpu_model": "Test CPU A"}
GPU_B = {**HARDWARE, "device_name": "Test GPU B", "cpu_model": "Test CPU B"}
OPTIONS = {"engine": "transformers", "server": "transformers serve --port {port}", "threads": 4}
IN, OUT = 128, 64
VERSIONS = {"transformers": "4.57.1", "vllm": "0.11.0"}


def spread(base: float, n: int, width: float) -> np.ndarray:
    """n values around ``base`` (median exactly ``base``), +-width/2 relative, in a scrambled send order."""
    k = np.array([(j * 37) % n for j in range(n)], dtype=float)
    return base * (1 + (k - (n - 1) / 2) / n * width)


def serving_file(
    folder: Path,
    run: dict,
    hw: dict,
    load: str,
    *,
    ttft: float,
    tpot: float,
    out_tps: float,
    n: int = 120,
    errors: int = 0,
    options: dict | None = None,
    itl: bool = True,
    status: str = "ok",
    extra: dict | None = None,
    more_rows: list[tuple] = (),
    settings: dict | None = None,
) -> Path:
    """One load point as the openai runner writes it: per request ttft/e2e/tpot/first byte/tokens,
    per token gap itl_token_s, failed requests, and the load point's throughputs."""
    conc = int(load.split("=")[1]) if load.startswith("concurrency=") else 1
    meta = make_meta(
        run,
        model_id="tiny-llama",
        backend="openai",
        device="cuda:0",
        mode="chat",
        precision="bf16",
        batch_size=conc,
        input_shape=f"in={IN},out={OUT},{load}",
        hardware=hw,
        options=options or OPTIONS,
        status=status,
    )
    meta["scenario"]["primary_metric"] = "ttft_s"
    engine = (options or OPTIONS)["engine"]
    meta["scenario"]["extra"] = {
        "server": {"command": (options or OPTIONS)["server"], "engine": engine, "version": VERSIONS[engine]},
        "errors": [],
        "requests": n,
        **(extra or {}),
    }
    if settings:
        meta["scenario"]["settings"] = settings
    rows: list[tuple] = []
    ttfts, tpots = spread(ttft, n, 0.5), spread(tpot, n, 0.25)
    for i, (t1, tp) in enumerate(zip(ttfts, tpots, strict=True)):
        t0 = i * 0.05
        for metric, v in (
            ("ttft_s", t1),
            ("e2e_s", t1 + (OUT - 1) * tp),
            ("tpot_s", tp),
            ("first_byte_s", t1 / 2),
            ("input_tokens", IN),
            ("output_tokens", OUT),
        ):
            rows.append((metric, UNITS[metric], i, t0, float(v)))
        if itl:
            rows += [("itl_token_s", "s", i, t0, float(tp))] * (OUT - 1)
    rows += [("request_error", "count", n + e, n * 0.05, 1.0) for e in range(errors)]
    for metric, v in (
        ("request_throughput", out_tps / OUT),
        ("output_throughput", out_tps),
        ("total_throughput", 3 * out_tps),
        ("goodput", out_tps / OUT),
        ("window_s", 30.0),
        ("client_cpu_pct", 12.0),
    ):
        rows.append((metric, UNITS[metric], 0, 0.0, float(v)))
    rows += list(more_rows)
    table = contract.samples_table(meta, rows)
    return contract.write_scenario(folder / f"{meta['scenario']['scenario_id'][:12]}.parquet", meta, table)


#: B: a vLLM server over 2 GPUs (tensor parallel, read from its command template)
B_OPTIONS = {**OPTIONS, "engine": "vllm", "server": "vllm serve {model} --port {port} --tensor-parallel-size 2"}
#: (hardware, load, ttft p50, tpot p50, output tokens/s (all devices), requests, errors, options)
POINTS = [
    (GPU_A, "concurrency=1", 0.020, 0.010, 90.0, 120, 0, OPTIONS),
    (GPU_A, "concurrency=2", 0.030, 0.012, 160.0, 120, 0, OPTIONS),
    (GPU_A, "concurrency=4", 0.050, 0.016, 260.0, 120, 2, OPTIONS),
    (GPU_A, "concurrency=8", 0.090, 0.030, 250.0, 120, 0, OPTIONS),  # saturated: dominated by c=4
    (GPU_B, "concurrency=1", 0.040, 0.020, 90.0, 60, 0, B_OPTIONS),  # 60 requests: no p99
    (GPU_B, "concurrency=2", 0.060, 0.022, 170.0, 120, 0, B_OPTIONS),
    (GPU_B, "concurrency=4", 0.100, 0.030, 280.0, 120, 0, B_OPTIONS),
    (GPU_B, "rate=poisson:2.0", 0.045, 0.021, 100.0, 8, 0, B_OPTIONS),  # 8 requests: no p90
]


@pytest.fixture(scope="module")
def serving_db(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("serving")
    run = make_run()
    for hw, load, ttft, tpot, tps, n, errors, options in POINTS:
        serving_file(
            root / "results", run, hw, load, ttft=ttft, tpot=tpot, out_tps=tps, n=n, errors=errors, options=options
        )
    db = root / "serving.duckdb"
    summary = Warehouse(db).ingest([root / "results"])
    assert summary.new == len(POINTS) and not summary.rejected
    return db


def _key(r: dict) -> tuple:
    return (r["hardware_name"], r["load_kind"], r["load_value"])


def test_points_one_row_per_load_point_with_hand_checked_statistics(serving_db):
    rows = {_key(r): r for r in db_rows(serving_db, "SELECT * FROM serving_points")}
    assert len(rows) == len(POINTS)
    a1 = rows[("Test GPU A", "concurrency", 1.0)]
    assert (a1["endpoint"], a1["engine"], a1["engine_version"], a1["precision"]) == (
        "chat",
        "transformers",
        "4.57.1",
        "bf16",
    )
    assert (a1["in_tokens"], a1["out_tokens"], a1["concurrency"], a1["devices"]) == (128, 64, 1, 1)
    ttft = np.sort(spread(0.020, 120, 0.5))
    assert a1["ttft_p50_s"] == pytest.approx(0.020)
    assert a1["ttft_p90_s"] == pytest.approx(np.percentile(ttft, 90))
    assert a1["ttft_p99_s"] == pytest.approx(np.percentile(ttft, 99))
    # order-statistic CI of the median, n = 120: ranks floor(60 - 1.96 sqrt(120) / 2) = 49 and
    # ceil(61 + 1.96 sqrt(120) / 2) = 72 (1-based)
    assert (a1["ttft_p50_ci_low_s"], a1["ttft_p50_ci_high_s"]) == pytest.approx((ttft[48], ttft[71]))
    assert a1["ttft_ci_method"] == "order_statistics"
    assert a1["tpot_p50_s"] == pytest.approx(0.010) and a1["itl_p50_s"] == pytest.approx(0.010)
    assert a1["e2e_p50_s"] == pytest.approx(np.median(spread(0.020, 120, 0.5) + 63 * spread(0.010, 120, 0.25)))
    assert a1["interactivity"] == pytest.approx(100.0)
    tpot = np.sort(spread(0.010, 120, 0.25))
    assert (a1["interactivity_ci_low"], a1["interactivity_ci_high"]) == pytest.approx((1 / tpot[71], 1 / tpot[48]))
    assert (a1["output_throughput"], a1["input_throughput"], a1["request_throughput"]) == pytest.approx(
        (90.0, 180.0, 90.0 / 64)
    )
    assert (a1["n_requests"], a1["errors"], a1["error_rate"]) == (120, 0, 0)
    a4 = rows[("Test GPU A", "concurrency", 4.0)]
    assert (a4["n_requests"], a4["n_completed"], a4["errors"]) == (122, 120, 2)
    assert a4["error_rate"] == pytest.approx(2 / 122)
    # TTFT grows with load
    assert [rows[("Test GPU A", "concurrency", c)]["ttft_p50_s"] for c in (1.0, 2.0, 4.0, 8.0)] == pytest.approx(
        [0.02, 0.03, 0.05, 0.09]
    )
    b1 = rows[("Test GPU B", "concurrency", 1.0)]
    assert (b1["engine"], b1["engine_version"], b1["devices"]) == ("vllm", "0.11.0", 2)
    assert b1["output_throughput_per_device"] == pytest.approx(45.0)
    assert b1["ttft_p90_s"] is not None and b1["ttft_p99_s"] is None  # 60 requests: no p99
    assert b1["tpot_p99_s"] is None and b1["itl_p99_s"] is None and b1["e2e_p99_s"] is None
    rate = rows[("Test GPU B", "rate", 2.0)]
    assert (rate["arrival"], rate["request_rate"], rate["concurrency"]) == ("poisson", 2.0, None)
    assert rate["ttft_p90_s"] is None and rate["ttft_p99_s"] is None  # 8 requests: no p90
    assert rate["ttft_p50_s"] == pytest.approx(0.045)


def test_frontier_keeps_the_points_no_other_beats_on_both(serving_db):
    rows = {_key(r): r["on_overall_front"] for r in db_rows(serving_db, "SELECT * FROM serving_frontier")}
    # A: c=8 (250 tok/s/device, 33 tok/s/user) is beaten by c=4 (260, 62.5); B (2 devices): every
    # point is on its own front (the rate point trades 5 tok/s/device for 2.4 tok/s/user against c=1)
    assert set(rows) == {
        ("Test GPU A", "concurrency", 1.0),
        ("Test GPU A", "concurrency", 2.0),
        ("Test GPU A", "concurrency", 4.0),
        ("Test GPU B", "concurrency", 1.0),
        ("Test GPU B", "concurrency", 2.0),
        ("Test GPU B", "concurrency", 4.0),
        ("Test GPU B", "rate", 2.0),
    }
    # overall: A at c=1 (90, 100) beats every B point
    assert {k for k, overall in rows.items() if overall} == {
        ("Test GPU A", "concurrency", 1.0),
        ("Test GPU A", "concurrency", 2.0),
        ("Test GPU A", "concurrency", 4.0),
    }


def _at_slo(db: Path, ttft, tpot, inter, prices: dict[str, float]) -> dict[tuple, dict]:
    rows = db_rows(
        db,
        "SELECT * FROM bdb_serving_at_slo(?, ?, ?, MAP(?::VARCHAR[], ?::DOUBLE[]))",
        [ttft, tpot, inter, list(prices), list(prices.values())],
    )
    return {(r["hardware_name"], r["load_kind"]): r for r in rows}


def test_slo_interpolates_between_adjacent_load_points_and_prices_tokens(serving_db):
    rows = _at_slo(serving_db, 0.5, 0.014, None, {"Test GPU A": 3.6})
    a = rows[("Test GPU A", "concurrency")]
    # TPOT p50 12 ms at c=2, 16 ms at c=4: 14 ms half way, c = 3, 160 + 0.5 (260 - 160) = 210 tok/s
    assert (a["slo_status"], a["rank"]) == ("interpolated", 1)
    assert a["load_at_slo"] == pytest.approx(3.0)
    assert a["output_throughput_per_device"] == pytest.approx(210.0)
    assert a["input_throughput_per_device"] == pytest.approx(420.0)
    assert a["ttft_p50_s"] == pytest.approx(0.040) and a["tpot_p50_s"] == pytest.approx(0.014)
    assert a["ttft_p50_ci_low_s"] < 0.040 < a["ttft_p50_ci_high_s"]
    assert a["output_throughput_per_device_low"] < 210 < a["output_throughput_per_device_high"]
    assert a["usd_per_m_output_tokens"] == pytest.approx(3.6 / 3600 / 210 * 1e6)
    assert a["usd_per_m_input_tokens"] == pytest.approx(3.6 / 3600 / 420 * 1e6)
    assert a["lower_result_id"] != a["upper_result_id"]
    # B misses 14 ms at its lowest load (20 ms): no answer, never an extrapolation
    assert rows[("Test GPU B", "concurrency")]["slo_status"] == "misses_at_min_load"
    assert rows[("Test GPU B", "concurrency")]["output_throughput_per_device"] is None
    assert rows[("Test GPU B", "concurrency")]["usd_per_hour"] is None


def test_slo_takes_the_best_measured_point_and_prices_by_hardware_id(serving_db):
    b_id = db_rows(serving_db, "SELECT DISTINCT hardware_id FROM serving_points WHERE hardware_name = 'Test GPU B'")
    rows = _at_slo(serving_db, None, None, 40.0, {b_id[0]["hardware_id"]: 1.8})  # 40 tok/s/user: TPOT 25 ms
    a, b = rows[("Test GPU A", "concurrency")], rows[("Test GPU B", "concurrency")]
    # A: 25 ms lies between c=4 (16 ms, 260 tok/s) and c=8 (30 ms, 250): the crossing gives 253.6 < 260
    assert (a["slo_status"], a["load_at_slo"], a["output_throughput_per_device"]) == ("measured", 4.0, 260.0)
    # B: 22 ms at c=2 (85 tok/s/device), 30 ms at c=4 (140): t = 3/8
    assert b["slo_status"] == "interpolated"
    assert b["load_at_slo"] == pytest.approx(2.75)
    assert b["output_throughput_per_device"] == pytest.approx(85 + 0.375 * 55)
    assert b["usd_per_m_output_tokens"] == pytest.approx(1.8 / 3600 / (85 + 0.375 * 55) * 1e6)
    assert (a["rank"], b["rank"]) == (1, 2)
    assert rows[("Test GPU B", "rate")]["slo_status"] == "holds_at_max_load"


def test_slo_on_ttft_p90_alone_has_no_range_and_fails_closed_without_a_p90(serving_db):
    rows = _at_slo(serving_db, 0.050, None, None, {})
    a = rows[("Test GPU A", "concurrency")]
    p90 = [np.percentile(spread(t, 120, 0.5), 90) for t in (0.030, 0.050)]
    t = (0.050 - p90[0]) / (p90[1] - p90[0])
    assert a["slo_status"] == "interpolated"
    assert a["load_at_slo"] == pytest.approx(2 + 2 * t)
    assert a["output_throughput_per_device"] == pytest.approx(160 + t * 100)
    assert a["output_throughput_per_device_low"] is None
    # the rate point has 8 requests: its TTFT p90 is unknown, so it cannot be shown to meet the SLO
    assert rows[("Test GPU B", "rate")]["slo_status"] == "misses_at_min_load"


def test_report_serving_markdown_and_html(serving_db, tmp_path):
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"Test GPU A": 3.6}))
    md = benchdb_cmd(
        "report",
        "--serving",
        "--slo",
        "ttft:500ms,tpot:14ms",
        "--prices",
        str(prices),
        "--wide",
        "--db",
        str(serving_db),
        check=True,
    ).stdout
    for title in (
        "## Serving load points",
        "## Serving frontier",
        "## Best serving configuration at TTFT p90 <= 500 ms and TPOT p50 <= 14 ms",
    ):
        assert title in md
    assert "interpolated" in md and "misses_at_min_load" in md and "4.76" in md
    out = tmp_path / "serving.html"
    benchdb_cmd(
        "report",
        "--serving",
        "--slo",
        "ttft:500ms,interactivity:40",
        "--out",
        str(out),
        "--db",
        str(serving_db),
        check=True,
    )
    page = out.read_text()
    for section in ('id="serving_points"', 'id="serving_frontier"', 'id="serving_at_slo"'):
        assert section in page
    assert page.count("<svg") >= 3 and "TTFT vs load" in page
    bad = benchdb_cmd("report", "--serving", "--slo", "e2e:2s", "--db", str(serving_db))
    assert bad.returncode == 2 and "not e2e_s" in bad.stderr


def _history(root: Path, runs: int, factor: float = 1.0, status: str = "ok") -> list[str]:
    ids = []
    for i in range(runs):
        run = make_run(started_at=f"2026-11-{i + 1:02d}T10:00:00+00:00")
        scale = factor if i == runs - 1 else 1 + 0.01 * np.sin(i)
        serving_file(
            root,
            run,
            GPU_A,
            "concurrency=2",
            ttft=0.030 * scale,
            tpot=0.012,
            out_tps=160.0,
            itl=False,
            status=status if i == runs - 1 else "ok",
        )
        ids.append(run["run_id"])
    return ids


@pytest.mark.parametrize(
    ("runs", "factor", "status", "code", "verdict"),
    [
        (2, 1.0, "ok", 3, "inconclusive"),  # separate runs, no history: undecided, never a pass
        (10, 1.5, "ok", 1, "regressed"),  # 8 runs of history: TTFT +50 % fails the gate
        (2, 1.0, "failed", 1, "broken"),
    ],
)
def test_check_gates_ttft_of_serving_results(tmp_path, runs, factor, status, code, verdict):
    ids = _history(tmp_path / "results", runs, factor, status)
    db = tmp_path / "gate.duckdb"
    Warehouse(db).ingest([tmp_path / "results"])
    proc = benchdb_cmd(
        "check",
        "--baseline",
        f"run:{ids[-2]}",
        "--candidate",
        f"run:{ids[-1]}",
        "--metric",
        "ttft_s",
        "--format",
        "json",
        "--db",
        str(db),
    )
    assert proc.returncode == code, proc.stderr
    body = json.loads(proc.stdout)
    assert [c["verdict"] for c in body["comparisons"]] == [verdict]
    assert body["comparisons"][0]["unit"] in ("s", None)


def test_check_on_a_load_point_metric_is_undecided_never_a_pass(tmp_path):
    """output_throughput has one value per load point (per process): too few to compare, exit 3."""
    ids = _history(tmp_path / "results", 2)
    db = tmp_path / "gate.duckdb"
    Warehouse(db).ingest([tmp_path / "results"])
    proc = benchdb_cmd(
        "check",
        "--baseline",
        f"run:{ids[0]}",
        "--candidate",
        f"run:{ids[1]}",
        "--metric",
        "output_throughput",
        "--format",
        "json",
        "--db",
        str(db),
    )
    assert proc.returncode == 3, proc.stderr
    (cmp,) = json.loads(proc.stdout)["comparisons"]
    assert cmp["verdict"] == "inconclusive" and "too few samples" in cmp["reason"]


def test_a_load_point_with_a_steady_state_is_read_over_it_and_says_so(tmp_path):
    """Its TTFT, TPOT, interactivity and throughputs are the steady window's, its whole window's kept
    beside them; a point that sought one and found none says why; a --curve point keeps its place."""
    run, root = make_run(), tmp_path / "results"
    steady = [
        (m, "s", i, 1.0 + i * 0.05, float(v))
        for m, base in (("steady_ttft_s", 0.040), ("steady_tpot_s", 0.015))
        for i, v in enumerate(spread(base, 80, 0.2), start=20)
    ]
    for metric, value in (("steady_output_throughput", 300.0), ("steady_request_throughput", 4.0),
                          ("steady_total_throughput", 900.0)):  # fmt: skip
        steady.append((metric, UNITS[metric], 0, 0.0, value))
    window = {"found": True, "method": "m", "buckets": 16, "start_s": 1.0, "end_s": 5.0, "requests": 80}
    curve = {"curve": {"point": 2, "of": 8, "region": "low", "highest_useful": 4, "probe": []}}
    serving_file(root, run, GPU_A, "concurrency=2", ttft=0.05, tpot=0.02, out_tps=250.0,
                 extra={"steady_state": window}, more_rows=steady, settings=curve)  # fmt: skip
    drift = {"found": False, "method": "m", "buckets": 16, "reason": "drifting up: the server slowed throughout"}
    serving_file(root, run, GPU_A, "concurrency=4", ttft=0.06, tpot=0.02, out_tps=260.0, extra={"steady_state": drift})
    db = tmp_path / "w.duckdb"
    Warehouse(db).ingest([root])
    rows = {r["concurrency"]: r for r in db_rows(db, "SELECT * FROM serving_points")}
    s, d = rows[2], rows[4]
    assert (s["figures_window"], s["steady_state"], s["steady_start_s"], s["steady_end_s"]) == (
        "steady state", "found", 1.0, 5.0)  # fmt: skip
    assert s["ttft_p50_s"] == pytest.approx(0.040) and s["whole_ttft_p50_s"] == pytest.approx(0.050)
    assert s["tpot_p50_s"] == pytest.approx(0.015) and s["whole_tpot_p50_s"] == pytest.approx(0.020)
    assert s["interactivity"] == pytest.approx(1 / 0.015)
    ttft = np.sort(spread(0.040, 80, 0.2))  # 80 requests in the window: a p90, no p99
    assert s["ttft_p90_s"] == pytest.approx(np.percentile(ttft, 90)) and s["ttft_p99_s"] is None
    assert s["ttft_ci_method"] == "order_statistics" and s["steady_requests"] == 80
    assert (s["output_throughput"], s["request_throughput"], s["input_throughput"]) == pytest.approx((300, 4, 600))
    assert s["whole_output_throughput"] == pytest.approx(250.0) and s["n_requests"] == 120  # counts: whole window
    assert (s["curve_point"], s["curve_points"], s["curve_region"], s["curve_highest_useful"]) == (2, 8, "low", 4)
    assert (d["figures_window"], d["steady_state"], d["steady_state_reason"]) == (
        "whole window", "none", "drifting up: the server slowed throughout")  # fmt: skip
    assert d["ttft_p50_s"] == pytest.approx(0.060) and d["steady_start_s"] is None and d["curve_point"] is None
    wide = benchdb_cmd("report", "--serving", "--db", str(db), "--wide", check=True).stdout
    assert "steady 1.0-5.0 s" in wide and "whole: no steady state" in wide and "2/8 low" in wide
    assert "1 load point of 2 found a steady-state window" in wide and "drifting up" in wide
    assert "Curve (" in wide and "concurrency low 2" in wide and "highest useful concurrency 4" in wide

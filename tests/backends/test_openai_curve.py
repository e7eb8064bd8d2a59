"""``--curve N`` (benchdb.backends.openai.curve): the points chosen for a highest useful concurrency,
the probe's rule, and a curve measured against the stub with a batch limit (real sockets, streams)."""

from __future__ import annotations

import sys

import pytest
from conftest import need_module

from benchdb.backends.openai import curve


@pytest.mark.parametrize("highest, n", [(64, 8), (512, 12), (2, 8), (1024, 32), (8, 8), (300, 17)])
def test_a_curve_has_its_n_distinct_points_in_region_order(highest, n):
    pts = curve.points(highest, n)
    conc = [c for c, _ in pts]
    regions = [r for _, r in pts]
    assert len(pts) == n and len(set(conc)) == n and conc == sorted(conc)
    assert pts[0] == (1, "ultra-low") and pts[-1] == (2 * max(highest, n), "offline")
    order = ["ultra-low", "low", "medium", "high", "offline"]
    assert [order.index(r) for r in regions] == sorted(order.index(r) for r in regions)
    for region in ("low", "medium", "high"):  # each region holds a third of the middle points
        assert abs(regions.count(region) - (n - 2) / 3) < 1
    assert max(c for c, r in pts if r != "offline") <= max(highest, n)


def test_the_probe_stops_at_the_first_doubling_that_gains_under_10_percent():
    seen = []

    def measure(c):
        seen.append(c)
        return 100.0 * min(c, 12)  # a server that serves 12 at once: 16 gains 33 %, 32 nothing

    highest, readings = curve.probe(measure, 1024)
    assert highest == 16 and seen == [1, 2, 4, 8, 16, 32]
    assert readings[-1] == {"concurrency": 32, "output_tokens_per_s": 1200.0}
    assert curve.probe(lambda c: float(c), 8)[0] == 8  # still gaining at the cap: the cap


def test_bad_curve_options_are_one_line(tmp_path):
    from conftest import benchdb_cmd

    stub = f"{sys.executable} -m benchdb.testing.stub --port {{port}} --model {{model}}"
    for args, text in (
        (["--curve", "4"], "--curve 4: give 8 to 32 load points"),
        (["--curve", "8", "--request-rate", "poisson:2"], "--curve chooses closed-loop load points"),
        (["--curve", "8", "--seq-lens", "16,32"], "--curve measures one curve a model"),
    ):
        proc = benchdb_cmd(
            "run", "--backend", "openai", "--model", "m", "--server", stub, *args, "--out", str(tmp_path), "--dry-run"
        )  # fmt: skip
        assert proc.returncode == 2 and text in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def test_a_curve_against_a_server_of_4_slots_spreads_its_points_below_saturation(tmp_path):
    import duckdb
    from conftest import benchdb_cmd

    need_module("httpx", "benchdb[serving]")
    stub = (
        f"{sys.executable} -m benchdb.testing.stub --port {{port}} --model {{model}} --ttft-ms 4 --itl-ms 10 --slots 4"
    )
    out, db = tmp_path / "res", tmp_path / "w.duckdb"
    proc = benchdb_cmd(
        "run", "--backend", "openai", "--model", "stub", "--server", stub, "--curve", "8", "--curve-max", "64",
        "--gen-tokens", "8", "--seq-lens", "16", "--warmup", "0", "--min-iters", "12", "--min-time", "0",
        "--max-time", "5", "--max-requests", "12", "--max-background-cpu", "100%", "--out", str(out),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    benchdb_cmd("ingest", str(out), "--db", str(db), check=True)
    with duckdb.connect(str(db), read_only=True) as con:
        got = con.execute(
            "SELECT batch_size, input_shape, settings->'curve'->>'region', settings->'curve'->>'highest_useful' "
            "FROM results ORDER BY batch_size"
        ).fetchall()
        points = con.execute("SELECT count(*) FROM serving_points").fetchone()[0]
    # four slots: doubling past 4 gains nothing (here: 47.5 -> 48.6 req/s), so 4 is the highest useful
    # and the curve is 1-7, then 16; a client slowed by a busy machine can read 4 -> 8 as a gain, then 8
    (highest,) = {int(g[3]) for g in got}
    assert highest in (4, 8)
    assert [g[0] for g in got] == [c for c, _ in curve.points(highest, 8)]
    assert curve.points(4, 8) == [(1, "ultra-low"), (2, "low"), (3, "low"), (4, "medium"), (5, "medium"),
                                  (6, "high"), (7, "high"), (16, "offline")]  # fmt: skip
    assert all(g[1] == f"in=16,out=8,concurrency={g[0]}" for g in got)
    assert [g[2] for g in got] == [r for _, r in curve.points(highest, 8)]
    assert points == 8


def test_a_probe_whose_requests_fail_fails_every_point_with_the_reason(tmp_path):
    from conftest import benchdb_cmd

    need_module("httpx", "benchdb[serving]")
    stub = f"{sys.executable} -m benchdb.testing.stub --port {{port}} --model {{model}} --fail-every 1"
    proc = benchdb_cmd(
        "run", "--backend", "openai", "--model", "stub", "--server", stub, "--curve", "8", "--curve-max", "64",
        "--gen-tokens", "4", "--seq-lens", "8", "--warmup", "0", "--min-iters", "4", "--min-time", "0",
        "--max-time", "5", "--max-requests", "4", "--max-background-cpu", "100%", "--out", str(tmp_path / "o"),
    )  # fmt: skip
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    failed = [line for line in proc.stderr.splitlines() if "curve=8,point=" in line]
    assert len(failed) == 8 and all(": failed" in line for line in failed), proc.stderr
    assert "its requests at concurrency 1 failed: HTTP 500" in proc.stdout + proc.stderr

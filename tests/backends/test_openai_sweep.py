"""benchdb.backends.openai.sweep: when a load point is invalid (too many failed requests, a client
that was the bottleneck), by the rules the live sweep and every import share."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import benchdb_cmd, need_module

need_module("httpx", "benchdb[serving]")

from support.serving_runs import QUICK, STUB, run_results  # noqa: E402


def test_a_load_point_with_too_many_failed_requests_is_invalid():
    """Past 10 % failed, a load point's p90 is among its failures: the live client's point is invalid
    with the reason, by the one rule every import's points are judged by too."""
    from benchdb.backends.openai.loadgen import LoadResult
    from benchdb.backends.openai.sweep import validity
    from benchdb.harness.scenario import RunOptions
    from benchdb.schema.serving_metrics import MAX_FAILED_SHARE

    opts = RunOptions(models=("m",), backend="openai")
    result = LoadResult(
        records=[], window_start=0.0, window_end=5.0, stop_reason="max_iters", client_cpu_pct=5.0, errors={}
    )
    assert MAX_FAILED_SHARE == 0.10
    assert validity({"ok": 90, "requests": 100, "errors": 10}, opts, result) == []
    (reason,) = validity({"ok": 50, "requests": 100, "errors": 50}, opts, result)
    assert reason == (
        "failed_requests: 50 of 100 requests failed (50%, limit 10%); the figures describe only the "
        "requests that completed"
    )


def test_a_client_bound_load_point_is_invalid(tmp_path):
    """A load generator whose event loop is busy the whole window measures its own queueing: on an
    H100 host one client at 100 % read a 2 ms ITL as 0.03 ms. Such a point is invalid, with the reason;
    a short window (mostly per-request set-up) is not judged."""
    from benchdb.backends.openai.loadgen import LoadResult
    from benchdb.backends.openai.sweep import validity
    from benchdb.harness.scenario import RunOptions

    opts = RunOptions(models=("m",), backend="openai")
    summary = {"ok": opts.rule.min_iters}

    def point(loop_pct: float, window_s: float) -> LoadResult:
        return LoadResult(
            records=[],
            window_start=10.0,
            window_end=10.0 + window_s,
            stop_reason="max_time",
            client_cpu_pct=loop_pct + 20,
            errors={},
            loop_cpu_pct=loop_pct,
        )

    assert validity(summary, opts, point(40.0, 5.0)) == []
    assert validity(summary, opts, point(99.0, 0.3)) == []  # too short to judge
    (reason,) = validity(summary, opts, point(99.0, 5.0))
    assert reason.startswith("client_bound: the load generator's event loop was busy 99 %")
    # the H200 host's sweep: every point whose TTFT read more than 5 % high is invalid, and every point
    # still valid read TTFT within 5 % and ITL within 0.5 % (the old 95 % limit passed +88 % TTFT)
    recorded = json.loads((Path(__file__).parents[1] / "fixtures" / "gpu" / "h200_client" / "points.json").read_text())
    truth = recorded["truth"]
    for p in recorded["points"]:
        judged = validity(summary, opts, point(p["loop_pct"], 5.0))
        ttft_err = p["ttft_ms"] / truth["ttft_ms"] - 1
        if ttft_err > 0.05:
            assert judged and judged[0].startswith("client_bound"), p
        if not judged:
            assert ttft_err <= 0.05 and abs(p["itl_ms"] / truth["itl_ms"] - 1) <= 0.005, p
    assert sum(not validity(summary, opts, point(p["loop_pct"], 5.0)) for p in recorded["points"]) == 5
    # a real run records the loop's share beside the process's
    out = tmp_path / "res"
    proc = benchdb_cmd(
        "run",
        "--backend",
        "openai",
        "--model",
        "stub-model",
        "--server",
        STUB,
        "--concurrency",
        "2",
        "--out",
        str(out),
        *QUICK,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    (res,) = run_results(out)
    extra = res["scenario"]["extra"]
    assert 0 < extra["client_loop_cpu_pct"] <= extra["client_cpu_pct"] + 1

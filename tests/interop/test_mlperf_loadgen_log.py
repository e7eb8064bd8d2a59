"""MLPerf LoadGen logs (benchdb/interop/mlperf/loadgen_log.py): the real mlcommons-loadgen 6.0.17's summary and
detail logs (tests/fixtures/interop/mlperf), each run a summary-only result with LoadGen's verdict, its
nearest-rank percentiles and the headline the submission checker publishes."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import db_rows as rows
from conftest import import_and_ingest

from benchdb.interop.mlperf import loadgen_log as loadgen

pytestmark = pytest.mark.core

FIX = Path(__file__).parents[1] / "fixtures" / "interop"


def test_mlperf_logs_are_summary_only_with_nearest_rank_percentiles(tmp_path):
    db = import_and_ingest(tmp_path, "mlperf", FIX / "mlperf")
    res = rows(
        db,
        "SELECT r.mode, r.n, r.median, r.metric, r.validity, r.validity_reasons, s.summary_only, "
        "s.percentile_method, s.tool_version FROM results r JOIN result_sources s USING (result_id) "
        "ORDER BY r.mode",
    )
    assert [r["mode"] for r in res] == ["Offline", "SingleStream"]
    for r in res:  # no samples: nothing computed by benchdb, the source's figures stored apart
        assert (r["n"], r["median"], r["summary_only"], r["percentile_method"]) == (0, None, True, "nearest_rank")
        assert r["tool_version"] == "6.0.17"
    assert rows(db, "SELECT count(*) AS n FROM samples") == [{"n": 0}]
    offline, single = res
    assert offline["validity"] == "invalid" and offline["metric"] == "throughput_items_s"
    assert any("Min duration satisfied: NO" in why for why in offline["validity_reasons"])
    assert single["validity"] == "valid" and single["metric"] == "latency_s"
    stats = {
        r["statistic"]: r["value"]
        for r in rows(
            db,
            "SELECT statistic, value FROM source_statistics st JOIN results r USING (result_id) "
            "WHERE r.mode = 'SingleStream' AND st.metric = 'latency_s'",
        )
    }
    assert stats["p50"] == pytest.approx(2206728e-9)
    assert stats["p90"] == stats["headline_p90"] == pytest.approx(4023083e-9)
    assert stats["p99.9"] == pytest.approx(7488652e-9)
    tput = rows(
        db,
        "SELECT value FROM source_statistics st JOIN results r USING (result_id) "
        "WHERE r.mode = 'Offline' AND st.statistic = 'value'",
    )
    assert tput == [{"value": pytest.approx(81076.1)}]


def test_a_lone_log_is_its_scenario_its_verdict_and_the_tools_own_figures():
    summary = FIX / "mlperf" / "singlestream" / "mlperf_log_summary.txt"
    fields, checks = loadgen.summary_fields(summary.read_text())
    assert fields["Scenario"] == "SingleStream" and fields["Result is"] == "VALID" and checks
    (item,) = loadgen.parse_log(summary)
    assert (item.mode, item.primary_metric, item.summary_only, item.validity) == (
        "SingleStream",
        "latency_s",
        True,
        "valid",
    )
    assert item.percentile_method == "nearest_rank" and item.tool_version == "6.0.17"
    assert item.hardware["kind"] == "unknown"  # a lone log names no system
    stats = {(s[0], s[2]): s[3] for s in item.statistics}
    assert stats[("latency_s", "p50")] == pytest.approx(2206728e-9)
    (offline,) = loadgen.parse_log(FIX / "mlperf" / "offline" / "mlperf_log_summary.txt")
    assert offline.validity == "invalid" and any("Min duration satisfied: NO" in r for r in offline.validity_reasons)
    detail = loadgen.read_detail(FIX / "mlperf" / "offline" / "mlperf_log_detail.txt")
    assert detail["effective_scenario"] == "Offline"

"""The MLPerf Inference submission rules benchdb reads a run by (benchdb.interop.mlperf.rules): which
round's rules judge a run, and the headline figure in the unit the published table prints it in."""

from __future__ import annotations

import pytest

from benchdb.interop.mlperf import rules as mlperf_rules

pytestmark = pytest.mark.core


def test_a_round_after_the_last_known_takes_the_latest_rules_before_it():
    assert [mlperf_rules.round_name(t) for t in ("v4.1", "4.1", " V6.10 ")] == ["v4.1", "v4.1", "v6.10"]
    assert mlperf_rules.round_rules("v6.1") == "v6.0" and mlperf_rules.round_rules("v4.1") == "v4.1"
    assert mlperf_rules.round_rules(None) == max(mlperf_rules.RESULT_FIELD, key=lambda v: float(v[1:]))


def test_a_wan_single_stream_headline_is_in_seconds_as_the_table_prints_it():
    head = mlperf_rules.make_headline(
        20.603024726, "latency", "wan-2.2-t2v-a14b", "SingleStream", "early_stopping_latency_ss"
    )
    assert (head.metric, head.table_unit, head.table_value) == ("latency_s", "Latency (s)", 20.603024726)

"""The MLPerf Endpoints rules benchdb applies to a curve (benchdb.interop.mlperf.endpoints_rules): the
concurrency regions of the rules' Appendix B and the provisioned power of the docs' worked example."""

from __future__ import annotations

import pytest

from benchdb.interop.mlperf import endpoints_rules as ep

pytestmark = pytest.mark.core

#: The rules' Appendix B (v1.0 draft, §5.4): (C_max, C_min) -> low, medium, high, margin.
APPENDIX_B = [
    (64, 2, (3, 6), (7, 18), (19, 64), (65, 71)),
    (128, 2, (3, 7), (8, 27), (28, 128), (129, 141)),
    (256, 2, (3, 8), (9, 42), (43, 256), (257, 282)),
    (256, 8, (9, 14), (15, 47), (48, 256), (257, 282)),
    (512, 8, (9, 16), (17, 71), (72, 512), (513, 564)),
    (1024, 8, (9, 18), (19, 109), (110, 1024), (1025, 1127)),
    (512, 16, (17, 24), (25, 79), (80, 512), (513, 564)),
    (1024, 16, (17, 26), (27, 117), (118, 1024), (1025, 1127)),
    (2048, 16, (17, 29), (30, 176), (177, 2048), (2049, 2253)),
    (1024, 32, (33, 42), (43, 131), (132, 1024), (1025, 1127)),
    (2048, 32, (33, 45), (46, 192), (193, 2048), (2049, 2253)),
    (4096, 32, (33, 48), (49, 287), (288, 4096), (4097, 4506)),
    (8192, 32, (33, 52), (53, 437), (438, 8192), (8193, 9012)),
    (16384, 32, (33, 57), (58, 676), (677, 16384), (16385, 18023)),
]


@pytest.mark.parametrize(("c_max", "c_min", "low", "med", "high", "margin"), APPENDIX_B)
def test_regions_are_the_rules_appendix_b(c_max, c_min, low, med, high, margin):
    got = ep.regions(c_min, c_max)
    assert (got["low_concurrency"], got["med_concurrency"], got["high_concurrency"], got["margin"]) == (
        low,
        med,
        high,
        margin,
    )
    assert got["low_latency"] == (1, c_min)


def test_provisioned_power_is_the_docs_worked_example():
    """docs/reference/system-power-json.md of endpoints-submission-docs: "(700 + 5600 + 3500) x 1.30 =
    12,740 W ... A point with system_tps of 25,000 reports system_tps_per_kw of about 1,962"."""
    doc = {
        "cooling": "liquid",
        "cpu": {"num_cpu": 2, "tdp_per_cpu": 350},
        "accelerator": {"num_accelerator": 8, "tdp_per_accelerator": 700},
        "scale_up_network": {"num_switches": 1, "tdp_per_switch": 3500},
    }
    power = ep.provisioned_power(doc, None)
    assert power.watts == pytest.approx(12_740) and not power.estimated
    assert round(25_000 / (power.watts / 1000)) == 1962
    doc["cooling"] = "air"
    assert ep.provisioned_power(doc, None).watts == pytest.approx(14_700)
    del doc["cpu"]
    assert ep.provisioned_power(doc, None).estimated  # a component MLCommons must fill in
    assert ep.provisioned_power({"provisioned_power_kw": 140}, None).watts == 140_000

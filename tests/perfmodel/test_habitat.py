"""Carrying measurements across hardware (benchdb.perfmodel.habitat): the same scenario measured
elsewhere, scaled by the ratio of roofline times raised to a fitted exponent."""

import pytest
from support import perf_rows

from benchdb.perfmodel import habitat


def test_habitat_fits_how_far_latency_follows_the_peak():
    """latency = c x roofline ** 0.5 across hardware (a model that gains less than the peak ratio
    says): the fitted exponent is 0.5 and the scaled prediction exact; pure ratio scaling would
    be off by sqrt(4) = 2x."""
    rows = []
    for model, c in (("m1", 1.0), ("m2", 2.0)):
        for hw, peak in (("A", 1e11), ("B", 4e11), ("C", 2e11)):
            for batch in (1, 2, 4):
                roof = batch * 1e-4 * 1e11 / peak
                rows.append(perf_rows.row(model, hw, "b", batch, c * roof**0.5, roof, peak=peak))
    train = [r for r in rows if r["hardware_id"] != "B"]
    hab = habitat.Habitat(train)
    assert hab.alpha == pytest.approx(0.5) and hab.own[("m1", "b")] == pytest.approx(0.5)
    for t in (r for r in rows if r["hardware_id"] == "B"):
        value, sources = hab.predict(t)
        assert [s["hardware_id"] for s in sources] == ["A", "C"]
        assert value == pytest.approx(t["latency_s"], rel=1e-9)
    assert habitat.Habitat(train[:2]).alpha == 1.0  # too few pairs: pure scaling

"""benchdb.reports.request: the reports chosen and their filters, checked together, as a notebook
asks for them (the command line passes its options through)."""

from __future__ import annotations

import pytest

from benchdb.errors import BenchdbError
from benchdb.reports.build import ALL
from benchdb.reports.request import request

pytestmark = pytest.mark.core


def test_every_report_but_serving_and_sources_and_each_chosen_once():
    assert request(every=True)[0] == list(ALL)
    chosen, f = request(["matrix", "optimal-hardware", "matrix"], models=["m"], max_latency_ms=5.0)
    assert chosen == ["matrix", "optimal-hardware"]
    assert (f.models, f.max_latency_ms, f.per, f.prices, f.slo) == (("m",), 5.0, None, {}, {})


@pytest.mark.parametrize(
    ("kinds", "options", "line"),
    [
        ((), {}, "choose a report: --optimal-hardware, --matrix"),
        (["matrix"], {"per": "watt"}, "--per applies to --optimal-hardware"),
        (["matrix"], {"slo": "ttft:1s"}, "--slo applies to --serving"),
        (["serving"], {"chassis": "c.yaml"}, "--chassis applies to --serving --cost-at"),
    ],
)
def test_an_option_of_a_report_not_chosen_is_refused_naming_it(kinds, options, line):
    with pytest.raises(BenchdbError, match=f"^{line}"):
        request(kinds, **options)


def test_prices_and_the_slo_are_read_into_the_filters(tmp_path):
    prices = tmp_path / "prices.yaml"
    prices.write_text("accelerator_hour: {H200: 3.5}\n")
    _, f = request(["optimal-hardware", "serving"], per="cost", prices=prices, slo="ttft:500ms,tpot:50ms")
    assert f.accelerator_prices == {"H200": 3.5} and f.per == "cost"
    assert f.slo == {"max_ttft_p90_s": 0.5, "max_tpot_p50_s": 0.05}

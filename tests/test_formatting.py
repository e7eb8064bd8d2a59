"""benchdb.formatting: how every quantity is shown (one unit per column, digits that tell values apart)."""

from __future__ import annotations

import math
from datetime import datetime, timezone

import pytest
from conftest import need_module

from benchdb import formatting


def test_a_column_of_seconds_shares_the_unit_of_its_typical_value():
    sc = formatting.time_scale([0.0006, 0.0012, 0.012, 0.0009])
    assert sc.unit == "ms"
    assert [sc(v) for v in (0.0006, 0.012)] == ["0.600 ms", "12.000 ms"]
    assert formatting.time_scale([1.613e-6, 1.632e-6]).unit == "µs"
    assert formatting.time_scale([2.5, 3.0]).unit == "s"
    assert formatting.time_scale([4e-9]).unit == "ns"
    assert formatting.time_scale([]).unit == "ms" and formatting.time_scale([None, math.nan])(None) == ""
    # a column spanning more than 1000x: each value in its own unit, never 0.05 ms beside 2,500 ms
    wide = formatting.time_scale([50e-6, 0.0123, 2.5])
    assert [wide(v) for v in (50e-6, 0.0123, 2.5)] == ["50.00 µs", "12.30 ms", "2.500 s"]
    assert formatting.time_scale([50e-6, 2.5], axis=True).unit == "s"  # a plot's axis has one unit


@pytest.mark.parametrize(
    "base, cand", [(1.613e-6, 1.632e-6), (1.0e-3, 1.0002e-3), (0.25, 0.2500001), (123.4567, 123.4568)]
)
def test_both_sides_of_a_reported_change_differ_in_print(base, cand):
    sc = formatting.time_scale([base, cand])
    assert sc(base) != sc(cand)
    # and the typical value keeps at least 4 significant digits
    digits = sc(base).split()[0].replace(",", "").replace(".", "").lstrip("0")
    assert len(digits) >= 4


def test_the_same_latency_reads_the_same_in_every_place():
    """The check's pair, a report column and a lone value: one rule, one spelling."""
    pair = formatting.quantity(1.613e-6, "s", 1.632e-6)
    assert pair == "1.613 µs"
    assert formatting.time_scale([1.613e-6, 1.62e-6])(1.613e-6) == "1.613 µs"
    assert formatting.seconds(1.613e-6) == "1.613 µs"


def test_sizes_rates_percentages_and_ratios():
    assert (
        formatting.size(3 * 2**20) == "3.0 MiB"
        and formatting.size(5 * 2**30) == "5.0 GiB"
        and formatting.size(512) == "512 B"
    )
    assert formatting.size_scale([2**20, 3 * 2**20]).unit == "MiB"
    assert formatting.size_scale([2**20, 3 * 2**30])(2**20) == "1.0 MiB"
    assert formatting.rate_scale([1234.5, 15.0], "items/s")(1234.5) == "1,234.5 items/s"
    assert formatting.rate_scale([42.123])(42.123) == "42.12"
    pct = formatting.percent_scale([0.012, -0.05])
    assert (pct(0.012), pct(-0.05)) == ("+1.2%", "-5.0%")
    # two changes that differ get the decimals to show it
    close = formatting.percent_scale([0.0121, 0.0124])
    assert close(0.0121) != close(0.0124)
    assert formatting.percent(-0.0001) == "0.0%"  # no "-0.0": a change that is not there
    assert formatting.ratio_scale([1.5, 2.0])(2.0) == "2.00"
    assert formatting.points_scale([79.6, 41.0])(79.6) == "79.6%"


@pytest.mark.parametrize(
    "seconds, text",
    [
        (0.85, "850.0 ms"),
        (12, "12 s"),
        (250, "4 min 10 s"),
        (240, "4 min"),
        (3900, "1 h 05 min"),
        (3 * 86400 + 4 * 3600, "3 d 04 h"),
        (None, ""),
    ],
)
def test_durations_read_as_people_say_them(seconds, text):
    assert formatting.duration(seconds) == text


def test_timestamps():
    t = datetime(2026, 11, 1, 10, 0, tzinfo=timezone.utc)
    assert formatting.timestamp(t) == "2026-11-01 10:00 UTC"
    assert formatting.timestamp("2026-11-01T10:00:00+00:00") == "2026-11-01 10:00 UTC"
    assert formatting.timestamp(datetime(2026, 11, 1, 19, 9)) == "2026-11-01 19:09"


def test_a_histogram_range_leaves_out_one_outlier_and_says_so():
    values = [1.0 + i * 1e-3 for i in range(998)] + [1000.0, 2000.0]
    lo, hi, outside = formatting.clip_range(values)
    assert 1.0 <= lo < hi < 2.0 and outside >= 2
    assert formatting.clip_note(outside, len(values)).startswith("0.5-99.5 % of samples shown; ")
    few = [1.0 + i * 1e-3 for i in range(89)] + [400.0]  # 90 samples, one outlier: left out too
    assert formatting.clip_range(few)[1] < 2.0 and formatting.clip_range(few)[2] == 1


def test_plot_axes_in_the_columns_unit_and_dates_as_people_read_them():
    plt = need_module("matplotlib.pyplot", "benchdb[plots]")
    fig, ax = plt.subplots()
    ax.plot([datetime(2026, 11, 1, 19, 9), datetime(2026, 11, 2, 8, 0)], [1.6e-6, 1.7e-6])
    sc = formatting.seconds_axis(ax, [1.6e-6, 1.7e-6])
    formatting.date_axis(ax)
    fig.canvas.draw()
    assert ax.get_ylabel() == "latency (µs)" and sc.unit == "µs"
    ticks = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
    assert ticks and not any(".000000" in t for t in ticks)
    yticks = [t.get_text() for t in ax.get_yticklabels() if t.get_text()]
    assert yticks and all(len(t.split(".")[-1]) <= 4 for t in yticks)
    plt.close(fig)


@pytest.mark.parametrize("unit", ["s", "bytes", "items/s", None])
def test_a_column_formatted_once_prints_each_value_as_against_all_of_them(unit):
    """formatting.quantities (the gate's table of thousands of medians) prints each value exactly as
    quantity(v, unit, *values) does, whose list holds v twice: the typical size moves with v."""
    import numpy as np

    rng = np.random.default_rng(5)
    columns = [
        [0.0012, 0.0012, 0.0013, None, 0.0, math.nan, math.inf, 0.0011],
        [1.0, 2.0, 3.0, 4.0],
        [5e-6, 3.0, 0.1, 0.1],  # spans more than 1000x: each value in its own unit
        [7, 7, 7],
        list(rng.lognormal(-7, 0.5, 301)) + list(rng.integers(1, 5, 20).astype(float)),
        list(np.round(rng.lognormal(3, 2, 200), 2)),
    ]
    for values in columns:
        fmt = formatting.quantities(values, unit)
        assert [fmt(v) for v in values] == [formatting.quantity(v, unit, *values) for v in values]
    # a value not among them is printed against them as quantity would
    assert formatting.quantities([1.0, 2.0], unit)(1.5) == formatting.quantity(1.5, unit, 1.0, 2.0)

"""A configuration's figures at an interactivity along its Pareto front: the InferenceX calculator's
own test vectors (docs/tco-calculator.md and its app's tests, SemiAnalysisAI/InferenceX-app) and four
real B200 points of its published data."""

from __future__ import annotations

import pytest

from benchdb.analysis import frontier

#: DeepSeek-V4-Pro 8k/1k, b200 vLLM fp4: (median interactivity, tokens/s per GPU), InferenceX's
#: docs/examples/inferencex-api/0.1.0/powerx.json rows 440994, 440983, 440977, 440979.
B200 = [
    (20.05353172202492, 1449.6198691145855),
    (14.995420287765448, 2185.3889705948377),
    (8.990502179100059, 2601.3328026408562),
    (6.917606473824814, 3869.89542358505),
]


def test_the_front_keeps_what_no_point_beats_on_both():
    points = [(10, 800), (15, 100), (20, 700), (30, 300), (10, 500)]
    assert [points[i] for i in frontier.pareto_front(points)] == [(10, 800), (20, 700), (30, 300)]


def test_slopes_and_spline_are_steffen_with_d3_ends():
    assert frontier.monotone_slopes([0, 1, 2], [0, 1, 4])[1] == 2
    assert frontier.monotone_slopes([0, 1, 2], [0, 1, 0])[1] == 0  # a peak: flat, no overshoot
    assert frontier.monotone_slopes([0, 10], [0, 100]) == [15, 7.5]  # the app's own two-knot case
    xs, ys = [0, 5, 10, 15, 20], [0, 25, 100, 225, 400]
    m = frontier.monotone_slopes(xs, ys)
    assert m == [2.5, 10, 20, 30, 37.5] and frontier.hermite(xs, ys, m, 7.5) == pytest.approx(56.25)
    m = frontier.monotone_slopes([10, 20, 30], [100, 200, 300])
    assert frontier.hermite([10, 20, 30], [100, 200, 300], m, 5) == 100  # held at the ends
    assert frontier.hermite([10, 20, 30], [100, 200, 300], m, 35) == 300


@pytest.mark.parametrize(
    ("target", "throughput", "how", "usd"),
    [
        (10, 2488.8558506752283, "interpolated", 0.19308292018004197),
        (12, 2372.1194675772963, "interpolated", None),
        (18, 1778.2072784562108, "interpolated", 0.2702472098600115),
        (25, 1449.6198691145855, "clamped", None),  # beyond the front: its nearest end, said so
        (B200[1][0], B200[1][1], "measured", None),
    ],
)
def test_real_b200_points_read_as_the_calculator_reads_them(target, throughput, how, usd):
    got = frontier.at_interactivity([x for x, _ in B200], {"total": [y for _, y in B200]}, target, "total")
    assert got.values["total"] == pytest.approx(throughput, rel=1e-12) and got.how == how
    if usd is not None:  # b200's $1.73 per GPU-hour; the cost is derived from the throughput, not splined
        assert frontier.usd_per_million_tokens(1.73, got.values["total"]) == pytest.approx(usd, rel=1e-12)

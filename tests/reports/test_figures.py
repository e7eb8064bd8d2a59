"""The report's drawing toolkit (benchdb/reports/figures.py): SVG whose text is paths, and each figure's
root <svg> carrying its title and axis labels as escaped attributes."""

from __future__ import annotations

import html
import json

from benchdb.reports import figures


def test_a_figure_is_svg_naming_its_title_and_axes_with_text_as_paths():
    plt = figures.pyplot()
    fig, (ax1, ax2) = plt.subplots(1, 2)
    ax1.plot([1, 2, 3], [3, 2, 1], label="a")
    ax1.set_xlabel("batch size")
    ax1.set_ylabel("latency (ms)")
    ax2.set_yticks([0, 1], ["<script>x</script>", "pytorch"])  # labelled ticks: a categorical axis
    ax2.set_xlabel("speedup (x)")
    fig.suptitle("<b>Batch</b> & scaling")
    figures.legend_below(fig, ax1, 1)
    svg = figures.svg(fig)
    assert svg.startswith('<svg role="img" aria-label="&lt;b&gt;Batch&lt;/b&gt; &amp; scaling"')
    assert "<script>" not in svg and "<text" not in svg  # every glyph is a path
    axes = json.loads(html.unescape(svg.split('data-axes="', 1)[1].split('"', 1)[0]))
    assert [(a["x"], a["y"], a["x_numeric"], a["y_numeric"]) for a in axes] == [
        ("batch size", "latency (ms)", True, True),
        ("speedup (x)", "", True, False),
    ]
    fig, ax = plt.subplots()
    ax.set_title("one")
    assert 'data-title="one"' in figures.svg(fig)  # no suptitle: the axes' titles


def test_labels_are_shortened_and_error_bars_come_from_each_points_interval():
    assert figures.short("x" * 10, 8) == "xxxxxxx…" and figures.short("short") == "short"
    points = [{"v": 2.0, "lo": 1.5, "hi": 3.0}, {"v": 1.0, "lo": None, "hi": None}, {"v": 1.0, "lo": 1.2, "hi": 2.0}]
    assert figures.yerr(points, "v", "lo", "hi", scale=10) == [[5.0, 0.0, 0.0], [10.0, 0.0, 10.0]]
    assert figures.yerr([{"v": 1.0}], "v", "lo", "hi") is None

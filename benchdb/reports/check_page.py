"""`benchdb check --format html`: one self-contained comparison page.

Per series: both sides' sample distributions (histogram and ECDF, as pytest-benchmark's compare
plus histogram), the relative change of the median with its 95 % interval against the threshold band
(one forest plot for all series), and the gate's verdict and reason. The gate (analysis/gate.py)
decides; this module only draws what it decided, from samples fetched through reports.document.section_rows.
"""

from __future__ import annotations

from typing import Any

from benchdb import formatting as units
from benchdb.reports.document import section_rows

MAX_SERIES_PLOTS = 40


def _samples(con, result) -> dict[str, list[list[float]]]:
    """Each compared result's samples of the metric its series was judged on (a serving series' may
    be its steady-state figure: analysis/gate_window.py)."""
    ids: dict[str, list[str]] = {}
    for c in result.comparisons:
        of = ids.setdefault(c.metric or result.metric, [])
        of.extend((c.scenario["base_result_id"], c.scenario["cand_result_id"]))
    per: dict[str, list[list[float]]] = {}
    for metric, of in ids.items():
        for s in section_rows(con, "samples", {"ids": of, "metric": metric})[1]:
            per.setdefault(s["result_id"], []).append(s["vals"])
    return per


def _label(s: dict) -> str:
    return (
        f"{s['model_id']} · {s['input_shape']} · bs={s['batch_size']} · {s['hardware_name']} / "
        f"{s['backend']} / {s['mode']} / {s['precision']}"
    )


def _scale(unit: str | None, values: list[float]) -> tuple[float, str]:
    """Seconds in the unit the check's table shows them in; other units as stored."""
    if unit == "s":
        sc = units.time_scale(values, axis=True)
        return sc.factor, sc.unit
    return 1.0, unit or "value"


def forest(result) -> str | None:
    """Every compared series' change of the median with its 95 % CI, the threshold band shaded."""
    from benchdb.reports import figures

    rows = [c for c in result.comparisons if c.change is not None][:MAX_SERIES_PLOTS]
    if not rows:
        return None
    plt = figures.pyplot()
    colors = {"regressed": "#cf222e", "improved": "#1a7f37", "unchanged": "#59636e", "inconclusive": "#d4a72c"}
    fig, ax = plt.subplots(figsize=(8, 0.4 * len(rows) + 1.4))
    for y, c in enumerate(rows):
        t = c.threshold or result.threshold
        ax.fill_betweenx([y - 0.4, y + 0.4], -t * 100, t * 100, color="#ddf4ff", linewidth=0)
        lo = (c.change - c.ci_low) * 100 if c.ci_low is not None else 0
        hi = (c.ci_high - c.change) * 100 if c.ci_high is not None else 0
        ax.errorbar(
            [c.change * 100], [y], xerr=[[lo], [hi]], marker="o", capsize=3, color=colors.get(c.verdict, "#59636e")
        )
    ax.axvline(0, color="#59636e", linewidth=0.8)
    ax.set_yticks(range(len(rows)), [figures.short(f"{c.verdict}: {_label(c.scenario)}", 110) for c in rows])
    ax.invert_yaxis()
    ax.set_xlabel(f"change of the median {result.metric}, candidate vs baseline (%)")
    ax.set_ylabel("verdict: series")
    ax.set_title("Change with its 95% CI; shaded: the threshold band")
    return figures.svg(fig)


def distributions(c, base: list[list[float]], cand: list[list[float]], unit: str | None, metric: str) -> str | None:
    from benchdb.reports import figures

    b = [v for g in base for v in g]
    k = [v for g in cand for v in g]
    if not b and not k:
        return None
    plt = figures.pyplot()
    scale, name = _scale(unit, b + k)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(7.5, 2.4))
    # both sides over one range that one outlier does not stretch (the ECDF shows every sample)
    lo, hi, outside = units.clip_range([v * scale for v in b + k])
    for vals, label, color in ((b, "baseline", "#8c959f"), (k, "candidate", "#0969da")):
        if vals:
            xs = [v * scale for v in vals]
            ax1.hist(
                xs,
                bins=30,
                range=(lo, hi) if hi > lo else None,
                alpha=0.55,
                label=f"{label} (n={len(xs)})",
                color=color,
            )
            srt = sorted(xs)
            ax2.step(srt, [(i + 1) / len(srt) for i in range(len(srt))], where="post", color=color, label=label)
    for v, color in ((c.base_median, "#59636e"), (c.cand_median, "#0969da")):
        if v is not None:
            ax1.axvline(v * scale, color=color, linestyle="--", linewidth=1)
    ax1.set_xlabel(f"{metric} ({name})")
    ax1.set_ylabel("samples (count)")
    ax1.set_title("Distributions (dashed: medians)\n" + units.clip_note(outside, len(b) + len(k)), fontsize=7)
    ax2.set_xlabel(f"{metric} ({name})")
    ax2.set_ylabel("fraction of samples (0-1)")
    ax2.set_title("ECDF")
    fig.suptitle(figures.short(_label(c.scenario), 110), y=1.06)
    figures.legend_below(fig, ax1, 2)
    return figures.svg(fig)


def html(con, result) -> str:
    """The comparison page of a GateResult (check --format html)."""
    from markupsafe import Markup

    from benchdb.reports import render

    samples = _samples(con, result)
    try:
        from benchdb.reports import figures

        figures.pyplot()
        notes: list[str] = []
        drawn = True
    except ImportError:
        notes, drawn = ["Plots are missing: matplotlib is not installed (pip install 'benchdb[plots]')."], False
    series: list[dict[str, Any]] = []
    for i, c in enumerate(result.comparisons):
        s = c.scenario
        plot = None
        if drawn and i < MAX_SERIES_PLOTS:
            plot = distributions(
                c,
                samples.get(s["base_result_id"], []),
                samples.get(s["cand_result_id"], []),
                c.unit,
                c.metric or result.metric,
            )
        series.append({"c": c, "label": _label(s), "plot": plot, "anchor": f"series-{i}"})
    ctx = render.check_context(result)
    return (
        render.environment(autoescape=True)
        .get_template("check.html.j2")
        .render(**ctx, series=series, forest=forest(result) if drawn else None, notes=notes, svg=lambda x: Markup(x))
    )

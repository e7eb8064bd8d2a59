"""The report's "systems side by side" picture (``report --optimal-hardware --per ...``): per model,
scenario (input) and batch size, one mark per result, ranked.

Each result is its own row of the chart: batch sizes, scenarios and inputs are separate charts, never
added together, and two systems that share a name are two marks with labels that differ (the section's
``system_label``, made unique by :func:`benchdb.reports.optimal_rows.unique_system_labels`). A measured
figure is a filled dot with its 95 % interval; a published one is a hollow diamond (no samples, no
interval). Labels wrap, never cut; the figure is as wide as the report's column.
"""

from __future__ import annotations

import textwrap
from typing import Any

from benchdb import formatting
from benchdb.reports import figures
from benchdb.reports.document import Section

#: Charts drawn (one per model, scenario and batch size) and marks per chart (the best ranked).
MAX_CHARTS = 12
MAX_MARKS = 20
#: A label's line length before it wraps.
WRAP = 44


def groups(rows: list[dict]) -> dict[tuple, list[dict]]:
    """The rows compared with each other: per model, scenario, input and batch size, ranked ones first."""
    out: dict[tuple, list[dict]] = {}
    for r in rows:
        if r.get("normalised") is not None:
            out.setdefault((r["model_id"], r.get("mode"), r.get("input_shape"), r.get("batch_size")), []).append(r)
    return out


def draw(rows: list[dict], title: str) -> Any:
    """One chart: a mark per row (best first), its label wrapped whole, measured with its interval."""
    plt = figures.pyplot()
    rows = rows[:MAX_MARKS]
    labels = ["\n".join(textwrap.wrap(str(r["system_label"]), WRAP)) or "?" for r in rows]
    lines = sum(lb.count("\n") + 1 for lb in labels)
    fig, ax = plt.subplots(figsize=(10, 0.8 + 0.22 * lines + 0.12 * len(rows)))
    ys = list(range(len(rows)))
    unit = rows[0].get("normalised_unit") or ""
    scale = formatting.rate_scale([r["normalised"] for r in rows])  # the unit is the axis's
    for y, r in zip(ys, rows, strict=True):
        v = r["normalised"]
        if r.get("summary_only"):
            ax.plot([v], [y], marker="D", mfc="white", mec="#8250df", ms=6, ls="none", label="published (no interval)")
        else:
            lo, hi = r.get("normalised_ci_low"), r.get("normalised_ci_high")
            err = [[max(0.0, v - lo)], [max(0.0, hi - v)]] if lo is not None and hi is not None else None
            ax.errorbar([v], [y], xerr=err, fmt="o", color="#1a7f37", capsize=3, label="measured (95% CI)")
        ax.annotate(scale(v), (v, y), xytext=(6, 0), textcoords="offset points", va="center", fontsize=6.5)
    ax.set_yticks(ys, labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlim(left=0, right=max(r["normalised"] for r in rows) * 1.2)
    from matplotlib.ticker import StrMethodFormatter

    ax.xaxis.set_major_formatter(StrMethodFormatter("{x:,.0f}"))  # 7,000, never 7000 or 1e4
    ax.set_xlabel(unit or "value")
    ax.set_ylabel("system (rank order)")
    ax.set_title(title)
    handles, names = ax.get_legend_handles_labels()
    seen = dict(zip(names, handles, strict=True))  # one legend entry per kind of mark, under the axes
    fig.legend(
        seen.values(), seen.keys(), loc="upper center", bbox_to_anchor=(0.5, 0), ncol=2, fontsize=7, frameon=False
    )
    return fig


def ranking(section: Section) -> list[tuple[str, str]]:
    out = []
    for (model, mode, shape, batch), rows in list(groups(section.rows).items())[:MAX_CHARTS]:
        title = f"{model} · {mode or shape} · batch {batch}"
        more = f" (best {MAX_MARKS} of {len(rows)})" if len(rows) > MAX_MARKS else ""
        out.append((f"{title}: one mark per result{more}", figures.svg(draw(rows, title))))
    return out

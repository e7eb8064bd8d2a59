"""The serving report's plots: per workload, output-token throughput per device against
interactivity (each configuration's curve and Pareto front) and TTFT against load."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from benchdb.reports import figures
from benchdb.reports.document import Section


def curves(rows: list[dict], extra: tuple[str, ...] = ()) -> dict[str, dict[str, list[dict]]]:
    """workload (+ extra keys) -> configuration and load kind -> its load points in order of load
    (a closed-loop and an open-loop sweep of one configuration are two curves)."""
    out: dict[str, dict[str, list[dict]]] = defaultdict(lambda: defaultdict(list))
    for r in sorted(rows, key=lambda r: r.get("load_value") or 0):
        head = " · ".join([r["workload"], *(str(r.get(k)) for k in extra)])
        label = r["config"] + ("" if not r.get("options_id") else f" [{str(r['options_id'])[:6]}]")
        if r.get("measured_by") not in (None, "benchdb"):
            label += f" ({r['measured_by']})"
        if "load_kind" not in extra and r.get("load_kind") == "rate":
            label += " (open loop)"
        if r.get("curve_point") is not None:
            label += " (--curve)"
        out[head][label].append(r)
    return out


def points_plots(section: Section) -> list[tuple[str, str]]:
    """Per workload: output-token throughput per device against interactivity (one line per
    configuration, x bars: the interactivity CI), and TTFT p50 against load with its 95 % CI band."""
    rows = [r for r in section.rows if r.get("load_value") is not None]
    if not rows:
        return []
    plt = figures.pyplot()
    out = []
    for head, configs in list(curves(rows).items())[:8]:
        fig, ax = plt.subplots(figsize=(7, 3.2))
        labels: list[tuple[str, float, float]] = []
        for label, pts in list(configs.items())[: figures.MAX_SERIES]:
            pts = [p for p in pts if p.get("interactivity") and p.get("output_throughput_per_device") is not None]
            if not pts:
                continue
            xerr = figures.yerr(pts, "interactivity", "interactivity_ci_low", "interactivity_ci_high")
            ax.errorbar(
                [p["interactivity"] for p in pts],
                [p["output_throughput_per_device"] for p in pts],
                xerr=xerr,
                marker="o",
                capsize=2,
                label=figures.short(label, 72),
            )
            labels += [(p["load"] or "", p["interactivity"], p["output_throughput_per_device"]) for p in pts]
        _annotate_apart(ax, labels)
        ax.set_xlabel("interactivity (tokens/s per user)")
        ax.set_ylabel("output throughput (tokens/s per device)")
        ax.set_title(figures.short(f"Throughput vs interactivity: {head}", 90))
        figures.legend_below(fig, ax, len(configs))
        out.append(
            (f"Output-token throughput per device against interactivity: {head}; bars: 95% CI", figures.svg(fig))
        )
    for head, configs in list(curves(rows, ("load_kind",)).items())[:8]:
        fig, ax = plt.subplots(figsize=(7, 3.2))
        unit = "concurrent requests"
        for label, pts in list(configs.items())[: figures.MAX_SERIES]:
            pts = [p for p in pts if p.get("ttft_p50_s") is not None]
            if not pts:
                continue
            unit = "concurrent requests" if pts[0]["load_kind"] == "concurrency" else "requests/s"
            xs = [p["load_value"] for p in pts]
            line = ax.plot(xs, [p["ttft_p50_s"] * 1e3 for p in pts], marker="o", label=figures.short(label, 72))
            band = [
                p for p in pts if p.get("ttft_p50_ci_low_s") is not None and p.get("ttft_p50_ci_high_s") is not None
            ]
            if band:
                ax.fill_between(
                    [p["load_value"] for p in band],
                    [p["ttft_p50_ci_low_s"] * 1e3 for p in band],
                    [p["ttft_p50_ci_high_s"] * 1e3 for p in band],
                    color=line[0].get_color(),
                    alpha=0.2,
                )
        _mark_curves(ax, configs)
        ax.set_xlabel(f"load ({unit})")
        ax.set_ylabel("TTFT p50 (ms)")
        ax.set_title(figures.short(f"TTFT vs load: {head}", 90))
        figures.legend_below(fig, ax, len(configs))
        out.append((f"TTFT p50 against load: {head}; band: 95% CI of the median", figures.svg(fig)))
    return out


def _annotate_apart(ax: Any, labels: list[tuple[str, float, float]], apart_px: float = 12.0) -> None:
    """Each point's load beside it, but none within ``apart_px`` of one already written: points of a
    curve that bunch together would print their labels over each other."""
    ax.autoscale_view()
    placed: list[tuple[float, float]] = []
    for text, x, y in labels:
        px, py = ax.transData.transform((x, y))
        if text and all(abs(px - qx) > apart_px or abs(py - qy) > apart_px for qx, qy in placed):
            placed.append((px, py))
            ax.annotate(text, (x, y), fontsize=5, xytext=(3, 3), textcoords="offset points")


def _mark_curves(ax: Any, configs: dict[str, list[dict]]) -> None:
    """A `--curve`'s load axis in log2, as its regions are spread, and its probe's highest useful
    concurrency as a dotted line."""
    highest = {int(h) for pts in configs.values() for p in pts if (h := p.get("curve_highest_useful")) is not None}
    if not highest:
        return
    from matplotlib.ticker import FuncFormatter

    ax.set_xscale("log", base=2)
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    for h in sorted(highest):
        ax.axvline(h, color="#59636e", linestyle=":", linewidth=1)
        ax.annotate(
            f"highest useful: {h}",
            (h, 1),
            xycoords=("data", "axes fraction"),
            fontsize=6,
            xytext=(2, -8),
            textcoords="offset points",
        )


def frontier_plots(section: Section) -> list[tuple[str, str]]:
    """Per workload: every configuration's front, the overall front joined by a dashed line."""
    if not section.rows:
        return []
    plt = figures.pyplot()
    out = []
    by_head: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in section.rows:
        by_head[r["workload"]].append(r)
    for head, rows in list(by_head.items())[:8]:
        fig, ax = plt.subplots(figsize=(7, 3.2))
        configs = curves(rows)[head]
        for label, pts in list(configs.items())[: figures.MAX_SERIES]:
            pts = sorted(pts, key=lambda p: p["interactivity"])
            ax.plot(
                [p["interactivity"] for p in pts],
                [p["output_throughput_per_device"] for p in pts],
                marker="o",
                label=figures.short(label, 60),
            )
        front = sorted((r for r in rows if r.get("on_overall_front")), key=lambda p: p["interactivity"])
        if front:
            ax.plot(
                [p["interactivity"] for p in front],
                [p["output_throughput_per_device"] for p in front],
                color="#59636e",
                linestyle="--",
                linewidth=1,
                label="overall front",
            )
        ax.set_xlabel("interactivity (tokens/s per user)")
        ax.set_ylabel("output throughput (tokens/s per device)")
        ax.set_title(figures.short(f"Serving frontier: {head}", 90))
        figures.legend_below(fig, ax, len(configs) + 1)
        out.append(
            (f"Pareto fronts of throughput per device against interactivity: {head}; dashed: overall", figures.svg(fig))
        )
    return out

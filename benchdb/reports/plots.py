"""Inline SVG plots for the HTML report (matplotlib, optional).

Text is drawn as paths (svg.fonttype = 'path'), so a hostile model name can never become markup.
Every figure's root <svg> carries what it shows as escaped attributes read back from the figure itself
(data-title; data-axes: each axes' x/y label and whether the axis is numeric), so a browser test can
check that every plot has a title and axis labels with formatting.
"""

from __future__ import annotations

import math
from collections import defaultdict

from benchdb import formatting
from benchdb.analysis.frontier import pareto_front
from benchdb.reports.document import Report, Section
from benchdb.reports.figures import MAX_BARS, MAX_SERIES, RATING_COLORS, legend_below, pyplot, short, svg, yerr
from benchdb.reports.serving_plots import frontier_plots, points_plots
from benchdb.reports.system_plots import ranking


def _label(r: dict, batch: bool = True) -> str:
    """model · shape · bs · hardware / backend / mode / precision: nothing that tells two bars apart is left out."""
    bs = f" · bs={r['batch_size']}" if batch and r.get("batch_size") is not None else ""
    return f"{r.get('model_id')} · {r.get('input_shape')}{bs} · {_candidate(r)}"


def _batch_axis(ax, batches) -> None:
    """Log-2 batch axis labelled with the real batch sizes (1, 2, 4, 8), not 2^0..2^3."""
    from matplotlib.ticker import NullFormatter, ScalarFormatter

    ax.set_xscale("log", base=2)
    ax.set_xticks(sorted(set(batches)))
    ax.xaxis.set_major_formatter(ScalarFormatter())
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("batch size (items)")


def _candidate(r: dict) -> str:
    return f"{r.get('hardware_name')} / {r.get('backend')} / {r.get('mode')} / {r.get('precision')}"


def batch_scaling(section: Section) -> list[tuple[str, str]]:
    plt = pyplot()
    by_model: dict[str, dict[str, list]] = defaultdict(lambda: defaultdict(list))
    for r in section.rows:
        by_model[f"{r['model_id']} ({r['input_shape']})"][_candidate(r)].append(r)
    out = []
    for model, series in list(by_model.items())[:8]:
        if not any(len(points) > 1 for points in series.values()):
            continue
        fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(8, 3))
        lat = formatting.time_scale([p["latency_s"] for pts in series.values() for p in pts], axis=True)
        for label, points in list(series.items())[:MAX_SERIES]:
            xs = [p["batch_size"] for p in points]
            ys = [p["latency_s"] * lat.factor for p in points]
            err = yerr(points, "latency_s", "latency_ci_low_s", "latency_ci_high_s", lat.factor)
            ax1.errorbar(xs, ys, yerr=err, marker="o", capsize=2, label=label)
            # throughput = batch / median: its interval is the latency interval inverted
            terr = (
                None
                if err is None
                else [
                    [
                        max(0.0, p["throughput"] - p["batch_size"] / p["latency_ci_high_s"])
                        if p.get("latency_ci_high_s")
                        else 0.0
                        for p in points
                    ],
                    [
                        p["batch_size"] / p["latency_ci_low_s"] - p["throughput"] if p.get("latency_ci_low_s") else 0.0
                        for p in points
                    ],
                ]
            )
            ax2.errorbar(xs, [p["throughput"] for p in points], yerr=terr, marker="o", capsize=2)
        for ax, name in ((ax1, f"median latency ({lat.unit})"), (ax2, "throughput (items/s)")):
            _batch_axis(ax, [p["batch_size"] for pts in series.values() for p in pts])
            ax.set_ylabel(name)
        ax1.set_title("Latency (95% CI)")
        ax2.set_title("Throughput (95% CI)")
        fig.suptitle(short(model, 80), y=1.06)
        legend_below(fig, ax1, len(series))
        out.append((f"Latency and throughput vs batch size: {model}; bars: 95% CI of the median", svg(fig)))
    return out


def _bars(rows: list[dict], label_fn, value_fn, xlabel: str, title: str, ref: float | None = None) -> str:
    plt = pyplot()
    rows = rows[:MAX_BARS]
    fig, ax = plt.subplots(figsize=(8, 0.25 * len(rows) + 1))
    ys = list(range(len(rows)))
    ax.barh(ys, [value_fn(r) for r in rows], color="#0969da")
    ax.set_yticks(ys, [short(label_fn(r), 90) for r in rows])
    ax.invert_yaxis()
    if ref is not None:
        ax.axvline(ref, color="#59636e", linestyle="--", linewidth=1)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("model · shape · batch · hardware / backend / mode / precision")
    ax.set_title(title)
    return svg(fig)


def speedup(section: Section) -> list[tuple[str, str]]:
    rows = [r for r in section.rows if r["speedup"] is not None]
    if not rows:
        return []
    svg = _bars(
        rows,
        _label,
        lambda r: r["speedup"],
        "speedup vs CPU PyTorch eager fp32 (x)",
        "Speedup against CPU PyTorch eager fp32",
        ref=1.0,
    )
    return [("Speedup against the CPU PyTorch eager baseline (dashed line = 1x)", svg)]


def _value_interval(r: dict, prefix: str) -> tuple[float, float] | None:
    """The objective value's 95 % interval from the result's median interval (throughput = batch / median,
    the other objectives scale with the median)."""
    med, lo, hi = r.get(f"{prefix}_median_s"), r.get(f"{prefix}_median_ci_low_s"), r.get(f"{prefix}_median_ci_high_s")
    if prefix == "runner_up":
        return None
    v = r.get(f"{prefix}_value")
    if not (med and lo and hi and v):
        return None
    if r["objective"] == "throughput":
        return v * med / hi, v * med / lo
    return v * lo / med, v * hi / med


def optimal(section: Section) -> list[tuple[str, str]]:
    rows = [r for r in section.rows if r["best_value"] is not None]
    if not rows:
        return []
    plt = pyplot()
    rows = rows[: MAX_BARS // 2]
    fig, ax = plt.subplots(figsize=(8, 0.6 * len(rows) + 1.2))
    ys = list(range(len(rows)))
    best = [r["best_value"] for r in rows]
    err = [[0.0] * len(rows), [0.0] * len(rows)]
    for i, r in enumerate(rows):
        iv = _value_interval(r, "best")
        if iv:
            err[0][i], err[1][i] = max(0.0, best[i] - iv[0]), max(0.0, iv[1] - best[i])
    ax.barh(
        [y - 0.2 for y in ys],
        best,
        height=0.4,
        color="#1a7f37",
        label="best",
        xerr=err,
        error_kw={"capsize": 2, "elinewidth": 0.8},
    )
    ax.barh(
        [y + 0.2 for y in ys], [r["runner_up_value"] or 0 for r in rows], height=0.4, color="#8c959f", label="runner-up"
    )
    for y, r in zip(ys, rows, strict=True):
        if r.get("runner_up_label"):  # which candidate the grey bar is, and whether it ties
            tag = "tie: " if r.get("margin_verdict") == "tie" else ""
            ax.text(
                r["runner_up_value"] or 0,
                y + 0.2,
                f"  {tag}{short(r['runner_up_label'], 60)}",
                va="center",
                fontsize=6,
                color="#59636e",
            )
    ax.set_yticks(
        ys,
        [
            short(
                f"{r['model_id']} · {r['input_shape']} · bs={r['batch_size']}\n"
                f"{r['best_hardware']} / {r['best_backend']} / {r['best_mode']} / {r['best_precision']}",
                120,
            )
            for r in rows
        ],
    )
    ax.invert_yaxis()
    values = [v for r in rows for v in (r["best_value"], r["runner_up_value"]) if v]
    if values and min(values) > 0 and max(values) / min(values) > 50:
        ax.set_xscale("log")
    ax.set_xlabel(f"{rows[0]['objective']} ({rows[0]['unit']})")
    ax.set_ylabel("model · shape · batch: best candidate")
    ax.set_title(f"Best and runner-up by {rows[0]['objective']} (error bars: 95% CI)")
    legend_below(fig, ax, 2)
    out = [("Best (green, 95% CI) and runner-up (grey, labelled) per model, shape and batch size", svg(fig))]
    return out + pareto(section.extra.get("pareto", []))


def pareto(points: list[dict]) -> list[tuple[str, str]]:
    """Latency against throughput per model and shape: every candidate and batch size a point, the
    Pareto front (nothing both faster and higher-throughput exists) joined by a line."""
    if not points:
        return []
    plt = pyplot()
    by_model: dict[str, list[dict]] = defaultdict(list)
    for p in points:
        by_model[f"{p['model_id']} · {p['input_shape']}"].append(p)
    out = []
    for model, pts in list(by_model.items())[:8]:
        if len(pts) < 2:
            continue
        fig, ax = plt.subplots(figsize=(7, 3.2))
        lat = formatting.time_scale([p["latency_s"] for p in pts], axis=True)
        groups: dict[str, list[dict]] = defaultdict(list)
        for p in pts:
            groups[_candidate(p)].append(p)
        for label, g in list(groups.items())[:MAX_SERIES]:
            ax.errorbar(
                [p["latency_s"] * lat.factor for p in g],
                [p["throughput"] for p in g],
                xerr=yerr(g, "latency_s", "latency_ci_low_s", "latency_ci_high_s", lat.factor),
                marker="o",
                linestyle="none",
                capsize=2,
                label=label,
            )
            for p in g:
                ax.annotate(
                    f"bs={p['batch_size']}",
                    (p["latency_s"] * lat.factor, p["throughput"]),
                    fontsize=5,
                    xytext=(3, 3),
                    textcoords="offset points",
                )
        # lower latency is better: the front of (-latency, throughput), drawn by rising latency
        front = [pts[i] for i in reversed(pareto_front([(-p["latency_s"], p["throughput"]) for p in pts]))]
        ax.plot(
            [p["latency_s"] * lat.factor for p in front],
            [p["throughput"] for p in front],
            color="#59636e",
            linestyle="--",
            linewidth=1,
            label="Pareto front",
        )
        ax.set_xlabel(f"median latency ({lat.unit})")
        ax.set_ylabel("throughput (items/s)")
        ax.set_title(short(f"Latency vs throughput: {model}", 90))
        legend_below(fig, ax, len(groups) + 1)
        out.append((f"Latency against throughput: {model}; dashed: the Pareto front; bars: 95% CI", svg(fig)))
    return out


def memory(section: Section) -> list[tuple[str, str]]:
    if not section.rows:
        return []
    svg = _bars(section.rows, _label, lambda r: r["peak_memory_bytes"] / 2**20, "peak memory (MiB)", "Peak memory")
    return [("Peak memory per model, batch size and hardware/backend", svg)]


def matrix(section: Section) -> list[tuple[str, str]]:
    if not section.rows:
        return []
    plt = pyplot()
    from matplotlib.colors import ListedColormap

    rows_keys = sorted({(r["family"], r["model_type"]) for r in section.rows})
    cols_keys = sorted({(r["hardware_name"], r["backend"]) for r in section.rows})
    grid = [[math.nan] * len(cols_keys) for _ in rows_keys]
    names = [[""] * len(cols_keys) for _ in rows_keys]
    for r in section.rows:
        i, j = rows_keys.index((r["family"], r["model_type"])), cols_keys.index((r["hardware_name"], r["backend"]))
        grid[i][j] = r["rating"]
        names[i][j] = r.get("rating_label") or ""
    fig, ax = plt.subplots(figsize=(1.2 * len(cols_keys) + 2.5, 0.35 * len(rows_keys) + 1.5))
    cmap = ListedColormap([RATING_COLORS[i] for i in range(4)]).with_extremes(bad="#ffffff")  # never tried: empty
    ax.imshow(grid, cmap=cmap, vmin=-0.5, vmax=3.5, aspect="auto")
    ax.set_xticks(range(len(cols_keys)), [short(f"{h} / {b}", 30) for h, b in cols_keys], rotation=30, ha="right")
    ax.set_yticks(range(len(rows_keys)), [f"{f} / {m}" for f, m in rows_keys])
    for i, row in enumerate(grid):
        for j, v in enumerate(row):
            if not math.isnan(v):  # the view's own label: rating 0 is "broken" or "unrated"
                ax.text(j, i, names[i][j], ha="center", va="center", fontsize=7, color="white")
    ax.set_title("Compatibility (blank = never tried)")
    ax.set_xlabel("hardware / backend")
    ax.set_ylabel("family / model type")
    return [("Compatibility heat map: family / model type x hardware / backend", svg(fig))]


def trends(section: Section) -> list[tuple[str, str]]:
    if not section.rows:
        return []
    plt = pyplot()
    series: dict[str, list[dict]] = defaultdict(list)
    for r in section.rows:
        series[r["series_id"]].append(r)
    fig, ax = plt.subplots(figsize=(8, 3.5))
    marked = set()
    shown = list(series.values())[:MAX_SERIES]
    lat = formatting.time_scale([p["median"] for points in shown for p in points], axis=True)
    for points in shown:
        xs = [p["run_started_at"] for p in points]
        ax.errorbar(
            xs,
            [p["median"] * lat.factor for p in points],
            marker="o",
            capsize=2,
            label=_label(points[0]),
            yerr=yerr(points, "median", "median_ci_low", "median_ci_high", lat.factor),
        )
        for p in points:
            if p.get("change_point"):
                acked = p.get("change_status") == "acked"
                kind = "acknowledged change point" if acked else "open change point"
                ax.axvline(
                    p["run_started_at"],
                    color="#59636e" if acked else "#cf222e",
                    linestyle="--" if acked else ":",
                    linewidth=1,
                    label=None if kind in marked else kind,
                )
                marked.add(kind)
    ax.set_ylabel(f"median latency ({lat.unit})")
    ax.set_xlabel("run started (UTC)")
    ax.set_title("Median latency over runs (95% CI)")
    formatting.date_axis(ax)
    legend_below(fig, ax, len(series) + len(marked))
    return [("Median latency over runs; red dotted: open change points, grey dashed: acknowledged ones", svg(fig))]


def drilldown(r: dict) -> str | None:
    """One result's samples: a histogram (one colour per process) with the median and its interval,
    and the ECDF."""
    groups = [g for g in r.get("samples") or [] if g]
    if not groups:
        return None
    plt = pyplot()
    if r.get("unit") == "s":
        lat = formatting.time_scale([v for g in groups for v in g], axis=True)
        scale, unit = lat.factor, lat.unit
    else:
        scale, unit = 1.0, r.get("unit") or "value"
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(7, 2.4))
    data = [[v * scale for v in g] for g in groups]
    labels = [f"process {i}" for i in range(len(data))] if len(data) > 1 else ["samples"]
    # one outlier must not put every other sample in one bar: the histogram shows the central
    # CLIP range and says how many samples lie outside it (the ECDF beside it shows them all)
    lo, hi, outside = formatting.clip_range([v for g in data for v in g])
    ax1.hist(data, bins=30, range=(lo, hi) if hi > lo else None, stacked=True, label=labels)
    for key, style in (("median", "-"), ("median_ci_low", ":"), ("median_ci_high", ":")):
        if r.get(key) is not None:
            ax1.axvline(r[key] * scale, color="#cf222e", linestyle=style, linewidth=1)
    ax1.set_xlabel(f"{r.get('metric')} ({unit})")
    ax1.set_ylabel("samples (count)")
    total = sum(len(g) for g in data)
    ax1.set_title("Distribution (red: median, 95% CI)\n" + formatting.clip_note(outside, total), fontsize=7)
    for g, label in zip(data, labels, strict=True):
        xs = sorted(g)
        ax2.step(xs, [(i + 1) / len(xs) for i in range(len(xs))], where="post", label=label)
    ax2.set_xlabel(f"{r.get('metric')} ({unit})")
    ax2.set_ylabel("fraction of samples (0-1)")
    ax2.set_title("ECDF")
    fig.suptitle(short(_label(r), 100), y=1.06)
    if len(data) > 1:
        legend_below(fig, ax1, len(data))
    return svg(fig)


PLOTTERS = {
    "batch_scaling": batch_scaling,
    "speedup": speedup,
    "optimal_hardware": optimal,
    "system_ranking": ranking,
    "memory": memory,
    "compat_matrix": matrix,
    "trends": trends,
    "serving_points": points_plots,
    "serving_frontier": frontier_plots,
}


def attach(report: Report) -> list[str]:
    """Draw every section's plots into it; returns notes when plots cannot be drawn."""
    try:
        pyplot()
    except ImportError:
        return ["Plots are missing: matplotlib is not installed (pip install 'benchdb[plots]')."]
    for s in report.sections:
        fn = PLOTTERS.get(s.name)
        if fn:
            s.plots = fn(s)
    for r in report.drilldown:
        r["plot"] = drilldown(r)
    return []

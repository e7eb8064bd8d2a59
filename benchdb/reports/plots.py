"""Inline SVG plots for the HTML report (matplotlib, optional).

Text is drawn as paths (svg.fonttype = 'path'), so a hostile model name can never become markup.
"""

from __future__ import annotations

import io
import math
from collections import defaultdict

from benchdb.reports.build import Report, Section

MAX_SERIES = 10
MAX_BARS = 40
RATING_COLORS = {0: "#cf222e", 1: "#d4a72c", 2: "#8cc265", 3: "#1a7f37"}


def _plt():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    plt.rcParams.update({"svg.fonttype": "path", "font.size": 8, "axes.spines.top": False,
                         "axes.spines.right": False, "svg.hashsalt": "benchdb"})
    return plt


def _svg(fig) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    _plt().close(fig)
    text = buf.getvalue()
    return text[text.index("<svg"):]


def _short(text: str, n: int = 38) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def _candidate(r: dict) -> str:
    return f"{r.get('hardware_name')} / {r.get('backend')} / {r.get('mode')} / {r.get('precision')}"


def scaling(section: Section) -> list[tuple[str, str]]:
    plt = _plt()
    by_model: dict[str, dict[str, list]] = defaultdict(lambda: defaultdict(list))
    for r in section.rows:
        by_model[f"{r['model_id']} ({r['input_shape']})"][_candidate(r)].append(r)
    out = []
    for model, series in list(by_model.items())[:8]:
        if not any(len(points) > 1 for points in series.values()):
            continue
        fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(8, 3))
        for label, points in list(series.items())[:MAX_SERIES]:
            xs = [p["batch_size"] for p in points]
            ax1.plot(xs, [p["latency_s"] * 1e3 for p in points], marker="o", label=_short(label))
            ax2.plot(xs, [p["throughput"] for p in points], marker="o", label=_short(label))
        for ax, name in ((ax1, "latency (ms)"), (ax2, "throughput (items/s)")):
            ax.set_xscale("log", base=2)
            ax.set_xlabel("batch size")
            ax.set_ylabel(name)
        ax2.legend(fontsize=6, loc="best")
        fig.suptitle(_short(model, 80))
        out.append((f"Latency and throughput vs batch size: {model}", _svg(fig)))
    return out


def _bars(rows: list[dict], label_fn, value_fn, xlabel: str, title: str, ref: float | None = None) -> str:
    plt = _plt()
    rows = rows[:MAX_BARS]
    fig, ax = plt.subplots(figsize=(8, 0.25 * len(rows) + 1))
    ys = list(range(len(rows)))
    ax.barh(ys, [value_fn(r) for r in rows], color="#0969da")
    ax.set_yticks(ys, [_short(label_fn(r), 70) for r in rows])
    ax.invert_yaxis()
    if ref is not None:
        ax.axvline(ref, color="#59636e", linestyle="--", linewidth=1)
    ax.set_xlabel(xlabel)
    ax.set_title(title)
    return _svg(fig)


def speedup(section: Section) -> list[tuple[str, str]]:
    rows = [r for r in section.rows if r["speedup"] is not None]
    if not rows:
        return []
    svg = _bars(rows, lambda r: f"{r['model_id']} bs={r['batch_size']} · {_candidate(r)}",
                lambda r: r["speedup"], "speedup vs CPU PyTorch eager fp32 (x)", "Speedup", ref=1.0)
    return [("Speedup against the CPU PyTorch eager baseline (dashed line = 1x)", svg)]


def optimal(section: Section) -> list[tuple[str, str]]:
    rows = [r for r in section.rows if r["best_value"] is not None]
    if not rows:
        return []
    plt = _plt()
    rows = rows[:MAX_BARS // 2]
    fig, ax = plt.subplots(figsize=(8, 0.45 * len(rows) + 1))
    ys = list(range(len(rows)))
    ax.barh([y - 0.2 for y in ys], [r["best_value"] for r in rows], height=0.4, color="#1a7f37", label="best")
    ax.barh([y + 0.2 for y in ys], [r["runner_up_value"] or 0 for r in rows], height=0.4, color="#8c959f",
            label="runner-up")
    ax.set_yticks(ys, [_short(f"{r['model_id']} bs={r['batch_size']}: {r['best_hardware']} / {r['best_backend']}", 70)
                       for r in rows])
    ax.invert_yaxis()
    values = [v for r in rows for v in (r["best_value"], r["runner_up_value"]) if v]
    if values and min(values) > 0 and max(values) / min(values) > 50:
        ax.set_xscale("log")
    ax.set_xlabel(f"{rows[0]['objective']} ({rows[0]['unit']})")
    ax.legend(fontsize=7)
    return [("Hardware comparison: best and runner-up per model and batch size", _svg(fig))]


def memory(section: Section) -> list[tuple[str, str]]:
    if not section.rows:
        return []
    svg = _bars(section.rows, lambda r: f"{r['model_id']} bs={r['batch_size']} · {_candidate(r)}",
                lambda r: r["peak_memory_bytes"] / 2**20, "peak memory (MiB)", "Peak memory")
    return [("Peak memory per model, batch size and hardware/backend", svg)]


def matrix(section: Section) -> list[tuple[str, str]]:
    if not section.rows:
        return []
    plt = _plt()
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
    cmap = ListedColormap([RATING_COLORS[i] for i in range(4)])
    cmap = cmap.with_extremes(bad="#ffffff")      # never tried: left empty
    ax.imshow(grid, cmap=cmap, vmin=-0.5, vmax=3.5, aspect="auto")
    ax.set_xticks(range(len(cols_keys)), [_short(f"{h} / {b}", 30) for h, b in cols_keys], rotation=30, ha="right")
    ax.set_yticks(range(len(rows_keys)), [f"{f} / {m}" for f, m in rows_keys])
    for i, row in enumerate(grid):
        for j, v in enumerate(row):
            if not math.isnan(v):     # the view's own label: rating 0 is "broken" or "unrated"
                ax.text(j, i, names[i][j], ha="center", va="center", fontsize=7, color="white")
    ax.set_title("Compatibility (blank = never tried)")
    return [("Compatibility heat map: family / model type x hardware / backend", _svg(fig))]


def trends(section: Section) -> list[tuple[str, str]]:
    if not section.rows:
        return []
    plt = _plt()
    series: dict[str, list[dict]] = defaultdict(list)
    for r in section.rows:
        series[r["series_id"]].append(r)
    fig, ax = plt.subplots(figsize=(8, 3.5))
    for sid, points in list(series.items())[:MAX_SERIES]:
        p0 = points[0]
        label = _short(f"{p0['model_id']} bs={p0['batch_size']} · {p0['hardware_name']} / {p0['backend']}", 60)
        xs = [p["run_started_at"] for p in points]
        ax.plot(xs, [p["median"] * 1e3 for p in points], marker="o", label=label)
        for p in points:
            if p.get("change_point"):
                ax.axvline(p["run_started_at"], color="#cf222e", linestyle=":", linewidth=1)
    ax.set_ylabel("median latency (ms)")
    ax.legend(fontsize=6)
    fig.autofmt_xdate()
    return [("Median latency over runs (dotted red lines: change points)", _svg(fig))]


PLOTTERS = {"batch_scaling": scaling, "speedup": speedup, "optimal_hardware": optimal, "memory": memory,
            "compat_matrix": matrix, "trends": trends}


def attach(report: Report) -> list[str]:
    """Draw every section's plots into it; returns notes when plots cannot be drawn."""
    try:
        _plt()
    except ImportError:
        return ["Plots are missing: matplotlib is not installed (pip install 'benchdb[plots]')."]
    for s in report.sections:
        fn = PLOTTERS.get(s.name)
        if fn:
            s.plots = fn(s)
    return []

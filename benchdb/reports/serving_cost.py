"""`report --serving --cost-at N`: each serving configuration's throughput and $ per million tokens
at N tokens/s per user, read along its Pareto front as the field reads it
(:mod:`benchdb.analysis.frontier`): interpolated between front points (never a measurement, and
labelled so), measured where a point sits at N, the nearest end point where N is outside the front
(clamped, labelled so)."""

from __future__ import annotations

from itertools import groupby

from benchdb.analysis import frontier
from benchdb.reports.document import Column, Filters, Section, section_rows
from benchdb.reports.serving_rows import config, workload
from benchdb.text import plural

_KEY = (
    "model_id",
    "endpoint",
    "in_tokens",
    "out_tokens",
    "hardware_name",
    "engine",
    "precision",
    "options_id",
    "source",
)
_FIGURES = ("total_per_gpu", "output_per_gpu", "input_per_gpu")


def _price(f: Filters, r: dict) -> float | None:
    """USD per GPU-hour: the accelerator's (--prices accelerator_hour); else a ``system_hour`` price
    over the GPUs the point used; else a flat map's price for the hardware, per device-hour as the
    serving SLO table reads it."""
    for name in (r.get("accelerator"), r.get("hardware_name")):
        if name and name in f.accelerator_prices:
            return f.accelerator_prices[name]
    price = f.prices.get(r.get("hardware_name") or "")
    if price is not None and f.prices_per_system:
        return price / r["gpus"] if r.get("gpus") else None
    return price


def cost_rows(points: list[dict], f: Filters, target: float) -> list[dict]:
    """One row per configuration: its figures at ``target`` interactivity and what they cost."""
    out = []
    for _, group in groupby(points, key=lambda r: tuple(r.get(k) for k in _KEY)):
        pts = list(group)
        # the front of all tokens per GPU, as the field draws it; a source that publishes output
        # tokens only (MLPerf Endpoints' system_tps) is read on its output front
        on = "total_per_gpu" if all(p["total_per_gpu"] is not None for p in pts) else "output_per_gpu"
        got = frontier.at_interactivity(
            [p["interactivity"] for p in pts], {k: [p[k] for p in pts] for k in _FIGURES}, target, on
        )
        if got is None:
            continue
        first, price = pts[0], _price(f, pts[0])
        row = {k: first.get(k) for k in (*_KEY, "accelerator")}
        row.update(
            interactivity=target,
            how=got.how,
            front_on=on,
            points=len(pts),
            from_results=[pts[i]["result_id"] for i in got.between],
            usd_per_gpu_hour=price,
            **{k: got.values[k] for k in _FIGURES},
            usd_per_m_total=frontier.usd_per_million_tokens(price, got.values["total_per_gpu"]),
            usd_per_m_output=frontier.usd_per_million_tokens(price, got.values["output_per_gpu"]),
            usd_per_m_input=frontier.usd_per_million_tokens(price, got.values["input_per_gpu"]),
            config=config({**first, "devices": None}),
            workload=workload(first),
        )
        out.append(row)
    out.sort(
        key=lambda r: (
            r["workload"],
            r["usd_per_m_total"] is None,
            r["usd_per_m_total"] or 0,
            -(r["total_per_gpu"] or 0),
        )
    )
    return out


def cost_section(con, f: Filters) -> Section:
    target = f.cost_at
    assert target is not None
    _, points = section_rows(con, "serving_cost_points", f.params())
    rows = cost_rows(points, f, target)
    notes = []
    if not f.prices and not f.accelerator_prices:
        notes.append("No --prices: throughputs only; a prices file (USD per GPU-hour) gives $ per million tokens.")
    elif rows:
        notes.append(f"Prices: {f.prices_source or 'the --prices file (it names no source)'}.")
        missing = sorted({r["hardware_name"] for r in rows if r["usd_per_gpu_hour"] is None})
        if missing:
            notes.append("no price for: " + ", ".join(missing))
    clamped = sum(r["how"] == "clamped" for r in rows)
    if clamped:
        one = clamped == 1
        notes.append(
            f"{plural(clamped, 'configuration')} never {'reaches' if one else 'reach'} {target:g} tokens/s per user "
            f"on {'its' if one else 'their'} front (or never {'goes' if one else 'go'} below it): "
            f"{'its' if one else 'their'} figures are the nearest measured end (clamped), not a reading at it."
        )
    return Section(
        "serving_cost",
        f"Cost at {target:g} tokens/s per user",
        "Per configuration, its throughput per GPU at this interactivity read along its Pareto front "
        "(throughput per GPU against tokens/s per user, 1 / TPOT p50): a monotone cubic spline between "
        "front points (interpolated: an estimate between measurements), a front point itself "
        "(measured), or the nearest end of the front where it does not reach (clamped). $ per million "
        "tokens = USD per GPU-hour (--prices) x 1e6 / (tokens/s per GPU x 3600), for all tokens, "
        "output tokens and input tokens; cheapest first.",
        [
            Column("workload", "workload"),
            Column("hardware / engine / precision", "config"),
            Column("source", "source"),
            Column("reading", "how"),
            Column("tok/s/GPU", "total_per_gpu", "num"),
            Column("out tok/s/GPU", "output_per_gpu", "num"),
            Column("$/M tokens", "usd_per_m_total", "num"),
            Column("$/M output", "usd_per_m_output", "num"),
            Column("$/M input", "usd_per_m_input", "num", compact=False),
            Column("$/GPU-hour", "usd_per_gpu_hour", "num", compact=False),
        ],
        [
            *_KEY,
            "accelerator",
            "interactivity",
            "how",
            "front_on",
            "points",
            "from_results",
            "usd_per_gpu_hour",
            *_FIGURES,
            "usd_per_m_total",
            "usd_per_m_output",
            "usd_per_m_input",
        ],
        rows,
        notes=notes,
        empty="No serving configuration has load points with both a throughput per GPU and a TPOT.",
    )

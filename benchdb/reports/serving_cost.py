"""`report --serving --cost-at N`: each serving configuration's throughput and $ per million tokens
at N tokens/s per user, read along its Pareto front as the field reads it
(:mod:`benchdb.analysis.frontier`): interpolated between front points (never a measurement, and
labelled so), measured where a point sits at N, the nearest end point where N is outside the front
(clamped, labelled so)."""

from __future__ import annotations

from itertools import groupby

from benchdb.analysis import frontier, system_power
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


#: One --prices file: (system or hardware prices, accelerator prices, its source label, per system).
PriceList = tuple[dict[str, float], dict[str, float], "str | None", bool]


def price_lists(f: Filters) -> list[PriceList]:
    """Every price source of --prices, the first as the report's own, each with its label (a folder's
    are labelled by price_filters); none when no prices were given."""
    first: PriceList = (f.prices, f.accelerator_prices, f.prices_source, f.prices_per_system)
    given = f.prices or f.accelerator_prices or f.more_prices
    lists = [first, *f.more_prices] if given else []
    return [(s, a, label or "the --prices file (it names no source)", per) for s, a, label, per in lists]


def _price(prices: PriceList, r: dict) -> float | None:
    """USD per GPU-hour: the accelerator's (accelerator_hour); else a ``system_hour`` price over the
    GPUs the point used; else a flat map's price for the hardware, per device-hour as the serving SLO
    table reads it."""
    system, accelerator, _, per_system = prices
    for name in (r.get("accelerator"), r.get("hardware_name")):
        if name and name in accelerator:
            return accelerator[name]
    price = system.get(r.get("hardware_name") or "")
    if price is not None and per_system:
        return price / r["gpus"] if r.get("gpus") else None
    return price


def _unmodelled(gpu_w: float | None, why: str) -> dict:
    """A row's power figures where no facility power is had, and why."""
    return {"gpu_w": gpu_w, "facility_w_per_gpu": None, "power_from": None, "power_basis": None, "power_why": why}


def _power(pts: list[dict], got: frontier.AtInteractivity, target: float, model) -> dict:
    """Power per GPU at the reading and tokens/s per MW of facility power: a system's provisioned
    power where its source's rules give one; else the GPU's mean power (a front point's, linear
    between the same two front points the throughput was read between, never another point's) through
    the chassis model (:mod:`benchdb.analysis.system_power`)."""
    knots = [pts[i] for i in got.between]
    first = knots[0]
    if first.get("provisioned_power_w") and first.get("gpus"):
        per = first["provisioned_power_w"] / first["gpus"]
        return {
            "gpu_w": None,
            "facility_w_per_gpu": per,
            "power_from": "provisioned",
            "power_basis": "provisioned (source's rules)",
        }
    if any(k.get("accelerator_power_w") is None for k in knots):
        return _unmodelled(None, "no measured power")
    watts: list[float] = [k["accelerator_power_w"] for k in knots]
    gpu_w = watts[0]
    if len(knots) == 2:
        x0, x1 = knots[0]["interactivity"], knots[1]["interactivity"]
        gpu_w = watts[0] + (watts[1] - watts[0]) * (target - x0) / (x1 - x0)
    got_power = system_power.system_power(
        first.get("accelerator") or first.get("hardware_name"), gpu_w, first.get("gpus"), model=model
    )
    if isinstance(got_power, str):
        return _unmodelled(gpu_w, got_power)
    basis = f"measured GPU + modelled {got_power.chassis}, PUE {got_power.pue:g}"
    if got_power.extrapolated:
        basis += ", extrapolated to a full chassis"
    return {
        "gpu_w": gpu_w,
        "facility_w_per_gpu": got_power.facility_w,
        "power_from": "modelled, extrapolated" if got_power.extrapolated else "modelled",
        "power_basis": basis,
    }


def cost_rows(points: list[dict], f: Filters, target: float) -> list[dict]:
    """One row per configuration: its figures at ``target`` interactivity and what they cost."""
    out = []
    model = system_power.load(f.chassis) if f.chassis else system_power.shipped()
    lists = price_lists(f)
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
        first = pts[0]
        row = {k: first.get(k) for k in (*_KEY, "accelerator")}
        row.update(
            interactivity=target,
            how=got.how,
            front_on=on,
            points=len(pts),
            from_results=[pts[i]["result_id"] for i in got.between],
            **{k: got.values[k] for k in _FIGURES},
            config=config({**first, "devices": None}),
            workload=workload(first),
        )
        power = _power(pts, got, target, model)
        facility = power["facility_w_per_gpu"]
        row.update(
            power,
            tokens_per_s_per_mw=system_power.tokens_per_s_per_mw(got.values["total_per_gpu"], facility),
            output_tokens_per_s_per_mw=system_power.tokens_per_s_per_mw(got.values["output_per_gpu"], facility),
        )
        costed = []
        for prices in lists or [({}, {}, None, False)]:
            price = _price(prices, first)
            costed.append(
                {
                    **row,
                    "prices": prices[2] if lists else None,
                    "usd_per_gpu_hour": price,
                    "usd_per_m_total": frontier.usd_per_million_tokens(price, got.values["total_per_gpu"]),
                    "usd_per_m_output": frontier.usd_per_million_tokens(price, got.values["output_per_gpu"]),
                    "usd_per_m_input": frontier.usd_per_million_tokens(price, got.values["input_per_gpu"]),
                }
            )
        if len(costed) > 1:  # side by side: a row per source that prices it, one row where none does
            priced = [c for c in costed if c["usd_per_gpu_hour"] is not None]
            costed = priced or [{**costed[0], "prices": None}]
        out.extend(costed)
    out.sort(
        key=lambda r: (
            str(r["workload"]),
            r["usd_per_gpu_hour"] is None,
            str(r["prices"] or ""),
            r["usd_per_m_total"] is None,
            float(r["usd_per_m_total"] or 0),
            -float(r["total_per_gpu"] or 0),
        )
    )
    return out


def cost_section(con, f: Filters) -> Section:
    target = f.cost_at
    assert target is not None
    _, points = section_rows(con, "serving_cost_points", f.params())
    rows = cost_rows(points, f, target)
    lists = price_lists(f)
    notes = _cost_notes(f, lists, rows, target)
    return Section(
        "serving_cost",
        f"Cost at {target:g} tokens/s per user",
        "Per configuration, its throughput per GPU at this interactivity read along its Pareto front "
        "(throughput per GPU against tokens/s per user, 1 / TPOT p50): a monotone cubic spline between "
        "front points (interpolated: an estimate between measurements), a front point itself "
        "(measured), or the nearest end of the front where it does not reach (clamped). $ per million "
        "tokens = USD per GPU-hour (--prices) x 1e6 / (tokens/s per GPU x 3600), for all tokens, "
        "output tokens and input tokens; cheapest first (within each price source). tokens/s per MW = "
        "tokens/s per GPU x 1e6 / all-in W per GPU, for all tokens and for output tokens: a system's "
        "provisioned power where its source's rules define one (power: provisioned), else the GPU's "
        "measured mean power through benchdb's chassis model and PUE (power: modelled; --chassis).",
        [
            Column("workload", "workload"),
            Column("hardware / engine / precision", "config"),
            Column("source", "source"),
            *([Column("prices", "prices")] if len(lists) > 1 else []),
            Column("reading", "how"),
            Column("tok/s/GPU", "total_per_gpu", "num"),
            Column("out tok/s/GPU", "output_per_gpu", "num"),
            Column("$/M tokens", "usd_per_m_total", "num"),
            Column("$/M output", "usd_per_m_output", "num"),
            Column("$/M input", "usd_per_m_input", "num", compact=False),
            Column("$/GPU-hour", "usd_per_gpu_hour", "num", compact=False),
            Column("W/GPU", "gpu_w", "num", compact=False),
            Column("all-in W/GPU", "facility_w_per_gpu", "num", compact=False),
            Column("tok/s/MW", "tokens_per_s_per_mw", "num"),
            Column("out tok/s/MW", "output_tokens_per_s_per_mw", "num"),
            Column("power", "power_from"),
        ],
        [
            *_KEY,
            "accelerator",
            "interactivity",
            "how",
            "front_on",
            "points",
            "from_results",
            "prices",
            "usd_per_gpu_hour",
            *_FIGURES,
            "usd_per_m_total",
            "usd_per_m_output",
            "usd_per_m_input",
            "gpu_w",
            "facility_w_per_gpu",
            "power_from",
            "power_basis",
            "tokens_per_s_per_mw",
            "output_tokens_per_s_per_mw",
        ],
        rows,
        notes=notes,
        empty="No serving configuration has load points with both a throughput per GPU and a TPOT.",
    )


def _cost_notes(f: Filters, lists: list, rows: list[dict], target: float) -> list[str]:
    """What the cost section says under its table: the price sources (and who has no price), how
    power was counted, and which configurations were read at the end of their front."""
    notes = []
    if not lists:
        notes.append("No --prices: throughputs only; a prices file (USD per GPU-hour) gives $ per million tokens.")
    elif rows:
        named = [str(p[2]) for p in lists]
        notes.append(
            (
                "Prices: "
                if len(lists) == 1
                else "Price sources side by side, a row for each that prices a configuration: "
            )
            + "; ".join(named)
            + "."
        )
        missing = sorted({r["hardware_name"] for r in rows if r["usd_per_gpu_hour"] is None})
        if missing:
            notes.append(f"no price{' in any source' if len(lists) > 1 else ''} for: " + ", ".join(missing))
    bases = sorted({r["power_basis"] for r in rows if r.get("power_basis")})
    if bases:
        model = (
            f"your chassis model {f.chassis}"
            if f.chassis
            else "benchdb's chassis model (chassis.yaml): an estimate from public component specs, not a wall meter"
        )
        modelled = any(b.startswith("measured") for b in bases)
        notes.append(
            "Power (the 'power' column): tokens/s per MW of facility power; "
            + "; ".join(bases)
            + (f" ({model})." if modelled else ".")
        )
    unmodelled = sorted({r["power_why"] for r in rows if r.get("power_why") and r["power_why"] != "no measured power"})
    if unmodelled:
        notes.append("power not modelled: " + "; ".join(unmodelled))
    clamped = len({tuple(r.get(k) for k in _KEY) for r in rows if r["how"] == "clamped"})
    if clamped:
        one = clamped == 1
        notes.append(
            f"{plural(clamped, 'configuration')} never {'reaches' if one else 'reach'} {target:g} tokens/s per user "
            f"on {'its' if one else 'their'} front (or never {'goes' if one else 'go'} below it): "
            f"{'its' if one else 'their'} figures are the nearest measured end (clamped), not a reading at it."
        )
    return notes

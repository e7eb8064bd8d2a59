"""The optimal-hardware section: per model and batch size the best hardware / backend / mode /
precision under the objective and budgets, its runner-up, and whether the win is confirmed; with
``--per``, a throughput normalised per system, accelerator, watt or dollar-hour, and every system side
by side. A published (summary-only) figure is ranked beside benchdb's measurements but marked, and
never given an interval: it has no samples."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchdb import sql
from benchdb.errors import BenchdbError, clip
from benchdb.reports.document import Column, Filters, NothingToReport, Section, one_row, section_rows
from benchdb.reports.optimal_rows import (
    accuracy_notes,
    optimal_notes,
    optimal_row,
    per_unit,
    short_labels,
    unique_system_labels,
)
from benchdb.text import plural

OBJECTIVES = ("throughput", "latency", "energy", "cost")
#: The two price lists a structured --prices file may hold.
PRICE_LISTS = ("accelerator_hour", "system_hour")
#: What a structured --prices file may say of itself: where its prices come from, and when.
PRICE_NOTES = ("source", "as_of")


def load_prices(path: Path) -> tuple[dict[str, float], dict[str, float], str | None, bool]:
    """(USD per hour by system or hardware name, USD per accelerator-hour by accelerator name, the
    list's source and date as one label) from a YAML/JSON --prices file: a flat ``name: USD per
    hour`` map (each name a system or hardware), or ``accelerator_hour: {name: USD}`` and/or
    ``system_hour: {name: USD}``, with ``source`` and ``as_of`` naming where and when the prices
    were read (a report says it beside every cost), and whether the first list is explicitly per
    system (``system_hour``; a flat map names systems or hardware). Every price is a finite number
    above zero: a throughput is divided by it."""
    from benchdb.schema import documents

    try:
        data = documents.read_document(path)
    except documents.DocumentError as exc:
        raise BenchdbError(f"prices file {path} is {exc.problem}") from None
    except OSError as exc:
        raise BenchdbError(f"prices file {path} cannot be read ({exc.strerror or exc})") from None
    if isinstance(data, dict) and any(k in PRICE_LISTS for k in data):
        unknown = [k for k in data if k not in PRICE_LISTS + PRICE_NOTES]
        if unknown:
            raise BenchdbError(
                f"prices file {path}: unknown field {unknown[0]!r} (a price list is "
                f"{' or '.join(PRICE_LISTS)}: name -> USD per hour; {' and '.join(PRICE_NOTES)} describe it)"
            )
        lists = {}
        for key in PRICE_LISTS:
            got = data.get(key) or {}
            if not isinstance(got, dict):
                raise BenchdbError(
                    f"prices file {path}: {key} must map names to USD per hour, not a {type(got).__name__}"
                )
            lists[key] = _prices(got, f"prices file {path}: {key}: ")
        label = ", ".join(str(data[k]) for k in PRICE_NOTES if data.get(k) not in (None, "")) or None
        return lists["system_hour"], lists["accelerator_hour"], label, True
    if not isinstance(data, dict):
        raise BenchdbError(
            f"prices file {path} must map hardware names to USD per hour, "
            "e.g. 'NVIDIA H100 80GB HBM3: 4.5' (or accelerator_hour: / system_hour: maps)"
        )
    return _prices(data, f"prices file {path}: "), {}, None, False


def price_filters(path: Path | None, side_by_side: bool = False) -> dict[str, Any]:
    """The report filters of --prices: a file, or a folder of files (one price source each, read
    side by side by --cost-at; ``side_by_side`` says every section that reads prices can). A source
    without a ``source`` field is named by its file; two of one name, by their files too."""
    files = [path] if path is not None and not path.is_dir() else []
    if path is not None and path.is_dir():
        files = sorted(p for p in path.iterdir() if p.suffix.lower() in (".yaml", ".yml", ".json") and p.is_file())
        if not files:
            raise BenchdbError(f"prices folder {path} holds no .yaml or .json prices file")
        if len(files) > 1 and not side_by_side:
            raise BenchdbError(
                f"prices folder {path} holds {len(files)} price sources: only --serving --cost-at "
                "(without --slo or other reports) reads them side by side; give one file"
            )
    lists = [load_prices(p) for p in files]
    labels = [got[2] or p.name for got, p in zip(lists, files, strict=True)]
    labels = [
        f"{label} ({p.name})" if labels.count(label) > 1 else label for label, p in zip(labels, files, strict=True)
    ]
    if len(lists) > 1:
        lists = [(s, a, label, per) for (s, a, _, per), label in zip(lists, labels, strict=True)]
    system, accelerator, source, per_system = lists[0] if lists else ({}, {}, None, False)
    return {
        "prices": system,
        "accelerator_prices": accelerator,
        "prices_source": source,
        "prices_per_system": per_system,
        "more_prices": tuple(lists[1:]),
    }


@dataclass(frozen=True)
class Normalisation:
    """One way of putting a figure beside other systems' (--per, the dashboard's ?per=), as the SQL
    defines it (bdb_normalisations in benchdb/sql/macros.sql; bdb_normalised divides by it)."""

    name: str
    #: How a heading says it ("per accelerator").
    label: str
    #: What a throughput's unit gains (" per accelerator").
    unit_suffix: str
    #: Needs prices (USD per hour).
    priced: bool
    #: Why a throughput has no value this way.
    missing: str
    #: What a report says of it.
    note: str


_known: tuple[Normalisation, ...] | None = None


def normalisations(con: Any = None) -> tuple[Normalisation, ...]:
    """Every normalisation, in the order they are offered (the first is the default), read from the
    SQL that defines them: from ``con`` when it is an open warehouse (its macros are checked as it
    opens), else from a database in memory started for them (~30 ms)."""
    global _known
    if _known is None:
        from benchdb.startup import duckdb

        own = isinstance(con, duckdb.DuckDBPyConnection)
        mem = con if own else duckdb.connect()
        try:
            if not own:
                sql.install_macros(mem)
            found = sql.rows(mem.execute(sql.load("queries/normalisations.sql")))
            _known = tuple(Normalisation(**r) for r in found)
        finally:
            if not own:
                mem.close()
    return _known


def normalisation(name: str | None) -> Normalisation:
    """The normalisation called ``name`` (None: the default); refused when there is none."""
    known = {n.name: n for n in normalisations()}
    if name is None:
        return normalisations()[0]
    if name not in known:
        raise BenchdbError(f"--per {name!r} is not one of {', '.join(known)}")
    return known[name]


def _prices(got: dict[Any, Any], where: str) -> dict[str, float]:
    """``name -> USD per hour``, each a finite number above zero (not a bool, NaN or infinity)."""
    out = {}
    for name, usd in got.items():
        try:
            value = float(usd) if isinstance(usd, (int, float)) and not isinstance(usd, bool) else math.nan
        except OverflowError:  # an integer past a float
            value = math.inf
        if not 0 < value < math.inf:
            raise BenchdbError(
                f"{where}{clip(repr(name), 60)} is {clip(repr(usd), 40)}, not a price "
                "(a positive number of USD per hour)"
            )
        out[str(name)] = value
    return out


def _params(f: Filters) -> dict[str, Any]:
    return {
        **f.params(),
        "objective": f.objective,
        "per": normalisation(f.per).name,
        "max_latency_s": None if f.max_latency_ms is None else f.max_latency_ms / 1e3,
        "max_memory_bytes": None if f.max_memory_mb is None else f.max_memory_mb * 2**20,
        "max_accuracy_drop": f.max_accuracy_drop,
        "price_names": list(f.prices),
        "price_values": list(f.prices.values()),
        "accelerator_price_names": list(f.accelerator_prices),
        "accelerator_price_values": list(f.accelerator_prices.values()),
    }


def _checked_per(f: Filters) -> Normalisation:
    """The normalisation --per asks for, once the objective and prices allow it."""
    if f.objective not in OBJECTIVES:
        raise BenchdbError(f"--objective {f.objective!r} is not one of {', '.join(OBJECTIVES)}")
    priced = bool(f.prices or f.accelerator_prices)
    if f.objective == "cost" and not priced:
        raise BenchdbError("--objective cost needs --prices FILE (YAML: hardware name -> USD per hour)")
    per = normalisation(f.per)
    if per != normalisations()[0] and f.objective != "throughput":
        raise BenchdbError(f"--per {per.name} divides a throughput: use it with --objective throughput (the default)")
    if per.priced and not priced:
        raise BenchdbError(
            f"--per {per.name} needs --prices FILE (YAML/JSON: accelerator_hour: {{accelerator name: USD}}, "
            "system_hour: {system name: USD})"
        )
    return per


def optimal_section(con, f: Filters, detail: bool = False) -> Section | list[Section]:
    """The optimal-hardware section; with an explicit --per, also every system side by side."""
    normalisations(con)  # kept from this open warehouse: the calls below ask without a connection
    per = _checked_per(f)
    params = _params(f)
    keys, rows = section_rows(con, "optimal_hardware", params)
    value_fmt = {"throughput": "num", "latency": "ms", "energy": "sci", "cost": "num"}[f.objective]
    value_head = {"throughput": "items/s", "latency": "latency", "energy": "J/item", "cost": "USD/1M items"}
    units = {r["unit"] for r in rows if r.get("unit")}
    if f.objective == "throughput" and units and units != {"items/s"}:  # published tokens/s, or --per
        value_head["throughput"] = units.pop() if len(units) == 1 else "value"
    unit_column = [Column("unit", "unit")] if f.objective == "throughput" and len(units) > 1 else []
    notes, empty = _scope_notes(con, f, params, rows)
    energy = (
        [Column("J/item", "best_energy_per_item_j", "sci", compact=False)]
        if any(r.get("best_energy_per_item_j") is not None for r in rows) and f.objective != "energy"
        else []
    )
    systems = (
        [Column("system", "best_system_label"), Column("figure", "best_figure")]
        if any(
            r.get("best_summary_only")
            or r.get("runner_up_summary_only")
            or (r.get("best_accelerators") or 1) > 1
            or (r.get("best_system") or r.get("best_hardware")) != r.get("best_hardware")
            for r in rows
        )
        else []
    )
    if f.per is not None:
        notes.insert(0, per.note)
    if any(r.get("margin_basis") == "published" for r in rows):
        notes.append(
            "Published figures (summary-only imports: MLPerf, InferenceX) have no samples: a margin "
            "involving one is a ratio of two figures with no interval, never confirmed as a win."
        )
    section = Section(
        "optimal_hardware",
        f"Optimal hardware by {f.objective}" + (f" {per.label}" if per != normalisations()[0] else ""),
        "Per model, batch size and input shape: the best hardware/backend/mode/precision among the "
        "latest valid timing results" + (f" under {f.describe()}" if f.describe() else "") + ", how much better "
        "it is than the runner-up, and how sure that is. The same rule as `benchdb check`: the margin gets a 95 % "
        "interval only where run-to-run noise is known -- both results ran in 2+ interleaved processes of one run "
        "(`--repeats 3`), or both series have 8+ earlier runs. A win needs the whole interval above +5 %; a tie's "
        "interval includes 0 or stays below 5 %; anything else is unconfirmed (one process cannot see the shifts "
        "between runs, which reach 10-40 % on shared machines).",
        # the answer first (model, batch, best, margin, verdict), then what stands behind it
        [
            Column("model", "model_id"),
            Column("batch", "batch_size", "int"),
            Column("best hardware / backend / mode / precision", "best_label", compact=False),
            Column("best", "best_short", full=False),
            *systems,
            Column(f"best {value_head[f.objective]}", "best_value", value_fmt, compact=False),
            Column(value_head[f.objective], "best_value", value_fmt, full=False),
            *unit_column,
            Column("margin [95 % CI]", "margin_label", compact=False),
            Column("margin [95 % CI]", "margin_short", full=False),
            Column("verdict", "verdict_label"),
            Column("input", "input_shape"),
            Column("processes (best+runner-up)", "proc_label", compact=False),
            Column("runs (best+runner-up)", "runs_label", compact=False),
            Column("runner-up", "runner_up_label", compact=False),
            Column("runner-up", "runner_up_short", full=False),
            Column(f"runner-up {value_head[f.objective]}", "runner_up_value", value_fmt, compact=False),
            Column("candidates", "candidates", "int", compact=False),
            Column("p50", "best_median_s", "ms", compact=False),
            Column("p90", "best_p90_s", "ms", compact=False),
            Column("p99", "best_p99_s", "ms", compact=False),
            Column("n", "best_n", "int", compact=False),
            Column("peak memory", "best_peak_memory_bytes", "mib", compact=False),
            *energy,
            Column("result", "best_result_id", "result", compact=False),
            Column("runner-up result", "runner_up_result_id", "result", compact=False),
        ],
        keys,
        short_labels([optimal_row(r) for r in rows]),
        notes,
        empty=empty,
        extra={"pareto": section_rows(con, "pareto", f.params())[1]} if detail else {},
        brief="Per model, batch size and input shape: the best of the latest valid timing results"
        + (f" under {f.describe()}" if f.describe() else "")
        + " and its margin over the runner-up. "
        "A win needs the margin's whole 95 % interval above +5 %; a tie's interval includes 0 or stays "
        "below 5 %; unconfirmed: run-to-run noise unknown (measure with `--repeats 3`). The HTML report "
        "and `--wide` explain the method.",
    )
    if f.per is None:
        return section
    return [section, _systems_section(con, f, params)]


def _systems_section(con, f: Filters, params: dict[str, Any]) -> Section:
    """Every system's latest figure per model and scenario, normalised by --per, ranked."""
    per = normalisation(f.per)
    keys, rows = section_rows(con, "system_ranking", params)
    # one scale per unit for each figure column: 7,856.4 beside 13,015.4 tokens/s, never 1.302e+04
    ranked = ("model_id", "mode", "input_shape", "batch_size")  # the rows compared with each other
    values = per_unit(rows, "value", "unit", ranked)
    normalised = per_unit(rows, "normalised", "normalised_unit", ranked)
    lows = per_unit(rows, "normalised_ci_low", "normalised_unit", ranked)
    highs = per_unit(rows, "normalised_ci_high", "normalised_unit", ranked)
    labels = unique_system_labels(rows)
    for i, r in enumerate(rows):
        r["figure"] = "published" if r["summary_only"] else f"measured (n={r['n']})"
        r["interval"] = (
            "published: no interval"
            if r["summary_only"]
            else f"{lows[i]} .. {highs[i]}"
            if r.get("normalised_ci_low") is not None
            else None
        )
        r["value_label"] = values[i]
        r["per_label"] = normalised[i] if r["normalised"] is not None else r["missing"]
        r["system_label"] = labels[i]
    return Section(
        "system_ranking",
        f"Systems side by side, {per.label}",
        "Per model, scenario (input) and batch size, every system's latest valid figure: benchdb's own "
        "measurements (with the 95 % interval of the median, normalised alike) and published summary-only "
        "figures (no samples, so no interval), each normalised " + per.label + ", ranked best first. " + per.note,
        [
            Column("model", "model_id"),
            Column("scenario", "mode"),
            Column("input", "input_shape", compact=False),
            Column("batch", "batch_size", "int", compact=False),
            Column("rank", "rank", "int"),
            Column("system", "system_label"),
            Column("figure", "figure"),
            Column("value", "value", "num", compact=False),
            Column("unit", "unit", compact=False),
            Column("whole system", "value_label", full=False),
            Column(per.label, "per_label"),
            Column("95% CI", "interval", compact=False),
            Column("power W", "power_w", "num", compact=False),
            Column("USD/h", "price_per_hour", "num", compact=False),
            Column("result", "result_id", "result", compact=False),
        ],
        keys,
        rows,
        [per.note] if not rows else [],
        empty="No latest valid result to put side by side.",
    )


def _objective_unanswerable(f: Filters, scope: dict[str, Any]) -> None:
    """There are timing results to rank, but none has what the objective needs: say exactly what."""
    n = scope["candidates"]
    matching = f" matching {f.describe()}" if f.describe() else ""
    results = plural(n, "latest valid timing result") + matching
    if f.objective == "energy":
        if scope["with_power"]:
            raise NothingToReport(
                f"nothing to report: --objective energy: none of the {results} has power samples (power_w); "
                f"the {plural(scope['with_power'], 'result')} with power samples are outside the constraints"
            )
        raise NothingToReport(
            f"nothing to report: --objective energy: no result has power samples (power_w) among the {results}; "
            "energy needs NVIDIA telemetry (pynvml, recorded by the pytorch backend on CUDA devices); "
            "use --objective throughput, latency or cost"
        )
    if f.objective == "cost":
        names = ", ".join(scope["hardware_names"] or [])
        raise NothingToReport(
            f"nothing to report: --objective cost: no price matches the hardware of the {results} "
            f"({names}); --prices gives prices for: {', '.join(sorted(f.prices))} "
            "(names must match hardware names exactly)"
        )


def _scope_notes(con, f: Filters, params: dict, rows: list[dict]) -> tuple[list[str], str]:
    """What the optimal-hardware section says under its table (results left out, and why; its
    figures' provenance) and what it says when it has no row."""
    notes = []
    empty = "No latest valid timing result to rank."
    if f.objective in ("energy", "cost") or not rows:
        scope = one_row(con, "optimal_scope", params)
        if scope["candidates"] and not rows:
            _objective_unanswerable(f, scope)  # energy/cost data missing: raises
        if not scope["candidates"] and f.describe():
            empty = f"No latest valid timing result matches {f.describe()}."
        if f.objective == "cost":
            missing = sorted(set(scope["hardware_names"] or []) - set(f.prices) - set(f.accelerator_prices))
            if missing:
                notes.append("no price for: " + ", ".join(missing) + " (left out of the cost ranking)")
        if f.objective == "energy" and scope["candidates"] > sum(r["candidates"] for r in rows):
            notes.append(
                "energy needs power samples (power_w, from NVIDIA telemetry); results without them are left out"
            )
    notes += optimal_notes(rows)
    if f.max_accuracy_drop is not None:
        notes += accuracy_notes(section_rows(con, "accuracy_excluded", params)[1], f.max_accuracy_drop)
    return notes, empty

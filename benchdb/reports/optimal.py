"""The optimal-hardware section: per model and batch size the best hardware / backend / mode /
precision under the objective and budgets, its runner-up, and whether the win is confirmed; with
``--per``, a throughput normalised per system, accelerator, watt or dollar-hour, and every system side
by side. A published (summary-only) figure is ranked beside benchdb's measurements but marked, and
never given an interval: it has no samples."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchdb.errors import BenchdbError
from benchdb.reports.document import Column, Filters, NothingToReport, Section, one_row, section_rows
from benchdb.text import plural
from benchdb.units import percent

OBJECTIVES = ("throughput", "latency", "energy", "cost")
#: --per: what a throughput is divided by, and how a heading says it.
PER = {"system": "per system", "accelerator": "per accelerator", "watt": "per watt", "cost": "per dollar-hour"}
#: The two price lists a structured --prices file may hold.
PRICE_LISTS = ("accelerator_hour", "system_hour")


def load_prices(path: Path) -> tuple[dict[str, float], dict[str, float]]:
    """(USD per hour by system or hardware name, USD per accelerator-hour by accelerator name) from
    a YAML/JSON --prices file: a flat ``name: USD per hour`` map (each name a system or hardware), or
    ``accelerator_hour: {name: USD}`` and/or ``system_hour: {name: USD}``."""
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise BenchdbError(f"prices file {path} is not valid YAML ({str(exc).splitlines()[0]})") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BenchdbError(f"prices file {path} cannot be read ({exc})") from None
    if isinstance(data, dict) and any(k in PRICE_LISTS for k in data):
        unknown = [k for k in data if k not in PRICE_LISTS]
        if unknown:
            raise BenchdbError(f"prices file {path}: unknown field {unknown[0]!r} (a price list is "
                               f"{' or '.join(PRICE_LISTS)}: name -> USD per hour)")
        lists = {}
        for key in PRICE_LISTS:
            got = data.get(key) or {}
            if not isinstance(got, dict):
                raise BenchdbError(f"prices file {path}: {key} must map names to USD per hour, "
                                   f"not a {type(got).__name__}")
            for name, usd in got.items():
                if not isinstance(usd, (int, float)) or isinstance(usd, bool) or not usd > 0:
                    raise BenchdbError(f"prices file {path}: {key}: {name!r} is {usd!r}, not a price "
                                       "(a positive number of USD per hour)")
            lists[key] = {str(k): float(v) for k, v in got.items()}
        return lists["system_hour"], lists["accelerator_hour"]
    if not isinstance(data, dict) or not all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                             for v in data.values()):
        raise BenchdbError(f"prices file {path} must map hardware names to USD per hour, "
                           "e.g. 'NVIDIA H100 80GB HBM3: 4.5' (or accelerator_hour: / system_hour: maps)")
    return {str(k): float(v) for k, v in data.items()}, {}


def _params(f: Filters) -> dict[str, Any]:
    return {**f.params(), "objective": f.objective, "per": f.per or "system",
            "max_latency_s": None if f.max_latency_ms is None else f.max_latency_ms / 1e3,
            "max_memory_bytes": None if f.max_memory_mb is None else f.max_memory_mb * 2**20,
            "max_accuracy_drop": f.max_accuracy_drop,
            "price_names": list(f.prices), "price_values": list(f.prices.values()),
            "accelerator_price_names": list(f.accelerator_prices),
            "accelerator_price_values": list(f.accelerator_prices.values())}


def _checked_per(f: Filters) -> str:
    """The normalisation --per asks for, once the objective and prices allow it."""
    if f.objective not in OBJECTIVES:
        raise BenchdbError(f"--objective {f.objective!r} is not one of {', '.join(OBJECTIVES)}")
    priced = bool(f.prices or f.accelerator_prices)
    if f.objective == "cost" and not priced:
        raise BenchdbError("--objective cost needs --prices FILE (YAML: hardware name -> USD per hour)")
    per = f.per or "system"
    if per not in PER:
        raise BenchdbError(f"--per {per!r} is not one of {', '.join(PER)}")
    if per != "system" and f.objective != "throughput":
        raise BenchdbError(f"--per {per} divides a throughput: use it with --objective throughput (the default)")
    if per == "cost" and not priced:
        raise BenchdbError("--per cost needs --prices FILE (YAML/JSON: accelerator_hour: {accelerator name: USD}, "
                           "system_hour: {system name: USD})")
    return per


def optimal_section(con, f: Filters, detail: bool = False) -> Section | list[Section]:
    """The optimal-hardware section; with an explicit --per, also every system side by side."""
    per = _checked_per(f)
    params = _params(f)
    keys, rows = section_rows(con, "optimal_hardware", params)
    value_fmt = {"throughput": "num", "latency": "ms", "energy": "sci", "cost": "num"}[f.objective]
    value_head = {"throughput": "items/s", "latency": "latency", "energy": "J/item", "cost": "USD/1M items"}
    units = {r["unit"] for r in rows if r.get("unit")}
    if f.objective == "throughput" and units and units != {"items/s"}:     # published tokens/s, or --per
        value_head["throughput"] = units.pop() if len(units) == 1 else "value"
    unit_column = [Column("unit", "unit")] if f.objective == "throughput" and len(units) > 1 else []
    notes = []
    empty = "No latest valid timing result to rank."
    if f.objective in ("energy", "cost") or not rows:
        scope = one_row(con, "optimal_scope", params)
        if scope["candidates"] and not rows:
            _objective_unanswerable(f, scope)          # energy/cost data missing: raises
        if not scope["candidates"] and f.describe():
            empty = f"No latest valid timing result matches {f.describe()}."
        if f.objective == "cost":
            missing = sorted(set(scope["hardware_names"] or []) - set(f.prices) - set(f.accelerator_prices))
            if missing:
                notes.append("no price for: " + ", ".join(missing) + " (left out of the cost ranking)")
        if f.objective == "energy" and scope["candidates"] > sum(r["candidates"] for r in rows):
            notes.append("energy needs power samples (power_w, from NVIDIA telemetry); results without "
                         "them are left out")
    notes += _optimal_notes(rows)
    if f.max_accuracy_drop is not None:
        notes += _accuracy_notes(section_rows(con, "accuracy_excluded", params)[1], f.max_accuracy_drop)
    energy = [Column("J/item", "best_energy_per_item_j", "sci", compact=False)] if any(
        r.get("best_energy_per_item_j") is not None for r in rows) and f.objective != "energy" else []
    systems = [Column("system", "best_system_label"), Column("figure", "best_figure")] if any(
        r.get("best_summary_only") or r.get("runner_up_summary_only") or (r.get("best_accelerators") or 1) > 1
        or (r.get("best_system") or r.get("best_hardware")) != r.get("best_hardware") for r in rows) else []
    if f.per is not None:
        notes.insert(0, _per_note(per))
    if any(r.get("margin_basis") == "published" for r in rows):
        notes.append("Published figures (summary-only imports: MLPerf, InferenceX) have no samples: a margin "
                     "involving one is a ratio of two figures with no interval, never confirmed as a win.")
    section = Section(
        "optimal_hardware", f"Optimal hardware by {f.objective}" + (f" {PER[per]}" if per != "system" else ""),
        "Per model, batch size and input shape: the best hardware/backend/mode/precision among the "
        "latest valid timing results" + (f" under {f.describe()}" if f.describe() else "") + ", how much better "
        "it is than the runner-up, and how sure that is. The same rule as `benchdb check`: the margin gets a 95 % "
        "interval only where run-to-run noise is known -- both results ran in 2+ interleaved processes of one run "
        "(`--repeats 3`), or both series have 8+ earlier runs. A win needs the whole interval above +5 %; a tie's "
        "interval includes 0 or stays below 5 %; anything else is unconfirmed (one process cannot see the shifts "
        "between runs, which reach 10-40 % on shared machines).",
        # the answer first (model, batch, best, margin, verdict), then what stands behind it
        [Column("model", "model_id"), Column("batch", "batch_size", "int"),
         Column("best hardware / backend / mode / precision", "best_label", compact=False),
         Column("best", "best_short", full=False), *systems,
         Column(f"best {value_head[f.objective]}", "best_value", value_fmt, compact=False),
         Column(value_head[f.objective], "best_value", value_fmt, full=False), *unit_column,
         Column("margin [95 % CI]", "margin_label", compact=False),
         Column("margin [95 % CI]", "margin_short", full=False),
         Column("verdict", "verdict_label"), Column("input", "input_shape"),
         Column("processes (best+runner-up)", "proc_label", compact=False),
         Column("runs (best+runner-up)", "runs_label", compact=False),
         Column("runner-up", "runner_up_label", compact=False), Column("runner-up", "runner_up_short", full=False),
         Column(f"runner-up {value_head[f.objective]}", "runner_up_value", value_fmt, compact=False),
         Column("candidates", "candidates", "int", compact=False),
         Column("p50", "best_median_s", "ms", compact=False), Column("p90", "best_p90_s", "ms", compact=False),
         Column("p99", "best_p99_s", "ms", compact=False), Column("n", "best_n", "int", compact=False),
         Column("peak memory", "best_peak_memory_bytes", "mib", compact=False), *energy,
         Column("result", "best_result_id", "result", compact=False),
         Column("runner-up result", "runner_up_result_id", "result", compact=False)],
        keys, _short_labels([_optimal_row(r) for r in rows]), notes, empty=empty,
        extra={"pareto": section_rows(con, "pareto", f.params())[1]} if detail else {},
        brief="Per model, batch size and input shape: the best of the latest valid timing results"
              + (f" under {f.describe()}" if f.describe() else "") + " and its margin over the runner-up. "
              "A win needs the margin's whole 95 % interval above +5 %; a tie's interval includes 0 or stays "
              "below 5 %; unconfirmed: run-to-run noise unknown (measure with `--repeats 3`). The HTML report "
              "and `--wide` explain the method.")
    if f.per is None:
        return section
    return [section, _systems_section(con, f, params)]


def _per_note(per: str) -> str:
    return {"system": "Normalised per system: each figure as its whole system delivered it.",
            "accelerator": "Normalised per accelerator: a throughput over the accelerators the result ran on (a "
                           "CPU-only system counts as one); a latency is not divided.",
            "watt": "Normalised per watt: a throughput over the measured power (power_w; MLPerf power runs: the "
                    "system's); results without measured power are not ranked.",
            "cost": "Normalised per dollar-hour: a throughput over the system's price per hour (--prices: "
                    "system_hour by system name, else accelerator_hour by accelerator x the accelerators it "
                    "ran on); results without a price are listed as no price, not ranked."}[per]


def _systems_section(con, f: Filters, params: dict[str, Any]) -> Section:
    """Every system's latest figure per model and scenario, normalised by --per, ranked."""
    per = f.per or "system"
    keys, rows = section_rows(con, "system_ranking", params)
    for r in rows:
        r["figure"] = "published" if r["summary_only"] else f"measured (n={r['n']})"
        r["interval"] = ("published: no interval" if r["summary_only"] else
                         f"{r['normalised_ci_low']:.4g} .. {r['normalised_ci_high']:.4g}"
                         if r.get("normalised_ci_low") is not None else None)
        r["per_label"] = (f"{r['normalised']:.4g} {r['normalised_unit']}" if r["normalised"] is not None
                          else r["missing"])
        r["system_label"] = _system_label(r["system_name"], r["devices"], r["accelerator"])
    return Section(
        "system_ranking", f"Systems side by side, {PER[per]}",
        "Per model, scenario (input) and batch size, every system's latest valid figure: benchdb's own "
        "measurements (with the 95 % interval of the median, normalised alike) and published summary-only "
        "figures (no samples, so no interval), each normalised " + PER[per] + ", ranked best first. "
        + _per_note(per),
        [Column("model", "model_id"), Column("scenario", "mode"), Column("input", "input_shape", compact=False),
         Column("batch", "batch_size", "int", compact=False), Column("rank", "rank", "int"),
         Column("system", "system_label"), Column("figure", "figure"),
         Column("value", "value", "num"), Column("unit", "unit"),
         Column(PER[per], "per_label"), Column("95% CI", "interval", compact=False),
         Column("power W", "power_w", "num", compact=False), Column("USD/h", "price_per_hour", "num", compact=False),
         Column("result", "result_id", "result", compact=False)],
        keys, rows, [_per_note(per)] if not rows else [], empty="No latest valid result to put side by side.")


def _system_label(name: str | None, devices: int | None, accelerator: str | None) -> str:
    """'8x H200 SXM (8x NVIDIA H200-SXM-141GB)': the system and the accelerators a result used."""
    if accelerator is None or devices is None:
        return str(name)
    used = f"{devices}x {accelerator}"
    return str(name) if name == used or (devices == 1 and name == accelerator) else f"{name} ({used})"


def _accuracy_notes(rows: list[dict], limit: float) -> list[str]:
    """One line per result --max-accuracy-drop left out: what it is and why."""
    out = []
    for r in rows:
        what = (f"{r['model_id']} batch {r['batch_size']} {r['input_shape']}: {r['hardware_name']} {r['backend']} "
                f"{r['mode']} {r['precision']}" + (f" ({r['quantization']})" if r.get("quantization") else ""))
        if r.get("accuracy_drop") is None:
            why = "no agreement with fp32 recorded (measured before benchdb recorded it, or not comparable)"
        elif r.get("score_drop") is not None:
            why = (f"lm-eval {r['score_basis']} {r['score_drop'] * 100:.3f} % below fp32, "
                   f"more than {limit * 100:g} %")
        elif r.get("sts_drop") is not None:
            why = f"STS Spearman {r['sts_drop'] * 100:.3f} % below fp32's, more than {limit * 100:g} %"
        else:
            why = (f"{r['agreement_metric'].replace('_', ' ')} {r['agreement'] * 100:.3f} %, "
                   f"a drop of {r['accuracy_drop'] * 100:.3f} %, more than {limit * 100:g} %")
        out.append(f"left out by --max-accuracy-drop: {what}: {why}")
    return out


def _pct(v: float) -> str:
    return f"{v * 100:+.1f}%"


#: What each margin verdict reads as (None: no runner-up).
VERDICT_LABELS = {"win": "win", "tie": "tie", "unconfirmed": "unconfirmed", "unknown": "unconfirmed",
                  None: "only one"}


def _optimal_row(r: dict) -> dict:
    """The columns a person reads: the runner-up's full label, the margin's interval, the verdict
    (win / tie / unconfirmed) with a warning when a tail is unstable, and what stands behind it."""
    ci = (f"{_pct(r['margin_ci_low'])} .. {_pct(r['margin_ci_high'])}"
          if r.get("margin_ci_low") is not None else None)
    if ci is None and r.get("runner_up_result_id") is not None:
        ci = "noise unknown"
    verdict = VERDICT_LABELS.get(r.get("margin_verdict"), str(r.get("margin_verdict")))
    tails = [who for who, key in (("best", "best"), ("runner-up", "runner_up")) if r.get(f"{key}_tail_unstable")]
    if tails:
        verdict += "; unstable tail: " + ", ".join(tails)
    short = None
    if r.get("margin") is not None:
        short = percent(r["margin"], decimals=0)
        if r.get("margin_ci_low") is not None:
            short += (f" [{percent(r['margin_ci_low'], decimals=0).rstrip('%')}, "
                      f"{percent(r['margin_ci_high'], decimals=0).rstrip('%')}]")
    if r.get("margin_basis") == "published":
        ci = "published: no interval"
        verdict += " (published figure)"
    runner_up = _label(r, "runner_up")
    if runner_up is not None and r.get("runner_up_summary_only"):
        runner_up += " (published)"
    margin = None if r.get("margin") is None else _pct(r["margin"]) + (f" [{ci}]" if ci else "")
    return dict(r, runner_up_label=runner_up, margin_ci_label=ci, verdict_label=verdict, margin_label=margin,
                best_label=_label(r, "best"),
                best_system_label=_system_label(r.get("best_system"), r.get("best_accelerators"),
                                                r.get("best_hardware")),
                best_figure=None if r.get("best_summary_only") is None else
                ("published" if r["best_summary_only"] else "measured"),
                margin_short=short, proc_label=_pair(r, "best_repeats", "runner_up_repeats"),
                runs_label=_pair(r, "best_runs", "runner_up_runs"))


def _pair(r: dict, best: str, runner_up: str) -> str:
    """'3+3': the best's and the runner-up's count ('3' alone without a runner-up)."""
    def n(key: str) -> str:
        return "?" if r.get(key) is None else str(r[key])
    return n(best) if r.get("runner_up_result_id") is None else f"{n(best)}+{n(runner_up)}"


_PARTS = ("hardware", "backend", "mode", "precision")


def _short_labels(rows: list[dict]) -> list[dict]:
    """Terminal labels of the best and the runner-up: only the parts (hardware, backend, mode,
    precision) that differ somewhere in the table; the full labels stay in their own columns."""
    varying = [p for p in _PARTS if len({r.get(f"{who}_{p}") for r in rows for who in ("best", "runner_up")
                                         if r.get(f"{who}_hardware") is not None}) > 1] or ["backend"]
    for r in rows:
        for who in ("best", "runner_up"):
            r[f"{who}_short"] = ("/".join(str(r.get(f"{who}_{p}")) for p in varying)
                                 if r.get(f"{who}_hardware") is not None else None)
    return rows


def _optimal_notes(rows: list[dict]) -> list[str]:
    notes = []
    ranked = [r for r in rows if r.get("margin_verdict") is not None]
    wins = sum(1 for r in ranked if r.get("margin_verdict") == "win")
    ties = sum(1 for r in ranked if r.get("margin_verdict") == "tie")
    unconfirmed = [r for r in ranked if r.get("margin_verdict") in ("unconfirmed", "unknown")]
    published = [r for r in unconfirmed if r.get("margin_basis") == "published"]     # said in their own note
    unconfirmed = [r for r in unconfirmed if r.get("margin_basis") != "published"]
    if ranked:
        notes.append(f"Of {plural(len(ranked), 'winner')} with a runner-up: {wins} win, {ties} tie, "
                     f"{len(unconfirmed)} unconfirmed" + (f", {len(published)} beside a published figure "
                                                         "(no interval)." if published else "."))
    no_basis = [r for r in unconfirmed if r.get("margin_ci_low") is None]
    if no_basis:
        single = sum(1 for r in no_basis if (r.get("margin_processes") or 1) < 2)
        notes.append(f"{plural(len(no_basis), 'winner')} unconfirmed because run-to-run noise is unknown"
                     + (f" ({single} measured in one process)" if single else " (the two results come from "
                        "separate runs without 8 runs of history)")
                     + ": the winner within run-to-run noise is unknown. Measure both in one run with "
                       "`--repeats 3` (interleaved processes), or let each series collect 8 runs.")
    between = len(unconfirmed) - len(no_basis)
    if between:
        notes.append(f"{plural(between, 'winner')} unconfirmed: the margin's interval excludes 0 but not +5 %; "
                     "measure with more --repeats to tell.")
    if ties:
        notes.append(f"{plural(ties, 'tie')}: the margin's interval includes 0 or stays within 5 %, so the data "
                     "do not tell the two apart.")
    tail = [r for r in rows if r.get("best_tail_unstable") or r.get("runner_up_tail_unstable")]
    if tail:
        notes.append(f"Unstable tail in {plural(len(tail), 'row')}: p90 above 2x or p99 above 5x the median; "
                     "the median ranks them, but a latency budget on p90/p99 may not hold.")
    return notes


def _objective_unanswerable(f: Filters, scope: dict[str, Any]) -> None:
    """There are timing results to rank, but none has what the objective needs: say exactly what."""
    n = scope["candidates"]
    matching = f" matching {f.describe()}" if f.describe() else ""
    results = plural(n, "latest valid timing result") + matching
    if f.objective == "energy":
        if scope["with_power"]:
            raise NothingToReport(
                f"nothing to report: --objective energy: none of the {results} has power samples (power_w); "
                f"the {plural(scope['with_power'], 'result')} with power samples are outside the constraints")
        raise NothingToReport(
            f"nothing to report: --objective energy: no result has power samples (power_w) among the {results}; "
            "energy needs NVIDIA telemetry (pynvml, recorded by the pytorch backend on CUDA devices); "
            "use --objective throughput, latency or cost")
    if f.objective == "cost":
        names = ", ".join(scope["hardware_names"] or [])
        raise NothingToReport(
            f"nothing to report: --objective cost: no price matches the hardware of the {results} "
            f"({names}); --prices gives prices for: {', '.join(sorted(f.prices))} "
            "(names must match hardware names exactly)")


def _label(r: dict, prefix: str) -> str | None:
    if r.get(f"{prefix}_hardware") is None:
        return None
    return (f"{r[f'{prefix}_hardware']} / {r[f'{prefix}_backend']} / {r[f'{prefix}_mode']} / "
            f"{r[f'{prefix}_precision']}")

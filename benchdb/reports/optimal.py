"""The optimal-hardware section: per model and batch size the best hardware / backend / mode /
precision under the objective and budgets, its runner-up, and whether the win is confirmed."""

from __future__ import annotations

from typing import Any

from benchdb.errors import BenchdbError
from benchdb.reports.document import Column, Filters, NothingToReport, Section, one_row, section_rows
from benchdb.text import plural

OBJECTIVES = ("throughput", "latency", "energy", "cost")


def optimal_section(con, f: Filters, detail: bool = False) -> Section:
    if f.objective not in OBJECTIVES:
        raise BenchdbError(f"--objective {f.objective!r} is not one of {', '.join(OBJECTIVES)}")
    if f.objective == "cost" and not f.prices:
        raise BenchdbError("--objective cost needs --prices FILE (YAML: hardware name -> USD per hour)")
    params = {**f.params(), "objective": f.objective,
              "max_latency_s": None if f.max_latency_ms is None else f.max_latency_ms / 1e3,
              "max_memory_bytes": None if f.max_memory_mb is None else f.max_memory_mb * 2**20,
              "max_accuracy_drop": f.max_accuracy_drop,
              "price_names": list(f.prices), "price_values": list(f.prices.values())}
    keys, rows = section_rows(con, "optimal_hardware", params)
    value_fmt = {"throughput": "num", "latency": "ms", "energy": "sci", "cost": "num"}[f.objective]
    value_head = {"throughput": "items/s", "latency": "latency", "energy": "J/item", "cost": "USD/1M items"}
    notes = []
    empty = "No latest valid timing result to rank."
    if f.objective in ("energy", "cost") or not rows:
        scope = one_row(con, "optimal_scope", params)
        if scope["candidates"] and not rows:
            _objective_unanswerable(f, scope)          # energy/cost data missing: raises
        if not scope["candidates"] and f.describe():
            empty = f"No latest valid timing result matches {f.describe()}."
        if f.objective == "cost":
            missing = sorted(set(scope["hardware_names"] or []) - set(f.prices))
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
    return Section(
        "optimal_hardware", f"Optimal hardware by {f.objective}",
        "Per model, batch size and input shape: the best hardware/backend/mode/precision among the "
        "latest valid timing results" + (f" under {f.describe()}" if f.describe() else "") + ", how much better "
        "it is than the runner-up, and how sure that is. The same rule as `benchdb check`: the margin gets a 95 % "
        "interval only where run-to-run noise is known -- both results ran in 2+ interleaved processes of one run "
        "(`--repeats 3`), or both series have 8+ earlier runs. A win needs the whole interval above +5 %; a tie's "
        "interval includes 0 or stays below 5 %; anything else is unconfirmed (one process cannot see the shifts "
        "between runs, which reach 10-40 % on shared machines). proc and runs (HTML, `--wide`) count the processes "
        "and runs behind the best (+ the runner-up).",
        [Column("model", "model_id"), Column("batch", "batch_size", "int"), Column("input", "input_shape"),
         Column("best hardware", "best_hardware", compact=False), Column("backend", "best_backend", compact=False),
         Column("mode", "best_mode", compact=False), Column("precision", "best_precision", compact=False),
         Column("best", "best_short", full=False),
         Column(f"best {value_head[f.objective]}", "best_value", value_fmt, compact=False),
         Column(value_head[f.objective], "best_value", value_fmt, full=False),
         Column("margin", "margin", "pct", compact=False), Column("margin 95% CI", "margin_ci_label", compact=False),
         Column("margin [95% CI]", "margin_short", full=False),
         Column("verdict", "verdict_label"), Column("proc", "proc_label", compact=False),
         Column("runs", "runs_label", compact=False),
         Column("runner-up", "runner_up_label", compact=False), Column("runner-up", "runner_up_short", full=False),
         Column(f"runner-up {value_head[f.objective]}", "runner_up_value", value_fmt, compact=False),
         Column("candidates", "candidates", "int", compact=False),
         Column("p50", "best_median_s", "ms", compact=False), Column("p90", "best_p90_s", "ms", compact=False),
         Column("p99", "best_p99_s", "ms", compact=False), Column("n", "best_n", "int", compact=False),
         Column("processes", "best_repeats", "int", compact=False),
         Column("peak memory", "best_peak_memory_bytes", "mib", compact=False), *energy,
         Column("result", "best_result_id", "result", compact=False),
         Column("runner-up result", "runner_up_result_id", "result", compact=False)],
        keys, _short_labels([_optimal_row(r) for r in rows]), notes, empty=empty,
        extra={"pareto": section_rows(con, "pareto", f.params())[1]} if detail else {})


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
        short = f"{r['margin'] * 100:+.0f}%"
        if r.get("margin_ci_low") is not None:
            short += f" [{r['margin_ci_low'] * 100:+.0f}, {r['margin_ci_high'] * 100:+.0f}]"
    return dict(r, runner_up_label=_label(r, "runner_up"), margin_ci_label=ci, verdict_label=verdict,
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
    if ranked:
        notes.append(f"Of {plural(len(ranked), 'winner')} with a runner-up: {wins} win, {ties} tie, "
                     f"{len(unconfirmed)} unconfirmed.")
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

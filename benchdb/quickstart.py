"""`benchdb quickstart`: the whole product on this machine in one command.

Runs the `smoke` suite with every installed backend (numpy always; PyTorch eager, ONNX Runtime and
OpenVINO when installed), ingests into the warehouse, writes the HTML report and returns the
optimal-hardware table.

A busy machine is not fatal: results measured while other processes used more CPU than allowed
are recorded (valid with a warning when their interval converged, invalid otherwise), the report
is written even when nothing valid is left to rank, and its banner (also at the top of the
optimal-hardware table returned for the terminal) says how many results were flagged and why.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from benchdb.backends import registry
from benchdb.backends.core_options import recorded_config
from benchdb.backends.shared import models
from benchdb.errors import BenchdbError
from benchdb.harness import hardware
from benchdb.plan import config as cfgmod


@dataclass
class QuickstartResult:
    run_id: str
    scenarios: int
    ingest_line: str
    report_path: Path
    optimal_markdown: str
    change_points: int
    #: The report's busy-machine banner text (None when no result was flagged).
    banner: str | None = None
    #: What the answer leaves out and why, one line each (a backend not installed, a model only one
    #: backend measured, a model with no valid result).
    left_out: list[str] = field(default_factory=list)


#: Processes per scenario: the least with which a winner's margin gets an interval that sees
#: process-to-process variance (benchmarks/quickstart_repeat.py).
REPEATS = 3


def chosen(suite: cfgmod.Config, backends: Sequence[str]) -> tuple[cfgmod.Config, list[str]]:
    """The suite's runs of ``backends`` (none: all), and a line naming those left out."""
    if not backends:
        return suite, []
    offered = list(dict.fromkeys(o.backend for o in suite.runs))
    unknown = [b for b in backends if b not in offered]
    if unknown:
        raise BenchdbError(
            f"--backend {unknown[0]} is not a backend of the smoke suite; use one of {', '.join(offered)}"
        )
    left = [b for b in offered if b not in backends]
    return replace(suite, runs=[o for o in suite.runs if o.backend in backends]), (
        [f"{', '.join(left)}: not chosen (--backend)"] if left else []
    )


def run(
    db: str,
    out: str,
    report_path: Path,
    progress: Callable | None = None,
    note: Callable[[str], None] = print,
    repeats: int = REPEATS,
    backends: Sequence[str] = (),
) -> QuickstartResult:
    """With ``repeats`` K > 1, each scenario runs in K interleaved processes, each with 1/K of the
    suite's minimum and maximum time (the suite's total measuring time stays about the same);
    ``repeats=1`` is the suite as written, one process per model. ``backends``: only these of the
    suite's backends (none: every installed one)."""
    from benchdb.plan.driver import run_plan
    from benchdb.plan.planning import build_plan
    from benchdb.plan.prestart import prestart
    from benchdb.reports import build as builder
    from benchdb.reports import render
    from benchdb.warehouse import Warehouse

    suite, skipped = chosen(cfgmod.load_suite("smoke"), backends)
    runs = []
    without: dict[tuple[str, ...], list[str]] = {}  # models that cannot be built here -> their backends
    unmeasured: dict[str, list[str]] = {}  # why a backend is unavailable -> the models it would measure
    for opts in suite.runs:
        avail = hardware.availability(registry.info(opts.backend))
        if avail["status"] != "available":
            why = f"{opts.backend}: {avail.get('reason') or 'not installed'} ({avail['hint']})"
            unmeasured.setdefault(why, []).extend(m for m in opts.models if m not in unmeasured.get(why, []))
            continue
        cannot = tuple(m for m in opts.models if models.lacking(m))
        if cannot:
            without.setdefault(cannot, []).append(opts.backend)
            opts = replace(opts, models=tuple(m for m in opts.models if m not in cannot))
            if not opts.models:
                continue
        if repeats > 1:
            opts = replace(
                opts,
                repeats=repeats,
                rule=replace(
                    opts.rule, min_time_s=opts.rule.min_time_s / repeats, max_time_s=opts.rule.max_time_s / repeats
                ),
            )
        runs.append(replace(opts, out=Path(out)))
    skipped += [f"{why}; not measured: {', '.join(names)}" for why, names in unmeasured.items()]
    for cannot, backends in without.items():
        lack = sorted({p for m in cannot for p in models.lacking(m)})
        skipped.append(f"{', '.join(backends)}: {', '.join(cannot)} need {' and '.join(lack)} ({models.torch_hint()})")
    if not runs:  # numpy is a core dependency: only a broken install gets here
        raise BenchdbError("nothing of the smoke suite can run here: " + "; ".join(skipped))
    for line in skipped:
        note(f"skipping {line}")
    prestart(runs)
    items = build_plan(runs)
    total = sum(len(i.scenarios) for i in items)
    note(
        f"measuring {total} scenarios of the smoke suite"
        + (f", each in {repeats} interleaved processes," if repeats > 1 else "")
        + f" with {', '.join(dict.fromkeys(o.backend for o in runs))}"
    )
    rep = run_plan(
        items,
        config={"source": "suite smoke", "runs": [recorded_config(o) for o in runs]},
        out=out,
        tags=("quickstart",),
        progress=progress,
    )
    warehouse = Warehouse(db)
    summary = warehouse.ingest([Path(out) / rep.run_id])  # also updates the change points
    with warehouse.reading() as con:  # a report even when a busy machine left nothing valid
        full = builder.build(
            con, str(warehouse.path), list(builder.ALL), builder.Filters(), allow_empty=True, detail=True
        )
    banner = full.banner
    # the terminal gets the banner's text; its table of flagged results is in the HTML report
    optimal = replace(
        full,
        sections=[sec for sec in full.sections if sec.name == "optimal_hardware"],
        banner=replace(banner, rows=[], more=0) if banner else None,
        environment=[],
        measured_invalid=[],
        drilldown=[],
    )
    report_path.write_text(render.html(full), encoding="utf-8")
    answer = optimal.sections[0].rows if optimal.sections else []
    return QuickstartResult(
        rep.run_id,
        total,
        summary.line(),
        report_path,
        render.markdown(optimal),
        summary.change_points,
        banner.text if banner else None,
        skipped + missing_from(items, rep.outcomes, answer),
    )


def missing_from(items: list, outcomes: list, answer: list[dict]) -> list[str]:
    """Why each measured model has no comparison in the answer: only one backend measured it, or it
    has no valid result (with its scenarios' outcomes)."""
    from collections import Counter

    compared = {r["model_id"] for r in answer if (r.get("candidates") or 0) > 1}
    shown = {r["model_id"] for r in answer}
    planned = list(dict.fromkeys(i.model for i in items))
    alone = [m for m in planned if m in shown and m not in compared]
    lines = []
    if alone:
        them = "it" if len(alone) == 1 else "them"
        lines.append(f"{', '.join(alone)}: only one backend measured {them} (nothing to compare)")
    for model in planned:
        if model in shown:
            continue
        counts = Counter(o.status if o.status != "ok" else o.validity for o in outcomes if o.scenario.model_id == model)
        said = ", ".join(f"{n} {status}" for status, n in counts.most_common())
        lines.append(f"{model}: no valid result ({said}; the report says why)")
    return lines

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

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable

from benchdb.backends import registry
from benchdb.plan import config as cfgmod

from benchdb.harness import machine as hardware


@dataclass
class QuickstartResult:
    run_id: str
    scenarios: int
    skipped_backends: list[str]
    ingest_line: str
    report_path: Path
    optimal_markdown: str
    change_points: int
    #: The report's busy-machine banner text (None when no result was flagged).
    banner: str | None = None


def run(db: str, out: str, report_path: Path, progress: Callable | None = None,
        note: Callable[[str], None] = print) -> QuickstartResult:
    from benchdb.reports import build as builder, render
    from benchdb.plan.driver import build_plan, run_plan
    from benchdb.warehouse import Warehouse

    suite = cfgmod.load_suite("smoke")
    runs, skipped = [], []
    for opts in suite.runs:
        avail = hardware.availability(registry.info(opts.backend))
        if avail["status"] != "available":
            skipped.append(f"{opts.backend} (unavailable: {avail['hint']})")
            continue
        runs.append(replace(opts, out=out))
    for s in skipped:
        note(f"skipping {s}")
    items = build_plan(runs)
    total = sum(len(i.scenarios) for i in items)
    note(f"measuring {total} scenarios of the smoke suite with "
         f"{', '.join(dict.fromkeys(o.backend for o in runs))}")
    rep = run_plan(items, config={"source": "suite smoke", "runs": [o.config() for o in runs]}, out=out,
                   tags=("quickstart",), progress=progress)
    warehouse = Warehouse(db)
    summary = warehouse.ingest([Path(out) / rep.run_id])     # also updates the change points
    with warehouse.reading() as con:      # a report even when a busy machine left nothing valid
        full = builder.build(con, str(warehouse.path), list(builder.ALL), builder.Filters(), allow_empty=True)
    banner = full.banner
    # the terminal gets the banner's text; its table of flagged results is in the HTML report
    optimal = replace(full, sections=[sec for sec in full.sections if sec.name == "optimal_hardware"],
                      banner=replace(banner, rows=[], more=0) if banner else None)
    report_path.write_text(render.html(full), encoding="utf-8")
    return QuickstartResult(rep.run_id, total, skipped, summary.line(), report_path,
                            render.markdown(optimal), summary.change_points,
                            banner.text if banner else None)

"""Drive a backend over its scenario plan and write one contract file per scenario."""

from __future__ import annotations

import importlib
import platform
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from types import ModuleType
from typing import Callable

import pyarrow as pa

from benchdb import __version__
from benchdb.errors import BackendUnavailable, BenchdbError
from benchdb.runners import hardware
from benchdb.runners.base import Outcome, RunOptions
from benchdb.runners.isolation import run_isolated
from benchdb.schema import contract
from benchdb.sql import Stats

#: backend name -> module implementing it
_MODULES = {"numpy": "benchdb.runners.numpy_runner", "pytorch": "benchdb.runners.pytorch_runner",
            "onnxruntime": "benchdb.runners.onnxruntime_runner", "openvino": "benchdb.runners.openvino_runner"}


def backend_names() -> list[str]:
    return sorted(hardware.BACKENDS)


def load_backend(name: str) -> ModuleType:
    """Import a backend's runner, or say it is unavailable and how to install it."""
    info = hardware.BACKENDS.get(name)
    if info is None:
        raise BenchdbError(f"unknown backend {name!r}; choose one of {', '.join(backend_names())}")
    avail = hardware.availability(info)
    if avail["status"] != "available":
        raise BackendUnavailable(f"backend {name} is unavailable: {info.package} is not installed; "
                                 f"install it with: {info.hint}")
    if name not in _MODULES:
        raise BackendUnavailable(f"backend {name} is not implemented in benchdb {__version__} yet; "
                                 f"available: {', '.join(sorted(_MODULES))}")
    try:
        module = importlib.import_module(_MODULES[name])
        module.software()          # imports the backend library itself
    except ImportError as exc:
        raise BackendUnavailable(f"backend {name} is unavailable: importing {info.module} failed ({exc}); "
                                 f"reinstall it with: {info.hint}") from None
    return module


@dataclass
class RunReport:
    run_id: str
    out_dir: Path
    files: list[Path] = field(default_factory=list)
    outcomes: list[Outcome] = field(default_factory=list)
    tables: list[pa.Table] = field(default_factory=list)


_UNSAFE = re.compile(r"[^A-Za-z0-9._=-]+")


def _file_name(o: Outcome, sid: str) -> str:
    sc = o.scenario
    parts = [sc.model_id, sc.backend, sc.device, sc.mode, sc.precision, f"bs{sc.batch_size}", sc.input_shape]
    slug = "__".join(_UNSAFE.sub("-", p).strip("-")[:60] or "x" for p in parts)
    return f"{slug}-{sid[:8]}.parquet"


def run(opts: RunOptions, *, progress: Callable[[Outcome, int, int], None] | None = None) -> RunReport:
    """Measure every scenario of ``opts`` and write its files under ``opts.out/<run_id>/``."""
    backend = load_backend(opts.backend)
    plan = backend.plan(opts)
    total = sum(len(s) for _, s in plan)
    if total == 0:
        raise BenchdbError("the plan has no scenarios; give at least one --model and batch size")
    started = datetime.now(timezone.utc)
    run_id = contract.new_run_id()
    run_meta = {
        "run_id": run_id, "started_at": started.isoformat(), "host": hardware.host(),
        "benchdb_version": __version__, "git_commit": hardware.git_commit(),
        "software": {"python": platform.python_version(), "benchdb": __version__, **backend.software()},
        "config": opts.config(), "tags": list(opts.tags),
    }
    hw = backend.hardware_of(opts.device)
    report = RunReport(run_id, Path(opts.out) / run_id)
    done = 0
    for model, scenarios in plan:
        if opts.isolate:
            outcomes = run_isolated(_MODULES[opts.backend], model, scenarios, opts, backend.model_info(model))
        else:
            outcomes = backend.run_model(model, scenarios, opts)
        for outcome in outcomes:
            sc = outcome.scenario
            cond = outcome.conditions
            meta = contract.build_metadata(run=run_meta, hardware=hw, model=outcome.model, scenario={
                **sc.key(), "status": outcome.status, "error": outcome.error,
                "validity": outcome.validity, "validity_reasons": outcome.validity_reasons,
                "primary_metric": outcome.primary_metric, "timing_method": outcome.timing_method,
                "threads": cond.threads if cond else opts.thread_count,
                "load_avg_1m": cond.load_avg_1m if cond else None,
                "stop_reason": outcome.stop_reason, "started_at": outcome.started_at,
                "settings": {**sc.settings, "background_cpu_pct": cond.background_cpu_pct if cond else None},
                "extra": outcome.extra,
            })
            table = contract.samples_table(meta, outcome.rows)
            path = contract.write_scenario(report.out_dir / _file_name(outcome, meta["scenario"]["scenario_id"]),
                                           meta, table)
            report.files.append(path)
            report.outcomes.append(outcome)
            report.tables.append(table)
            done += 1
            if progress:
                progress(outcome, done, total)
    return report


def _clip(text: str, n: int = 110) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def summary_rows(report: RunReport) -> list[dict]:
    """Per scenario: label, status, median and p90 latency, throughput, from the statistics SQL."""
    stats = Stats()
    try:
        by_id = {}
        if report.tables:
            for row in stats.compute(pa.concat_tables(report.tables)):
                if row["metric"] == "latency_s":
                    by_id[row["scenario_id"]] = row
    finally:
        stats.close()
    out = []
    for table, o in zip(report.tables, report.outcomes):
        sid = contract.scenario_id(report.run_id, o.scenario.key())
        st = by_id.get(sid, {})
        med = st.get("median")
        out.append({"scenario": o.scenario.label(), "status": o.status if o.status != "ok" else o.validity,
                    "median_ms": med * 1e3 if med else None,
                    "p90_ms": st["p90"] * 1e3 if st.get("p90") else None,
                    "items_per_s": o.scenario.batch_size / med if med else None,
                    "n": st.get("n", 0), "note": _clip(o.error or "; ".join(o.validity_reasons) or "")})
    return out

"""Drive a backend over its scenario plan and write one contract file per scenario."""

from __future__ import annotations

import platform
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from types import ModuleType
from typing import Callable

import pyarrow as pa

from benchdb import __version__
from benchdb.backends import registry
from benchdb.errors import BenchdbError
from benchdb.harness import machine as hardware
from benchdb.backends.base import Outcome, RunOptions, Scenario
from benchdb.harness.isolation import run_isolated
from benchdb.schema import contract, identity
from benchdb.sql import Stats

def backend_names() -> list[str]:
    return registry.names()


def load_backend(name: str) -> ModuleType:
    return registry.load(name)


@dataclass
class RunReport:
    run_id: str
    out_dir: Path | str
    files: list = field(default_factory=list)
    outcomes: list[Outcome] = field(default_factory=list)
    tables: list[pa.Table] = field(default_factory=list)


class Interrupted(BenchdbError):
    """Ctrl-C during a run: every scenario finished before it is kept in its file."""

    exit_code = 130

    def __init__(self, report: "RunReport", total: int):
        self.report = report
        self.total = total
        super().__init__(f"interrupted: kept {len(report.files)} of {total} scenario file(s) in {report.out_dir}")


@dataclass
class PlanItem:
    opts: RunOptions
    model: str
    scenarios: list[Scenario]


_UNSAFE = re.compile(r"[^A-Za-z0-9._=-]+")


def _file_name(o: Outcome, sid: str) -> str:
    sc = o.scenario
    parts = [sc.model_id, sc.backend, sc.device, sc.mode, sc.precision, f"bs{sc.batch_size}", sc.input_shape]
    slug = "__".join(_UNSAFE.sub("-", p).strip("-")[:60] or "x" for p in parts)
    return f"{slug}-{sid[:8]}.parquet"


def build_plan(runs: list[RunOptions], *, exclude: list[dict] | None = None,
               shard: tuple[int, int] | None = None,
               unmatched: Callable[[dict], None] | None = None) -> list[PlanItem]:
    """Every scenario of every run entry, minus exclusions; with a shard, a deterministic slice:
    scenario k (in plan order) belongs to shard (k mod n) + 1, so n shards partition the plan.
    ``unmatched(rule)`` is called for each exclude rule that matched no scenario (a typo)."""
    from benchdb.plan.config import matching_rules

    exclude = exclude or []
    used: set[int] = set()
    items: list[PlanItem] = []
    for opts in runs:
        backend = load_backend(opts.backend)
        for model, scenarios in backend.plan(opts):
            kept = []
            for sc in scenarios:
                hits = matching_rules(exclude, sc)
                used.update(hits)
                if not hits:
                    kept.append(sc)
            if kept:
                items.append(PlanItem(opts, model, kept))
    for i, rule in enumerate(exclude):
        if i not in used and unmatched is not None:
            unmatched(rule)
    if shard is not None:
        index, count = shard
        k = 0
        for item in items:
            mine = []
            for sc in item.scenarios:
                if k % count == index - 1:
                    mine.append(sc)
                k += 1
            item.scenarios = mine
        items = [i for i in items if i.scenarios]
    return items


def hardware_ids(items: list[PlanItem]) -> dict[tuple[str, str], str]:
    """(backend, device) -> the hardware id its results will carry, for every scenario device."""
    out = {}
    for item in items:
        for sc in item.scenarios:
            key = (sc.backend, sc.device)
            if key not in out:
                out[key] = identity.hardware_id(load_backend(sc.backend).hardware_of(sc.device))
    return out


def series_ids(items: list[PlanItem]) -> list[str]:
    """The series id of every planned scenario, in plan order (for --skip-fresh)."""
    hw = hardware_ids(items)
    return [identity.series_id(sc.key(), hw[(sc.backend, sc.device)]) for item in items for sc in item.scenarios]


def skip_series(items: list[PlanItem], skip: set[str]) -> int:
    """Drop the planned scenarios whose series id is in ``skip`` (in place); returns how many."""
    ids = iter(series_ids(items))                    # plan order
    dropped = 0
    for item in items:
        kept = [sc for sc in item.scenarios if next(ids) not in skip]
        dropped += len(item.scenarios) - len(kept)
        item.scenarios = kept
    return dropped


def estimate_seconds(items: list[PlanItem], history: dict[str, float]) -> tuple[float, int]:
    """Seconds the plan should take (each scenario's last measurement, else its minimum time,
    plus 1 s of set-up) and how many scenarios had a history to go by."""
    seconds, known = 0.0, 0
    ids = series_ids(items) if history else []
    k = 0
    for item in items:
        for _ in item.scenarios:
            past = history.get(ids[k]) if ids else None
            k += 1
            known += past is not None
            seconds += (past if past is not None else item.opts.rule.min_time_s) + 1.0
    return seconds, known


def run(opts: RunOptions, *, progress: Callable[[Outcome, int, int], None] | None = None) -> RunReport:
    """Measure every scenario of ``opts`` and write its files under ``opts.out/<run_id>/``."""
    return run_plan(build_plan([opts]), config=opts.config(), out=opts.out, tags=opts.tags, progress=progress)


def run_plan(items: list[PlanItem], *, config: dict, out, tags=(),
             progress: Callable[[Outcome, int, int], None] | None = None) -> RunReport:
    total = sum(len(i.scenarios) for i in items)
    if total == 0:
        raise BenchdbError("the plan has no scenarios; give at least one --model and batch size")
    started = datetime.now(timezone.utc)
    run_id = contract.new_run_id()
    software = {"python": platform.python_version(), "benchdb": __version__}
    for name in dict.fromkeys(i.opts.backend for i in items):
        software[name] = load_backend(name).software()
    run_meta = {
        "run_id": run_id, "started_at": started.isoformat(), "host": hardware.host(),
        "benchdb_version": __version__, "git_commit": hardware.git_commit(),
        "software": software, "config": config, "tags": list(tags),
    }
    sink = _Sink(str(out), run_id)
    report = RunReport(run_id, sink.display)
    done = 0
    hw_cache: dict[tuple[str, str], dict] = {}
    try:
        for item in items:
            opts = item.opts
            backend = load_backend(opts.backend)
            if opts.isolate:
                outcomes = run_isolated(registry.info(opts.backend).implementation, item.model, item.scenarios,
                                        opts, backend.model_info(item.model))
            else:
                outcomes = backend.run_model(item.model, item.scenarios, opts)
            for outcome in outcomes:
                sc = outcome.scenario
                key = (sc.backend, sc.device)
                if key not in hw_cache:
                    hw_cache[key] = backend.hardware_of(sc.device)
                hw = hw_cache[key]
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
                report.files.append(sink.write(_file_name(outcome, meta["scenario"]["scenario_id"]), meta, table))
                report.outcomes.append(outcome)
                report.tables.append(table)
                done += 1
                if progress:
                    progress(outcome, done, total)
    except KeyboardInterrupt:
        raise Interrupted(report, total) from None
    return report


class _Sink:
    """Where scenario files go: a local folder, or an fsspec URL (s3://, gs://, hf://, file://, ...).
    Remote files are written atomically here first, then uploaded one by one."""

    def __init__(self, out: str, run_id: str):
        self.remote = "://" in out
        if self.remote:
            try:
                import fsspec
            except ImportError:
                raise BenchdbError(f"--out {out} needs fsspec: pip install fsspec (plus s3fs / gcsfs / "
                                   "huggingface_hub for that protocol)") from None
            import tempfile

            try:
                self.fs, root = fsspec.core.url_to_fs(out)
            except (ImportError, ValueError) as exc:
                raise BenchdbError(f"--out {out}: {exc}") from None
            self.root = f"{root.rstrip('/')}/{run_id}"
            self.local = Path(tempfile.mkdtemp(prefix="benchdb-out-"))
            self.display = f"{out.rstrip('/')}/{run_id}"
        else:
            self.local = Path(out) / run_id
            self.display = self.local

    def write(self, name: str, meta: dict, table: pa.Table):
        path = contract.write_scenario(self.local / name, meta, table)
        if not self.remote:
            return path
        target = f"{self.root}/{name}"
        self.fs.makedirs(self.root, exist_ok=True)
        self.fs.put_file(str(path), target)
        path.unlink()
        return target


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
        sid = identity.scenario_id(report.run_id, o.scenario.key())
        st = by_id.get(sid, {})
        med = st.get("median")
        out.append({"scenario": o.scenario.label(), "status": o.status if o.status != "ok" else o.validity,
                    "median_ms": med * 1e3 if med else None,
                    "p90_ms": st["p90"] * 1e3 if st.get("p90") else None,
                    "items_per_s": o.scenario.batch_size / med if med else None,
                    "n": st.get("n", 0), "note": _clip(o.error or "; ".join(o.validity_reasons) or "")})
    return out

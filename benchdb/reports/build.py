"""Reports: the queries behind each section, under the user's filters and constraints.

A report is a list of sections; each section holds the rows of one query over the documented
views (the same columns for JSON/CSV) plus the columns a person reads in Markdown/HTML.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Callable

import duckdb

from benchdb import sql
from benchdb.errors import BenchdbError


class NothingToReport(BenchdbError):
    exit_code = 1


@dataclass(frozen=True)
class Filters:
    models: tuple[str, ...] = ()
    hardware: tuple[str, ...] = ()
    objective: str = "throughput"
    max_latency_ms: float | None = None
    max_memory_mb: float | None = None
    prices: dict[str, float] = field(default_factory=dict)

    def params(self) -> dict[str, Any]:
        return {"models": list(self.models) or None, "hardware": list(self.hardware) or None}

    def describe(self) -> str:
        parts = []
        if self.models:
            parts.append("models " + ", ".join(self.models))
        if self.hardware:
            parts.append("hardware " + ", ".join(self.hardware))
        if self.max_latency_ms is not None:
            parts.append(f"latency <= {self.max_latency_ms:g} ms")
        if self.max_memory_mb is not None:
            parts.append(f"memory <= {self.max_memory_mb:g} MB")
        return "; ".join(parts)


@dataclass
class Column:
    header: str
    key: str
    fmt: str = "text"          # text | ms | num | pct | ratio | mib | int | sci


@dataclass
class Section:
    name: str
    title: str
    description: str
    columns: list[Column]          # what a person reads
    keys: list[str]                # every column of the query (JSON/CSV)
    rows: list[dict[str, Any]]
    notes: list[str] = field(default_factory=list)
    plots: list[tuple[str, str]] = field(default_factory=list)   # (caption, svg) for HTML


@dataclass
class Report:
    db: str
    generated_at: str
    summary: dict[str, Any]
    filters: str
    sections: list[Section]


def _rows(con: duckdb.DuckDBPyConnection, name: str, params: dict[str, Any]) -> tuple[list[str], list[dict]]:
    text = sql.load(f"reports/{name}.sql")
    used = {k: v for k, v in params.items() if f"${k}" in text}
    cur = con.execute(text, used)
    keys = [d[0] for d in cur.description]
    return keys, [dict(zip(keys, r)) for r in cur.fetchall()]


OBJECTIVES = ("throughput", "latency", "energy", "cost")


def _optimal(con, f: Filters) -> Section:
    if f.objective not in OBJECTIVES:
        raise BenchdbError(f"--objective {f.objective!r} is not one of {', '.join(OBJECTIVES)}")
    if f.objective == "cost" and not f.prices:
        raise BenchdbError("--objective cost needs --prices FILE (YAML: hardware name -> USD per hour)")
    params = {**f.params(), "objective": f.objective,
              "max_latency_s": None if f.max_latency_ms is None else f.max_latency_ms / 1e3,
              "max_memory_bytes": None if f.max_memory_mb is None else f.max_memory_mb * 2**20,
              "price_names": list(f.prices), "price_values": list(f.prices.values())}
    keys, rows = _rows(con, "optimal_hardware", params)
    value_fmt = {"throughput": "num", "latency": "ms", "energy": "sci", "cost": "num"}[f.objective]
    value_head = {"throughput": "items/s", "latency": "latency", "energy": "J/item", "cost": "USD/1M items"}
    notes = []
    if f.objective == "cost":
        hw = [r[0] for r in con.execute(sql.load("queries/hardware_names.sql")).fetchall()]
        missing = sorted(set(hw) - set(f.prices))
        if missing:
            notes.append("no price for: " + ", ".join(missing) + " (left out of the cost ranking)")
    if f.objective == "energy":
        notes.append("energy needs power samples (NVIDIA telemetry); results without them are left out")
    return Section(
        "optimal_hardware", f"Optimal hardware by {f.objective}",
        "Per model, batch size and input shape: the best hardware/backend/mode/precision among the "
        "latest valid results" + (f" under {f.describe()}" if f.describe() else "") + ", the runner-up, "
        "and how much better the best is.",
        [Column("model", "model_id"), Column("batch", "batch_size", "int"), Column("input", "input_shape"),
         Column("best hardware", "best_hardware"), Column("backend", "best_backend"),
         Column("mode", "best_mode"), Column("precision", "best_precision"),
         Column(f"best {value_head[f.objective]}", "best_value", value_fmt),
         Column("runner-up", "runner_up_label"), Column(f"runner-up {value_head[f.objective]}",
                                                        "runner_up_value", value_fmt),
         Column("margin", "margin", "pct"), Column("candidates", "candidates", "int")],
        keys, [dict(r, runner_up_label=_label(r, "runner_up")) for r in rows], notes)


def _label(r: dict, prefix: str) -> str | None:
    if r.get(f"{prefix}_hardware") is None:
        return None
    return (f"{r[f'{prefix}_hardware']} / {r[f'{prefix}_backend']} / {r[f'{prefix}_mode']} / "
            f"{r[f'{prefix}_precision']}")


def _matrix(con, f: Filters) -> Section:
    keys, rows = _rows(con, "matrix", f.params())
    return Section(
        "compat_matrix", "Compatibility matrix",
        "Which model families run on which hardware and backend. Counts are over the latest result of "
        "every scenario; rating from throughput relative to the fastest for the same model and shape "
        "(3 best, 2 good, 1 slow, 0 broken). Pairs never tried are left out, not guessed.",
        [Column("family", "family"), Column("model type", "model_type"), Column("hardware", "hardware_name"),
         Column("backend", "backend"), Column("ok", "ok", "int"), Column("failed", "failed", "int"),
         Column("oom", "oom", "int"), Column("timeout", "timeout", "int"),
         Column("unsupported", "unsupported", "int"), Column("mismatch", "mismatch", "int"),
         Column("rel. throughput", "relative_throughput", "ratio"), Column("rating", "rating_label"),
         Column("most common error", "top_error")],
        keys, rows)


def _speedup(con, f: Filters) -> Section:
    keys, rows = _rows(con, "speedup", f.params())
    return Section(
        "speedup", "Speedup against CPU PyTorch eager",
        "Median latency of each latest valid result against PyTorch eager fp32 on a CPU for the same "
        "model, batch size and input shape (>1 is faster).",
        [Column("model", "model_id"), Column("batch", "batch_size", "int"), Column("input", "input_shape"),
         Column("hardware", "hardware_name"), Column("backend", "backend"), Column("mode", "mode"),
         Column("precision", "precision"), Column("median", "median_s", "ms"),
         Column("baseline", "baseline_hardware"), Column("baseline median", "baseline_median_s", "ms"),
         Column("speedup", "speedup", "ratio")],
        keys, rows)


def _scaling(con, f: Filters) -> Section:
    keys, rows = _rows(con, "scaling", f.params())
    return Section(
        "batch_scaling", "Batch scaling",
        "Latency and throughput against batch size; scaling efficiency is throughput relative to "
        "perfect linear scaling from the smallest batch measured.",
        [Column("model", "model_id"), Column("hardware", "hardware_name"), Column("backend", "backend"),
         Column("mode", "mode"), Column("precision", "precision"), Column("input", "input_shape"),
         Column("batch", "batch_size", "int"), Column("latency", "latency_s", "ms"),
         Column("items/s", "throughput", "num"), Column("efficiency", "scaling_efficiency", "ratio"),
         Column("peak memory", "peak_memory_bytes", "mib")],
        keys, rows)


def _trends(con, f: Filters) -> Section:
    keys, rows = _rows(con, "trends", f.params())
    return Section(
        "trends", "Trends",
        "Median latency of each scenario over runs (series with at least two valid results).",
        [Column("model", "model_id"), Column("hardware", "hardware_name"), Column("backend", "backend"),
         Column("mode", "mode"), Column("batch", "batch_size", "int"), Column("input", "input_shape"),
         Column("run started", "run_started_at"), Column("commit", "git_commit"),
         Column("median", "median", "ms"), Column("change", "change_vs_previous", "pct")],
        keys, rows)


def _memory(con, f: Filters) -> Section:
    keys, rows = _rows(con, "memory", f.params())
    return Section(
        "memory", "Peak memory", "Peak device memory when measured, else peak host RSS of the process.",
        [Column("model", "model_id"), Column("batch", "batch_size", "int"), Column("input", "input_shape"),
         Column("hardware", "hardware_name"), Column("backend", "backend"), Column("mode", "mode"),
         Column("precision", "precision"), Column("peak memory", "peak_memory_bytes", "mib")],
        keys, rows)


def _regressions(con, f: Filters) -> Section:
    keys, rows = _rows(con, "regressions", f.params())
    return Section(
        "regressions", "Open change points",
        "Shifts in a series' median over runs (E-divisive means, permutation test p < 0.05, at least 3 runs "
        "on each side, at least 3 % change); acknowledge intended ones with `benchdb ack CHANGE_ID --note ...`.",
        [Column("change id", "change_id"), Column("model", "model_id"), Column("batch", "batch_size", "int"),
         Column("input", "input_shape"), Column("hardware", "hardware_name"), Column("backend", "backend"),
         Column("mode", "mode"), Column("first run after", "run_started_at"), Column("commit", "git_commit"),
         Column("before", "before_median", "ms"), Column("after", "after_median", "ms"),
         Column("change", "change", "pct"), Column("p", "p_value", "sci")],
        keys, rows)


BUILDERS: dict[str, Callable[[Any, Filters], Section]] = {
    "optimal-hardware": _optimal, "matrix": _matrix, "speedup": _speedup, "scaling": _scaling,
    "trends": _trends, "memory": _memory, "regressions": _regressions,
}
ALL = ("optimal-hardware", "matrix", "speedup", "scaling", "memory", "trends", "regressions")


def build(con: duckdb.DuckDBPyConnection, db: str, kinds: list[str], filters: Filters) -> Report:
    cur = con.execute(sql.load("reports/summary.sql"))
    summary = dict(zip([d[0] for d in cur.description], cur.fetchall()[0]))
    if summary["results"] == 0:
        raise NothingToReport(f"nothing to report: {db} holds no results yet; "
                              "load some with `benchdb ingest RESULTS_DIR`")
    sections = [BUILDERS[k](con, filters) for k in kinds]
    if not any(s.rows for s in sections):
        why = (f"no results match {filters.describe()}" if filters.describe()
               else f"no valid results for {', '.join(kinds)} in {db}")
        raise NothingToReport(f"nothing to report: {why}; see `benchdb query \"SELECT model_id, status, "
                              "validity, validity_reasons FROM results\"`")
    return Report(db, datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), summary,
                  filters.describe(), sections)

"""What a report is: the user's filters, its sections (a query's rows plus the columns a person
reads), the report that holds them, and the rows of one section's query."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchdb import sql
from benchdb.errors import BenchdbError

if TYPE_CHECKING:
    import duckdb


class NothingToReport(BenchdbError):
    exit_code = 1


@dataclass(frozen=True)
class Filters:
    models: tuple[str, ...] = ()
    hardware: tuple[str, ...] = ()
    objective: str = "throughput"
    max_latency_ms: float | None = None
    max_memory_mb: float | None = None
    #: --max-accuracy-drop as a fraction (0.01 = 1 %); None: no accuracy constraint.
    max_accuracy_drop: float | None = None
    prices: dict[str, float] = field(default_factory=dict)
    #: --per: how --optimal-hardware normalises a throughput (system | accelerator | watt | cost);
    #: None: per system, without the systems side-by-side section that an explicit --per adds.
    per: str | None = None
    #: USD per accelerator-hour by accelerator name (--prices' accelerator_hour); ``prices`` holds
    #: USD per hour by system or hardware name.
    accelerator_prices: dict[str, float] = field(default_factory=dict)
    #: Where and when the --prices file's prices were read (its source and as_of), for the reader.
    prices_source: str | None = None
    #: ``prices`` came from a ``system_hour`` list: USD per system-hour (a flat map names hardware).
    prices_per_system: bool = False
    #: The serving SLO (--slo, benchdb.reports.serving_sections.parse_slo): max_ttft_p90_s, max_tpot_p50_s,
    #: min_interactivity; empty: none.
    slo: dict[str, float] = field(default_factory=dict)
    #: --cost-at: the interactivity (tokens/s per user) the serving cost section reads each front at.
    cost_at: float | None = None
    #: More --prices files, read side by side by --cost-at: (system or hardware prices, accelerator
    #: prices, source label, per system) each, as ``load_prices`` returns them.
    more_prices: tuple[tuple[dict[str, float], dict[str, float], str | None, bool], ...] = ()
    #: --chassis: a site's own chassis power model (benchdb/analysis/chassis.yaml's fields).
    chassis: Path | None = None

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
            parts.append(f"memory <= {self.max_memory_mb:g} MiB")
        if self.max_accuracy_drop is not None:
            parts.append(f"accuracy drop <= {self.max_accuracy_drop * 100:g} %")
        return "; ".join(parts)


@dataclass
class Column:
    header: str
    key: str
    fmt: str = "text"  # text | ms | num | pct | ratio | mib | int | sci | result (a link to its drill-down)
    #: Shown in a terminal's Markdown; False: only with --wide and in HTML.
    compact: bool = True
    #: Shown with --wide and in HTML; False: a terminal's shorter form of other columns.
    full: bool = True


@dataclass
class Section:
    name: str
    title: str
    description: str
    columns: list[Column]  # what a person reads
    keys: list[str]  # every column of the query (JSON/CSV)
    rows: list[dict[str, Any]]
    notes: list[str] = field(default_factory=list)
    plots: list[tuple[str, str]] = field(default_factory=list)  # (caption, svg) for HTML
    #: What an empty section says instead of rows: why it is empty.
    empty: str = "No rows for this section."
    #: True when an empty section is itself the answer (no open change points in series that
    #: were searched): the report is not an error then.
    answered: bool = False
    #: Rows a plot needs beyond the table (the optimal section's latency-throughput points).
    extra: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    #: What a terminal prints instead of ``description`` (the method in a few words); "": the description.
    brief: str = ""


@dataclass
class Banner:
    """What the top of a report says when results were measured on a busy machine: ``text`` (one
    paragraph), the flagged results (``columns``/``rows``, busiest invalid first, at most
    ``BANNER_ROWS``) and the counts behind the text."""

    text: str
    columns: list[Column]
    rows: list[dict[str, Any]]
    flagged: int
    total: int
    invalid: int
    cpu_min: float | None
    cpu_max: float | None
    more: int = 0
    #: The notice in one line (a terminal's form of ``text``).
    line: str = ""


@dataclass
class Report:
    db: str
    generated_at: str
    summary: dict[str, Any]
    filters: str
    sections: list[Section]
    #: Results measured on a busy machine (None when there are none).
    banner: Banner | None = None
    #: One row per hardware x software combination behind the report (environment.sql).
    environment: list[dict[str, Any]] = field(default_factory=list)
    #: Why latest timing attempts were left out of the sections: (reason, results, measured) rows.
    excluded: list[dict[str, Any]] = field(default_factory=list)
    #: Results that ran but are invalid (measured_invalid.sql): shown flagged, never ranked.
    measured_invalid: list[dict[str, Any]] = field(default_factory=list)
    #: Per result behind a figure (HTML only): its statistics, other metrics, samples, command.
    drilldown: list[dict[str, Any]] = field(default_factory=list)


def generated_now() -> str:
    """A report's generation time, as it prints it."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")


def section_rows(con: duckdb.DuckDBPyConnection, name: str, params: dict[str, Any]) -> tuple[list[str], list[dict]]:
    text = sql.load(f"reports/{name}.sql")
    used = {k: v for k, v in params.items() if f"${k}" in text}
    cur = con.execute(text, used)
    return [d[0] for d in cur.description], sql.rows(cur)


def one_row(con: duckdb.DuckDBPyConnection, name: str, params: dict[str, Any]) -> dict[str, Any]:
    return section_rows(con, name, params)[1][0]

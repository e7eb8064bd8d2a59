"""An MLPerf results repository's published tables (root ``summary_results.json`` of v5.x, ``summary.json``
of v6.x, each submitter's ``summary.csv``) read into rows keyed by Location."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchdb.errors import clip
from benchdb.interop.mlperf import rules
from benchdb.interop.mlperf import system_desc as system
from benchdb.interop.mlperf.system_desc import SIDE_BYTES, count, count_or_none, finite_float
from benchdb.interop.writer import SourceError

ROOT_TABLES = ("summary_results.json", "summary.json")


@dataclass
class Row:
    """One row of a published table, in the v5.x names."""

    table: Path
    location: str
    accelerator: str | None
    per_node: int | None
    nodes: int | None
    model: str
    scenario: str
    result: float | None
    units: str | None
    inferred: bool
    power: float | None
    power_units: str | None
    accuracy: str | None
    weight_data_types: str | None
    version: str | None
    platform: str | None = None
    used_model: str | None = None  # the folder's model where it is not the benchmark's (open division)
    total_accelerators: int | None = None
    host_cpu: str | None = None
    host_cpus_per_node: int | None = None


def _first(row: dict[str, Any], *names: str) -> Any:
    for name in names:
        if name in row:
            return row[name]
    return None


@dataclass
class Table:
    path: Path
    rows: dict[str, Row] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    #: Each row's disagreements with itself (:mod:`benchdb.interop.mlperf.published`), by Location:
    #: filled in by the repository that reads the table.
    problems: dict[str, list[str]] = field(default_factory=dict)


def _location(value: Any) -> str:
    text = str(value or "").replace("\\", "/").strip().removeprefix("./").strip("/")
    for tail in ("/performance/run_1", "/performance"):
        text = text.removesuffix(tail)
    return text


def read_table(path: Path, root: Path | None = None) -> Table:
    """A published table: a JSON list (summary_results.json), an object of rows (summary.json) or
    the checker's CSV (summary.csv). An empty or unreadable file (or one linked out of the repository
    ``root``) is a SourceError; a bad row is one of the table's errors (the other rows stand)."""
    from benchdb.interop import load_json
    from benchdb.schema import documents

    table = Table(path)
    if path.suffix == ".csv":
        try:
            raw: list[Any] = documents.read_csv(path, max_bytes=SIDE_BYTES, within=root)
            empty = not raw and not documents.read_text(path, max_bytes=SIDE_BYTES, errors="replace").strip()
        except documents.DocumentError as exc:
            raise SourceError(exc.problem) from None
        if empty:
            raise SourceError("empty file (expected the submission checker's CSV table with a header row)")
    else:
        doc = load_json(path, max_bytes=SIDE_BYTES, within=root)
        raw = list(doc.values()) if isinstance(doc, dict) else doc if isinstance(doc, list) else []
        if not raw:
            raise SourceError("no rows (expected a list or an object of result rows)")
    for n, r in enumerate(raw, 1):
        if not isinstance(r, dict) or not r.get("Location"):
            table.errors.append(f"row {n} has no Location")
            continue
        loc = _location(r["Location"])
        units = system.text(_first(r, "Performance_Units", "Units"))
        result = finite_float(_first(r, "Performance_Result", "Result"))
        if units is not None and units not in rules.UNITS:
            table.errors.append(
                f"{loc}: unknown units {units!r} (known: {', '.join(rules.UNITS)}); its figure is not compared"
            )
            units, result = None, None
        elif result is None or result <= 0:
            table.errors.append(
                f"{loc}: result {clip(repr(_first(r, 'Performance_Result', 'Result')), 40)} is "
                "not a positive number; it is not compared"
            )
            result = None
        try:
            per_node = count(_first(r, "a#", "accelerators_per_node"), "a#")
            nodes = count(_first(r, "Nodes", "number_of_nodes"), "Nodes")
        except SourceError as exc:
            table.errors.append(f"{loc}: {exc}")
            per_node = nodes = None
        total, cpus = count_or_none(r.get("total_accelerators")), count_or_none(r.get("host_processors_per_node"))
        table.rows[loc] = Row(
            table=path,
            location=loc,
            accelerator=system.text(_first(r, "Accelerator", "accelerator_model_name")),
            per_node=per_node,
            nodes=nodes,
            model=str(r.get("Model") or ""),
            scenario=str(r.get("Scenario") or ""),
            result=result,
            units=units,
            inferred=str(r.get("inferred", "0")).strip() in ("1", "True", "true"),
            power=finite_float(r.get("Power_Result")),
            power_units=system.text(r.get("Power_Units")),
            accuracy=system.text(r.get("Accuracy")),
            weight_data_types=system.text(r.get("weight_data_types")),
            version=system.text(r.get("version")),
            platform=system.text(r.get("Platform")),
            used_model=system.text(r.get("UsedModel")),
            total_accelerators=total,
            host_cpu=system.text(r.get("host_processor_model_name")),
            host_cpus_per_node=cpus,
        )
    return table

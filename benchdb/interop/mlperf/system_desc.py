"""An MLPerf run's place in a results repository (:func:`locate`) and the system its systems JSON
describes (:func:`read_system`), with the number and text readers the repository's files share."""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchdb.errors import clip
from benchdb.interop.writer import SourceError, cpu_vendor

SUMMARY = "mlperf_log_summary.txt"
ENDPOINTS = "result_summary.json"
#: Systems JSON fields a run cannot be described without.
REQUIRED_SYSTEM_FIELDS = (
    "accelerator_model_name",
    "accelerators_per_node",
    "number_of_nodes",
    "host_processor_model_name",
)
#: The most of a side file read whole (a systems JSON, a published table, accuracy.txt or
#: accuracy_results.json): a round's whole summary_results.json holds a few MiB.
SIDE_BYTES = 64 * 2**20
#: The most of a run's own file (its summary log, result_summary.json) or a log read line by line
#: (mlperf_log_detail.txt, spl.txt).
LOG_BYTES = 256 * 2**20
_NONE = ("", "n/a", "na", "none", "null", "-")
_PRECISION = re.compile(r"\b(nv)?(mx)?(fp\d+|bf16|u?int\d+)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Located:
    """A performance run's place in a results repository."""

    root: Path
    division: str
    submitter: str
    system: str
    benchmark: str
    scenario_folder: str
    path: Path  # its mlperf_log_summary.txt or result_summary.json

    @property
    def location(self) -> str:
        """The scenario folder relative to the root: the table's Location."""
        return "/".join((self.division, self.submitter, "results", self.system, self.benchmark, self.scenario_folder))

    @property
    def systems_json(self) -> Path:
        return self.root / self.division / self.submitter / "systems" / f"{self.system}.json"


def locate(path: Path) -> Located | None:
    """Where a run's file sits in a results repository, or None outside that layout."""
    p = Path(os.path.abspath(path))
    parts = p.parts
    if p.name == SUMMARY and len(parts) >= 10 and parts[-2] == "run_1" and parts[-3] == "performance":
        rest = parts[:-3]
    elif p.name == ENDPOINTS and len(parts) >= 9 and parts[-2] == "performance":
        rest = parts[:-2]
    elif p.name == ENDPOINTS and len(parts) >= 10 and parts[-2] == "run_1" and parts[-3] == "performance":
        rest = parts[:-3]
    else:
        return None
    if len(rest) < 7 or rest[-4] != "results":
        return None
    return Located(
        root=Path(*rest[:-6]),
        division=rest[-6],
        submitter=rest[-5],
        system=rest[-3],
        benchmark=rest[-2],
        scenario_folder=rest[-1],
        path=p,
    )


def count(value: Any, name: str) -> int | None:
    """A whole number from a systems JSON or table (``"8"``, 8, ``""`` -> None)."""
    if value is None or (isinstance(value, str) and value.strip().lower() in _NONE):
        return None
    if isinstance(value, bool):
        raise SourceError(f"{name} is {value!r}, not a count")
    try:
        number = float(str(value).strip())
    except ValueError:
        raise SourceError(f"{name} is {clip(repr(value), 40)}, not a count") from None
    if not number.is_integer() or number < 0:
        raise SourceError(f"{name} is {value!r}, not a count")
    return int(number)


def count_or_none(value: Any) -> int | None:
    """A count where one is given; an unreadable one is no count (nothing to compare)."""
    try:
        return count(value, "")
    except SourceError:
        return None


def text(value: Any) -> str | None:
    text = " ".join(str(value).split()) if value is not None else ""
    return None if text.lower() in _NONE else text


def precision_of(weights: Any) -> str:
    """A benchdb precision from the checker's ``weight_data_types`` (``fp8``; several as ``fp8+int8``)."""
    found = list(dict.fromkeys(m.group(0).lower() for m in _PRECISION.finditer(str(weights or ""))))
    return "+".join(found) if found else "unknown"


@dataclass
class System:
    hardware: dict[str, Any]
    software: dict[str, Any]
    accelerator: str | None  # as the systems JSON names it ('' / N/A: none)
    per_node: int
    nodes: int
    weight_data_types: str | None


def read_system(path: Path, root: Path | None = None) -> System:
    """The hardware record a systems JSON describes (a SourceError names what is missing); a file
    linked out of the repository ``root`` is refused."""
    from benchdb.interop import load_json
    from benchdb.schema import system

    if not path.is_file():
        raise SourceError(f"no systems JSON {path.name} (every system of a submission has one)")
    doc = load_json(path, max_bytes=SIDE_BYTES, within=root)
    if not isinstance(doc, dict):
        raise SourceError("not a systems JSON (expected an object of system fields)")
    missing = [k for k in REQUIRED_SYSTEM_FIELDS if k not in doc]
    if missing:
        raise SourceError(f"missing {', '.join(missing)}; a systems JSON names {', '.join(REQUIRED_SYSTEM_FIELDS)}")
    where = path.name
    accelerator = text(doc.get("accelerator_model_name"))
    per_node = count(doc.get("accelerators_per_node"), "accelerators_per_node") or 0
    if accelerator is None:
        per_node = 0
    nodes = count(doc.get("number_of_nodes"), "number_of_nodes") or 1
    cpu = text(doc.get("host_processor_model_name"))
    # a heterogeneous system's CPU counts are text ("64(AMD EPYC 9534) and 96(...)"): not counted
    sockets = count_or_none(doc.get("host_processors_per_node"))
    cores = count_or_none(doc.get("host_processor_core_count"))
    availability = (text(doc.get("status")) or "").lower()
    record: dict[str, Any] = {
        "device_name": accelerator,
        "accelerators_per_node": per_node,
        "nodes": nodes,
        "cpu_model": cpu,
        "cpu_sockets": sockets or None,
        "cores_physical": cores * (sockets or 1) if cores else None,
        "memory_bytes": system.parse_size(text(doc.get("accelerator_memory_capacity"))) if accelerator else None,
        "host_memory_bytes": system.parse_size(text(doc.get("host_memory_capacity"))),
        "interconnect": text(doc.get("accelerator_interconnect")) if accelerator else None,
        "system_name": text(doc.get("system_name")),
        "availability": availability if availability in system.AVAILABILITY else None,
        "os": text(doc.get("operating_system")),
    }
    if accelerator is None:
        record["vendor"] = cpu_vendor(cpu)
    try:
        hardware = system.normalize({k: v for k, v in record.items() if v is not None}, where)
    except system.SystemError as exc:
        raise SourceError(str(exc).removeprefix(f"{where}: ")) from None
    software = {k: text(doc.get(k)) for k in ("framework", "other_software_stack", "operating_system")}
    return System(
        hardware=hardware,
        software={k: v for k, v in software.items() if v},
        accelerator=accelerator,
        per_node=per_node,
        nodes=nodes,
        weight_data_types=text(doc.get("weight_data_types")),
    )


def finite_float(value: Any) -> float | None:
    if value is None or value == "" or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None

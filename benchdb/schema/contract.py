"""The Parquet measurement contract (v1): the only thing runners and ingest share.

A contract file holds the raw samples of one scenario in long format (one row per timed
iteration per metric) plus one JSON document in the Parquet key-value metadata under
``METADATA_KEY`` describing the run, the hardware, the model and the scenario outcome.

Runners write through :func:`write_scenario`; ingest validates with :func:`read_footer`
(schema and metadata, from the footer only) and the row rules in
``benchdb/sql/queries/check_samples.sql`` (bound to :data:`NON_NEGATIVE_UNITS`).
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

import pyarrow as pa
import pyarrow.parquet as pq

CONTRACT_VERSION = 1
#: Versions ingest can read. Older versions stay readable: add an upgrader, never drop one.
SUPPORTED_CONTRACT_VERSIONS = (1,)
METADATA_KEY = b"benchdb.contract"

STATUSES = ("ok", "failed", "oom", "timeout", "unsupported", "skipped", "mismatch")
VALIDITY = ("valid", "invalid")

#: Scenario key columns, repeated on every row so a file is useful on its own.
KEY_FIELDS: tuple[tuple[str, pa.DataType], ...] = (
    ("run_id", pa.string()),
    ("scenario_id", pa.string()),
    ("model_id", pa.string()),
    ("backend", pa.string()),
    ("device", pa.string()),
    ("mode", pa.string()),
    ("precision", pa.string()),
    ("batch_size", pa.int32()),
    ("input_shape", pa.string()),
)
SAMPLE_FIELDS: tuple[tuple[str, pa.DataType], ...] = (
    ("metric", pa.string()),
    ("unit", pa.string()),
    ("iteration", pa.int32()),
    ("t_offset_s", pa.float64()),
    ("value", pa.float64()),
)
SAMPLE_SCHEMA = pa.schema([pa.field(n, t, nullable=False) for n, t in KEY_FIELDS + SAMPLE_FIELDS])

#: Units whose values can never be negative (timings, sizes, counts, rates).
NON_NEGATIVE_UNITS = ("s", "bytes", "W", "J", "pct", "Hz", "MHz", "C", "items/s", "tokens/s", "flops", "count")

#: Required metadata fields per section, with the JSON types they must have.
_REQUIRED: dict[str, dict[str, tuple[type, ...]]] = {
    "run": {"run_id": (str,), "started_at": (str,), "host": (str,), "benchdb_version": (str,),
            "software": (dict,), "config": (dict,)},
    "hardware": {"kind": (str,), "device_name": (str,)},
    "model": {"model_id": (str,)},
    "scenario": {"scenario_id": (str,), "model_id": (str,), "backend": (str,), "device": (str,),
                 "mode": (str,), "precision": (str,), "batch_size": (int,), "input_shape": (str,),
                 "status": (str,), "validity": (str,), "validity_reasons": (list,),
                 "primary_metric": (str,), "timing_method": (str,)},
}
SCENARIO_KEY = ("model_id", "backend", "device", "mode", "precision", "batch_size", "input_shape")


class ContractError(ValueError):
    """A file breaks the contract. ``field`` names the column or metadata field at fault."""

    def __init__(self, field: str, reason: str):
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason


def new_run_id() -> str:
    """A time-ordered UUID (version 7 layout: 48-bit Unix milliseconds, then random bits)."""
    ms = time.time_ns() // 1_000_000
    rand = int.from_bytes(secrets.token_bytes(10), "big")
    value = (ms & ((1 << 48) - 1)) << 80 | (0x7 << 76) | ((rand >> 68) & 0xFFF) << 64
    value |= (0b10 << 62) | (rand & ((1 << 62) - 1))
    return str(uuid.UUID(int=value))


def scenario_id(run_id: str, key: Mapping[str, Any]) -> str:
    """Deterministic id of a scenario inside a run."""
    payload = json.dumps([run_id] + [key[k] for k in SCENARIO_KEY], separators=(",", ":"))
    return hashlib.sha256(payload.encode()).hexdigest()[:32]


#: Fingerprint fields that identify a piece of hardware. Drivers and software are not part of
#: it: a driver upgrade on the same machine is a change to compare, not a new machine.
_HARDWARE_IDENTITY = ("kind", "vendor", "device_name", "memory_gib", "compute_capability",
                      "cpu_model", "cores_logical", "arch")


def hardware_id(fingerprint: Mapping[str, Any]) -> str:
    """A stable id from a normalised hardware fingerprint (case, spacing and memory rounding)."""
    norm: dict[str, Any] = {}
    for k in _HARDWARE_IDENTITY:
        if k == "memory_gib":
            mem = fingerprint.get("memory_bytes")
            v: Any = round(mem / 2**30) if isinstance(mem, (int, float)) and mem else None
        else:
            v = fingerprint.get(k)
        if isinstance(v, str):
            v = " ".join(v.lower().split())
        norm[k] = v
    return hashlib.sha256(json.dumps(norm, sort_keys=True).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class FileFooter:
    """What the footer of a valid contract file says."""

    metadata: dict[str, Any]
    num_rows: int

    @property
    def scenario(self) -> dict[str, Any]:
        return self.metadata["scenario"]


def _check_section(meta: Mapping[str, Any], section: str) -> None:
    body = meta.get(section)
    if not isinstance(body, dict):
        raise ContractError(f"metadata.{section}", "missing or not an object")
    for name, types in _REQUIRED[section].items():
        if name not in body or body[name] is None:
            raise ContractError(f"metadata.{section}.{name}", "missing")
        value = body[name]
        if not isinstance(value, types) or (int in types and isinstance(value, bool)):
            raise ContractError(f"metadata.{section}.{name}",
                                f"expected {types[0].__name__}, found {type(value).__name__}")


def validate_metadata(meta: Any) -> dict[str, Any]:
    """Check the metadata document; return it (upgraded to the current version when older)."""
    if not isinstance(meta, dict):
        raise ContractError("metadata", "not a JSON object")
    version = meta.get("contract_version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise ContractError("metadata.contract_version", "missing or not an integer")
    if version not in SUPPORTED_CONTRACT_VERSIONS:
        raise ContractError("metadata.contract_version",
                            f"unknown contract version {version} (this benchdb reads "
                            f"{', '.join(map(str, SUPPORTED_CONTRACT_VERSIONS))}); upgrade benchdb")
    for section in _REQUIRED:
        _check_section(meta, section)
    sc = meta["scenario"]
    if sc["status"] not in STATUSES:
        raise ContractError("metadata.scenario.status",
                            f"{sc['status']!r} is not one of {', '.join(STATUSES)}")
    if sc["validity"] not in VALIDITY:
        raise ContractError("metadata.scenario.validity", f"{sc['validity']!r} is not valid/invalid")
    if sc["batch_size"] < 1:
        raise ContractError("metadata.scenario.batch_size", f"must be >= 1, found {sc['batch_size']}")
    if sc["model_id"] != meta["model"]["model_id"]:
        raise ContractError("metadata.scenario.model_id", "differs from metadata.model.model_id")
    expected = scenario_id(meta["run"]["run_id"], sc)
    if sc["scenario_id"] != expected:
        raise ContractError("metadata.scenario.scenario_id",
                            "does not match the run id and scenario key it claims")
    return meta


def _check_schema(schema: pa.Schema) -> None:
    expected = {f.name: f.type for f in SAMPLE_SCHEMA}
    for name in schema.names:
        if name not in expected:
            raise ContractError(name, "unexpected column (contract v1 has "
                                      f"{', '.join(SAMPLE_SCHEMA.names)})")
    for name, want in expected.items():
        if name not in schema.names:
            raise ContractError(name, "missing column")
        got = schema.field(name).type
        ok = (got == want
              or (pa.types.is_integer(want) and pa.types.is_integer(got))
              or (pa.types.is_floating(want) and pa.types.is_floating(got))
              or (pa.types.is_string(want) and (pa.types.is_large_string(got)
                                                or pa.types.is_dictionary(got)
                                                and pa.types.is_string(got.value_type))))
        if not ok:
            raise ContractError(name, f"expected {want}, found {got}")


def read_footer(path: str | os.PathLike) -> FileFooter:
    """Validate a file's schema and metadata from its footer alone (no row data is read)."""
    try:
        md = pq.read_metadata(path)
    except (pa.ArrowException, OSError) as exc:
        raise ContractError("file", f"not a readable Parquet file ({str(exc).splitlines()[0]})") from None
    _check_schema(md.schema.to_arrow_schema())
    kv = md.metadata or {}
    raw = kv.get(METADATA_KEY)
    if raw is None:
        raise ContractError("metadata", f"no {METADATA_KEY.decode()} key-value metadata")
    try:
        meta = json.loads(raw)
    except ValueError as exc:
        raise ContractError("metadata", f"not valid JSON ({exc})") from None
    return FileFooter(validate_metadata(meta), md.num_rows)


def build_metadata(*, run: Mapping[str, Any], hardware: Mapping[str, Any], model: Mapping[str, Any],
                   scenario: Mapping[str, Any]) -> dict[str, Any]:
    """Assemble and check the metadata document of one scenario file."""
    sc = dict(scenario)
    sc.setdefault("scenario_id", scenario_id(run["run_id"], sc))
    meta = {"contract_version": CONTRACT_VERSION, "run": dict(run), "hardware": dict(hardware),
            "model": dict(model), "scenario": sc}
    return validate_metadata(json.loads(json.dumps(meta, default=str)))


def samples_table(meta: Mapping[str, Any], rows: Iterable[tuple[str, str, int, float, float]]) -> pa.Table:
    """Build the sample rows of a scenario: (metric, unit, iteration, t_offset_s, value) tuples."""
    cols: dict[str, list] = {name: [] for name, _ in SAMPLE_FIELDS}
    for metric, unit, iteration, t_offset, value in rows:
        cols["metric"].append(metric)
        cols["unit"].append(unit)
        cols["iteration"].append(iteration)
        cols["t_offset_s"].append(t_offset)
        cols["value"].append(value)
    return columns_table(meta, cols)


def columns_table(meta: Mapping[str, Any], cols: Mapping[str, Any]) -> pa.Table:
    """Build the sample rows of a scenario from columns (lists or arrays) named as SAMPLE_FIELDS."""
    n = len(cols["value"])
    sc = meta["scenario"]
    arrays = [pa.array([meta["run"]["run_id"] if name == "run_id" else sc[name]] * n, type=typ)
              for name, typ in KEY_FIELDS]
    arrays += [pa.array(cols[name], type=typ) for name, typ in SAMPLE_FIELDS]
    return pa.Table.from_arrays(arrays, schema=SAMPLE_SCHEMA)


def write_scenario(path: str | os.PathLike, meta: Mapping[str, Any], table: pa.Table) -> Path:
    """Write one scenario file atomically: temp file in the same folder, fsync, rename.

    A crash leaves at most a hidden ``.*.tmp`` file, which ingest never reads.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    table = table.replace_schema_metadata({METADATA_KEY: json.dumps(meta, sort_keys=True).encode()})
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as fh:
            pq.write_table(table, fh, compression="zstd")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
    return path

"""The Parquet measurement contract (v2, :data:`CONTRACT_VERSION`; v1 files are still read and
upgraded): the only thing runners and ingest share.

A contract file holds the raw samples of one scenario in long format (one row per timed
iteration per metric) plus one JSON document in the Parquet key-value metadata under
``METADATA_KEY`` describing the run, the hardware, the model and the scenario outcome.

Runners write through :func:`write_scenario`; ingest validates with :func:`read_footer`
(schema and metadata, from the footer only; a batch at once with
:func:`benchdb.schema.footers.read_footers`) and the row rules in
``benchdb/sql/queries/check_samples.sql`` (bound to :data:`NON_NEGATIVE_UNITS`).
"""

from __future__ import annotations

import json
import os
import secrets
import time
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from benchdb.paths import SAFE_NAME_RULE, atomic_path, is_safe_name
from benchdb.schema import identity, optionsets
from benchdb.schema import metadata as typed

CONTRACT_VERSION = 2
#: Versions ingest can read. Older versions stay readable: add an upgrader, never drop one.
#: v2 (benchdb 0.2): metadata.scenario.options (the backend's typed option set) joins the key.
SUPPORTED_CONTRACT_VERSIONS = (1, 2)
METADATA_KEY = b"benchdb.contract"

STATUSES = ("ok", "failed", "oom", "timeout", "unsupported", "skipped", "mismatch")
VALIDITY = ("valid", "invalid")

#: Scenario key columns, repeated on every row so a file is useful on its own: the run, the scenario's id
#: and the key's fields (identity.SCENARIO_FIELDS), each a string but the batch size.
KEY_FIELDS: tuple[tuple[str, pa.DataType], ...] = tuple(
    (name, pa.int32() if name == "batch_size" else pa.string())
    for name in ("run_id", "scenario_id", *identity.SCENARIO_FIELDS)
)
SAMPLE_FIELDS: tuple[tuple[str, pa.DataType], ...] = (
    ("metric", pa.string()),
    ("unit", pa.string()),
    ("iteration", pa.int32()),
    ("t_offset_s", pa.float64()),
    ("value", pa.float64()),
    # The process (0..repeats-1) the sample was measured in: with --repeats K a scenario is
    # measured in K separate processes, and the warehouse keeps that level. Added in v2.
    ("repeat", pa.int32()),
)
#: Columns a contract v1 file may lack (read as 0).
_ADDED_IN_V2 = ("repeat",)
SAMPLE_SCHEMA = pa.schema([pa.field(n, t, nullable=False) for n, t in KEY_FIELDS + SAMPLE_FIELDS])

#: Units whose values can never be negative (timings, sizes, counts, rates).
NON_NEGATIVE_UNITS = ("s", "bytes", "W", "J", "pct", "Hz", "MHz", "C", "items/s", "tokens/s", "flops", "count")

SCENARIO_KEY = identity.SCENARIO_KEY
#: Key columns repeated on every row (the options are in the metadata; scenario_id covers them).
ROW_KEY = tuple(name for name, _ in KEY_FIELDS)


class ContractError(ValueError):
    """A file breaks the contract. ``field`` names the column or metadata field at fault."""

    def __init__(self, field: str, reason: str):
        from benchdb.errors import clip

        reason = clip(reason, 300 - len(field) - 2)  # a 10 MB value is named by its size, not echoed
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


@dataclass(frozen=True)
class FileFooter:
    """What the footer of a valid contract file says."""

    metadata: dict[str, Any]
    num_rows: int

    @property
    def scenario(self) -> dict[str, Any]:
        return self.metadata["scenario"]


def _contract_version(meta: Any) -> int:
    """The document's contract version, which this benchdb must read."""
    if not isinstance(meta, dict):
        raise ContractError("metadata", "not a JSON object")
    version = meta.get("contract_version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise ContractError("metadata.contract_version", "missing or not an integer")
    if version not in SUPPORTED_CONTRACT_VERSIONS:
        raise ContractError(
            "metadata.contract_version",
            f"unknown contract version {version} (this benchdb reads "
            f"{', '.join(map(str, SUPPORTED_CONTRACT_VERSIONS))}); upgrade benchdb",
        )
    return version


def _check_options(sc: dict[str, Any]) -> None:
    """A v2 scenario's options: an imported result's must name its source format; benchdb's own
    are checked (and normalised in place) against the backend's option set."""
    if sc.get("options") is None:
        raise ContractError("metadata.scenario.options", "missing (contract v2 keys a scenario by its options)")
    if sc.get("source") is not None:
        # An imported result keeps the options its tool recorded, with the source format among
        # them: measured by another harness, it is never the same series as a benchdb run.
        if not isinstance(sc["options"], dict) or sc["options"].get("source") != sc["source"]["format"]:
            raise ContractError(
                "metadata.scenario.options", "an imported result's options must name its source format (options.source)"
            )
        if sc["source"].get("summary_only") and not sc["source"].get("statistics"):
            raise ContractError(
                "metadata.scenario.source.statistics", "a summary-only result must carry the source's statistics"
            )
    else:
        try:
            sc["options"] = optionsets.check(sc["backend"], sc["options"])
        except ValueError as exc:
            raise ContractError("metadata.scenario.options", str(exc)) from None


def validate_metadata(meta: Any) -> dict[str, Any]:
    """Check the metadata document; return it (upgraded to the current version when older)."""
    version = _contract_version(meta)
    problem = typed.check(meta)
    if problem is not None:
        raise ContractError(*problem)
    if not is_safe_name(meta["run"]["run_id"]):  # it names files: a site's pages, a dataset's folders
        raise ContractError(
            "metadata.run.run_id",
            f"{meta['run']['run_id']!r} is not a safe identifier ({SAFE_NAME_RULE}); write the run id as a UUID",
        )
    sc = meta["scenario"]
    if sc["status"] not in STATUSES:
        raise ContractError("metadata.scenario.status", f"{sc['status']!r} is not one of {', '.join(STATUSES)}")
    if sc["validity"] not in VALIDITY:
        raise ContractError("metadata.scenario.validity", f"{sc['validity']!r} is not valid/invalid")
    if sc["model_id"] != meta["model"]["model_id"]:
        raise ContractError("metadata.scenario.model_id", "differs from metadata.model.model_id")
    if version == 1:
        if sc["scenario_id"] != identity.scenario_id_v1(meta["run"]["run_id"], sc):
            raise ContractError("metadata.scenario.scenario_id", "does not match the run id and scenario key it claims")
        sc.update(upgrade_v1_scenario(sc, meta["hardware"], meta["run"].get("config")))
        return meta
    _check_options(sc)
    if sc["device"] != identity.normalize_device(sc["device"]):
        raise ContractError(
            "metadata.scenario.device",
            f"{sc['device']!r} is not in canonical form; write {identity.normalize_device(sc['device'])!r}",
        )
    if sc["scenario_id"] != identity.scenario_id(meta["run"]["run_id"], sc):
        raise ContractError(
            "metadata.scenario.scenario_id", "does not match the run id and scenario key (with options) it claims"
        )
    return meta


def upgrade_v1_scenario(
    sc: Mapping[str, Any], hardware: Mapping[str, Any], run_config: Mapping[str, Any] | None
) -> dict[str, Any]:
    """What a scenario recorded before options joined the key (contract v1, warehouse schema 2)
    becomes: the options its settings allow, the device in canonical form (ONNX Runtime results
    take the device of their first execution provider), the precision the engine reported, the
    generated tokens in the input shape of a PyTorch generative result, and ``recorded_as``
    keeping the key values its rows carry. A non-CPU result filed under a CPU
    fingerprint (ONNX Runtime before 0.2) is marked invalid: its hardware is unknown.

    The one rule for both ingest of v1 files and the schema-3 migration of older warehouses.
    """
    extra = sc.get("extra") or {}
    opts = optionsets.from_v1(sc)
    device = sc["device"]
    device = optionsets.measured_device(sc.get("backend") or "", opts, device)
    device = identity.normalize_device(device)
    precision = sc["precision"]
    used = extra.get("precision_used")
    if sc.get("backend") == "openvino" and isinstance(used, str) and used and used != precision:
        precision = used
    shape = sc["input_shape"]
    if (
        sc.get("backend") == "pytorch"
        and (sc.get("settings") or {}).get("task") in optionsets.GENERATIVE_TASKS
        and "new_tokens=" not in shape
    ):
        shape = f"{shape},new_tokens={optionsets.v1_gen_tokens(run_config)}"
    out = {
        "options": opts,
        "device": device,
        "precision": precision,
        "input_shape": shape,
        "recorded_as": {"device": sc["device"], "precision": sc["precision"], "input_shape": sc["input_shape"]},
    }
    if device != "cpu" and hardware.get("kind") == "cpu":
        out["validity"] = "invalid"
        out["validity_reasons"] = list(sc.get("validity_reasons") or []) + [
            f"hardware_unknown: a {device} result recorded under the CPU's fingerprint (benchdb 0.1)"
        ]
    return out


def check_schema(schema: pa.Schema, version: Any) -> None:
    expected = {f.name: f.type for f in SAMPLE_SCHEMA}
    for name in schema.names:
        if name not in expected:
            raise ContractError(
                name, f"unexpected column (contract v{CONTRACT_VERSION} has {', '.join(SAMPLE_SCHEMA.names)})"
            )
    for name, want in expected.items():
        if name not in schema.names:
            if version == 1 and name in _ADDED_IN_V2:
                continue
            raise ContractError(name, "missing column")
        got = schema.field(name).type
        ok = (
            got == want
            or (pa.types.is_integer(want) and pa.types.is_integer(got))
            or (pa.types.is_floating(want) and pa.types.is_floating(got))
            or (
                pa.types.is_string(want)
                and (
                    pa.types.is_large_string(got) or pa.types.is_dictionary(got) and pa.types.is_string(got.value_type)
                )
            )
        )
        if not ok:
            raise ContractError(name, f"expected {want}, found {got}")


def read_footer(path: str | os.PathLike) -> FileFooter:
    """Validate a file's schema and metadata from its footer alone (no row data is read)."""
    try:
        md = pq.read_metadata(path)
    except (pa.ArrowException, OSError) as exc:
        raise ContractError("file", f"not a readable Parquet file ({str(exc).splitlines()[0]})") from None
    kv = md.metadata or {}
    raw = kv.get(METADATA_KEY)
    bad_json: ValueError | None
    try:
        meta = json.loads(raw) if raw is not None else None
    except ValueError as exc:
        meta, bad_json = None, exc
    else:
        bad_json = None
    check_schema(md.schema.to_arrow_schema(), meta.get("contract_version") if isinstance(meta, dict) else None)
    if raw is None:
        raise ContractError("metadata", f"no {METADATA_KEY.decode()} key-value metadata")
    if bad_json is not None:
        raise ContractError("metadata", f"not valid JSON ({bad_json})")
    return FileFooter(validate_metadata(meta), md.num_rows)


def build_metadata(
    *, run: Mapping[str, Any], hardware: Mapping[str, Any], model: Mapping[str, Any], scenario: Mapping[str, Any]
) -> dict[str, Any]:
    """Assemble and check the metadata document of one scenario file."""
    sc = dict(scenario)
    sc["options"] = identity.canonical_options(sc.get("options"))
    sc.setdefault("scenario_id", identity.scenario_id(run["run_id"], sc))
    meta = {
        "contract_version": CONTRACT_VERSION,
        "run": dict(run),
        "hardware": dict(hardware),
        "model": dict(model),
        "scenario": sc,
    }
    return validate_metadata(json.loads(json.dumps(meta, default=str)))


def samples_table(meta: Mapping[str, Any], rows: Iterable[tuple]) -> pa.Table:
    """Build the sample rows of a scenario: (metric, unit, iteration, t_offset_s, value[, repeat])
    tuples (repeat 0 when absent)."""
    cols: dict[str, list] = {name: [] for name, _ in SAMPLE_FIELDS}
    for row in rows:
        # zip stops at the five named fields: the optional sixth, repeat, is read below
        for name, value in zip(("metric", "unit", "iteration", "t_offset_s", "value"), row, strict=False):
            cols[name].append(value)
        cols["repeat"].append(row[5] if len(row) > 5 else 0)
    return columns_table(meta, cols)


def columns_table(meta: Mapping[str, Any], cols: Mapping[str, Any]) -> pa.Table:
    """Build the sample rows of a scenario from columns (lists or arrays) named as SAMPLE_FIELDS."""
    n = len(cols["value"])
    sc = meta["scenario"]
    arrays = [
        pa.array([meta["run"]["run_id"] if name == "run_id" else sc[name]] * n, type=typ) for name, typ in KEY_FIELDS
    ]
    arrays += [pa.array(cols[name] if name in cols else [0] * n, type=typ) for name, typ in SAMPLE_FIELDS]
    return pa.Table.from_arrays(arrays, schema=SAMPLE_SCHEMA)


def encode_metadata(meta: Mapping[str, Any]) -> bytes:
    """The footer bytes of a file's metadata: a file holding ``meta`` holds exactly these."""
    return json.dumps(meta, sort_keys=True).encode()


def write_scenario(path: str | os.PathLike, meta: Mapping[str, Any], table: pa.Table) -> Path:
    """Write one scenario file atomically: temp file in the same folder, fsync, rename.

    A crash leaves at most a hidden ``.*.tmp`` file, which ingest never reads.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    table = table.replace_schema_metadata({METADATA_KEY: encode_metadata(meta)})
    with atomic_path(path) as tmp, open(tmp, "wb") as fh:
        pq.write_table(table, fh, compression="zstd")
    return path

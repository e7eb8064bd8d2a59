"""What ingest knows of each file (:class:`Candidate`) and what it records of a batch's files,
built from their validated footers: the file rows (:data:`BATCH_SCHEMA`, the ``batch_files``
table the batch's SQL reads) and the new rows of the dimension tables (runs, hardware,
architectures)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from benchdb.schema import contract, identity, system


@dataclass
class Candidate:
    path: Path
    size: int
    mtime_ns: int
    sha256: str = ""
    footer: contract.FileFooter | None = None

    @property
    def valid_footer(self) -> contract.FileFooter:
        """The footer, once read and validated (every file that reaches a batch has one)."""
        assert self.footer is not None, f"{self.path}: footer not read yet"
        return self.footer


BATCH_SCHEMA = pa.schema(
    [
        ("filename", pa.string()),
        ("file_id", pa.int64()),
        ("size_bytes", pa.int64()),
        ("mtime_ns", pa.int64()),
        ("sha256", pa.string()),
        ("num_rows", pa.int64()),
        *contract.KEY_FIELDS,  # the scenario key, typed as the contract types its columns
        ("status", pa.string()),
        ("error", pa.string()),
        ("validity", pa.string()),
        ("validity_reasons", pa.list_(pa.string())),
        ("timing_method", pa.string()),
        ("driver", pa.string()),
        ("threads", pa.int32()),
        ("load_avg_1m", pa.float64()),
        ("stop_reason", pa.string()),
        ("started_at", pa.string()),
        ("primary_metric", pa.string()),
        ("settings", pa.string()),
        ("extra", pa.string()),
        ("hardware_id", pa.string()),
        ("arch_id", pa.string()),
        ("options", pa.string()),
        ("options_id", pa.string()),
        ("series_id", pa.string()),
        ("repeats", pa.int32()),
        # An imported result's provenance (JSON) and whether it has no samples (benchdb import).
        ("source", pa.string()),
        ("summary_only", pa.bool_()),
        # How the result used its system (benchdb.schema.system): from its options, else the whole system.
        ("accelerators", pa.int32()),
        ("parallelism", pa.string()),
    ]
)


#: One file's key as its metadata states it, in the contract's row types: every row of the file must
#: carry it (queries/samples.sql compares them row by row).
KEY_SCHEMA = pa.schema([("filename", pa.string()), *contract.KEY_FIELDS])

#: The key fields an upgraded v1 file's metadata may hold in another form than its rows (``recorded_as``).
_UPGRADED = ("device", "precision", "input_shape")


def key_row(c: Candidate) -> dict:
    """The values of the scenario key columns that every row of ``c`` must carry (a v1 file
    upgraded to a canonical device or to the precision actually run keeps its old values on its
    rows: ``recorded_as``)."""
    meta = c.valid_footer.metadata
    sc = meta["scenario"]
    recorded = _recorded_as(meta)
    return {
        "filename": str(c.path),
        "run_id": meta["run"]["run_id"],
        **{k: recorded.get(k, sc[k]) if k in _UPGRADED else sc[k] for k in contract.ROW_KEY if k != "run_id"},
    }


def _recorded_as(meta: dict) -> dict:
    """The key values a v1 file's rows still carry where its metadata was upgraded
    (contract.validate_metadata sets them); a v2 file's rows carry its key as it is."""
    recorded = meta["scenario"].get("recorded_as") if meta.get("contract_version") == 1 else None
    return recorded if isinstance(recorded, dict) else {}


def batch_row(c: Candidate, file_id: int, hardware_ids: dict[str, str]) -> dict:
    meta = c.valid_footer.metadata
    sc = meta["scenario"]
    options = identity.canonical_options(sc.get("options"))
    oid = identity.options_id(options)
    hardware_id = _hardware_id(meta["hardware"], hardware_ids)
    return {
        "filename": str(c.path),
        "file_id": file_id,
        "size_bytes": c.size,
        "mtime_ns": c.mtime_ns,
        "sha256": c.sha256,
        "num_rows": c.valid_footer.num_rows,
        **{
            k: sc[k]
            for k in ("scenario_id", *identity.SCENARIO_FIELDS, "status", "validity", "timing_method", "primary_metric")
        },
        "run_id": meta["run"]["run_id"],
        "error": sc.get("error"),
        "validity_reasons": [str(r) for r in sc.get("validity_reasons") or []],
        "driver": meta["hardware"].get("driver"),
        "threads": sc.get("threads"),
        "load_avg_1m": sc.get("load_avg_1m"),
        "stop_reason": sc.get("stop_reason"),
        "started_at": sc.get("started_at") or meta["run"]["started_at"],
        "settings": json.dumps(sc.get("settings") or {}),
        "extra": json.dumps(sc.get("extra") or {}),
        "hardware_id": hardware_id,
        "arch_id": identity.arch_id(meta["model"]),
        "options": json.dumps(options, sort_keys=True),
        "options_id": oid,
        "series_id": identity.series_id({**sc, "options_id": oid}, hardware_id),
        "repeats": sc.get("repeats") or 1,
        "source": json.dumps(sc["source"]) if sc.get("source") else None,
        "summary_only": bool((sc.get("source") or {}).get("summary_only")),
        "accelerators": options.get("accelerators")
        if isinstance(options.get("accelerators"), int)
        else system.accelerators_of(meta["hardware"]),
        "parallelism": json.dumps(options["parallelism"], sort_keys=True) if options.get("parallelism") else None,
    }


def _hardware_id(hw: dict, memo: dict[str, str]) -> str:
    """identity.hardware_id, once per distinct fingerprint in a batch (a run's files repeat it)."""
    key = json.dumps(hw, sort_keys=True, default=str)
    if key not in memo:
        memo[key] = identity.hardware_id(hw)
    return memo[key]


RUNS_SCHEMA = pa.schema(
    [
        ("run_id", pa.string()),
        ("started_at", pa.string()),
        ("host", pa.string()),
        ("benchdb_version", pa.string()),
        ("git_commit", pa.string()),
        ("software", pa.string()),
        ("config", pa.string()),
        ("tags", pa.list_(pa.string())),
    ]
)
HARDWARE_SCHEMA = pa.schema(
    [
        ("hardware_id", pa.string()),
        ("kind", pa.string()),
        ("vendor", pa.string()),
        ("device_name", pa.string()),
        ("memory_bytes", pa.int64()),
        ("compute_capability", pa.string()),
        ("cpu_model", pa.string()),
        ("cores_physical", pa.int32()),
        ("cores_logical", pa.int32()),
        ("arch", pa.string()),
        ("os", pa.string()),
        ("first_seen_run", pa.string()),
        ("fingerprint", pa.string()),
        ("accelerators_per_node", pa.int32()),
        ("nodes", pa.int32()),
        ("cpu_sockets", pa.int32()),
        ("host_memory_bytes", pa.int64()),
        ("interconnect", pa.string()),
        ("system_name", pa.string()),
        ("availability", pa.string()),
        ("cloud", pa.string()),
        ("instance", pa.string()),
    ]
)
ARCHITECTURES_SCHEMA = pa.schema(
    [
        ("arch_id", pa.string()),
        ("model_id", pa.string()),
        ("revision", pa.string()),
        ("model_type", pa.string()),
        ("architecture", pa.string()),
        ("family", pa.string()),
        ("task", pa.string()),
        ("num_parameters", pa.int64()),
        ("flops_per_item", pa.float64()),
        ("info", pa.string()),
    ]
)


def dimension_tables(batch: list[Candidate], hardware_ids: dict[str, str]) -> dict[str, pa.Table]:
    """The batch's new runs, hardware and architectures, one row each (the first file naming one wins)."""
    runs: dict[str, dict] = {}
    hardware: dict[str, dict] = {}
    archs: dict[str, dict] = {}
    for c in batch:
        meta = c.valid_footer.metadata
        run, hw, model = meta["run"], meta["hardware"], meta["model"]
        if run["run_id"] not in runs:
            runs[run["run_id"]] = _run_row(run)
        hid = _hardware_id(hw, hardware_ids)
        if hid not in hardware:
            hardware[hid] = _hardware_row(hid, hw, run["run_id"])
        aid = identity.arch_id(model)
        if aid not in archs:
            archs[aid] = _architecture_row(aid, model)
    return {
        "new_runs": pa.Table.from_pylist(list(runs.values()), schema=RUNS_SCHEMA),
        "new_hardware": pa.Table.from_pylist(list(hardware.values()), schema=HARDWARE_SCHEMA),
        "new_architectures": pa.Table.from_pylist(list(archs.values()), schema=ARCHITECTURES_SCHEMA),
    }


def _run_row(run: dict) -> dict:
    return {
        "run_id": run["run_id"],
        "started_at": run["started_at"],
        "host": run.get("host"),
        "benchdb_version": run.get("benchdb_version"),
        "git_commit": run.get("git_commit"),
        "software": json.dumps(run.get("software") or {}),
        "config": json.dumps(run.get("config") or {}),
        "tags": [str(t) for t in run.get("tags") or []],
    }


def _hardware_row(hid: str, hw: dict, run_id: str) -> dict:
    per_node, nodes = system.node_counts(hw)
    return {
        "hardware_id": hid,
        "kind": hw["kind"],
        "vendor": hw.get("vendor"),
        "device_name": hw["device_name"],
        "memory_bytes": hw.get("memory_bytes"),
        "compute_capability": hw.get("compute_capability"),
        "cpu_model": hw.get("cpu_model"),
        "cores_physical": hw.get("cores_physical"),
        "cores_logical": hw.get("cores_logical"),
        "arch": hw.get("arch"),
        "os": hw.get("os"),
        "first_seen_run": run_id,
        "fingerprint": json.dumps(hw, sort_keys=True),
        **{k: hw.get(k) for k in system.SYSTEM_KEYS},
        "accelerators_per_node": per_node,
        "nodes": nodes,
    }


def _architecture_row(aid: str, model: dict) -> dict:
    return {
        "arch_id": aid,
        "model_id": model["model_id"],
        "revision": model.get("revision"),
        "model_type": model.get("model_type"),
        "architecture": model.get("architecture"),
        "family": model.get("family"),
        "task": model.get("task"),
        "num_parameters": model.get("num_parameters"),
        "flops_per_item": model.get("flops_per_item"),
        "info": json.dumps(model, sort_keys=True),
    }

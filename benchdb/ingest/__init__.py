"""Load contract files into the warehouse: discover, dedupe, validate, load in transactions.

Guarantees:
- A file is loaded whole or not at all: each batch of files is one transaction.
- A file is never loaded twice: files are keyed by content hash (and unchanged files are
  recognised by path, size and mtime without hashing), scenarios by their id.
- Bad files are recorded as rejected with a reason naming the field; good files beside them load.
- User files are never moved, modified or deleted.
- Concurrent ingests into one database serialise on DuckDB's file lock (the second waits).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

import duckdb
import pyarrow as pa

from benchdb import sql
from benchdb.errors import BenchdbError
from benchdb.schema import contract, database

#: Rows per load transaction. Large enough for bulk speed, small enough to bound memory.
DEFAULT_BATCH_ROWS = 2_000_000
_HASH_CHUNK = 1 << 20


@dataclass
class IngestSummary:
    db: str
    found: int = 0
    new: int = 0
    skipped: int = 0
    duplicates: int = 0
    rejected: list[tuple[str, str]] = field(default_factory=list)
    samples: int = 0
    seconds: float = 0.0
    run_ids: set[str] = field(default_factory=set)     # runs that gained results in this call

    def line(self) -> str:
        return (f"ingested {self.new} new file(s), skipped {self.skipped + self.duplicates} already "
                f"loaded, rejected {len(self.rejected)}; {self.samples:,} samples in "
                f"{self.seconds:.2f} s into {self.db}")


@dataclass
class _Candidate:
    path: Path
    size: int
    mtime_ns: int
    sha256: str = ""
    footer: contract.FileFooter | None = None


def _mirror(url: str) -> Path:
    """Copy the contract files under an fsspec URL into a local mirror (unchanged files are not
    downloaded again) and return the mirror folder. Remote files are only read."""
    try:
        import fsspec
    except ImportError:
        raise BenchdbError(f"{url} needs fsspec: pip install fsspec (plus s3fs / gcsfs for those URLs)") from None
    try:
        fs, root = fsspec.core.url_to_fs(url)
        found = [p for p in fs.find(root) if p.endswith(".parquet") and not Path(p).name.startswith(".")]
    except (ImportError, ValueError, OSError) as exc:
        raise BenchdbError(f"cannot list {url}: {exc}") from None
    base = Path(os.environ.get("BENCHDB_CACHE") or Path.home() / ".cache" / "benchdb") / "remote"
    mirror = base / hashlib.sha256(url.encode()).hexdigest()[:16]
    for remote in found:
        local = mirror / os.path.relpath(remote, root)
        size = fs.size(remote)
        if local.exists() and local.stat().st_size == size:
            continue
        local.parent.mkdir(parents=True, exist_ok=True)
        tmp = local.with_name(f".{local.name}.{os.getpid()}.tmp")
        fs.get_file(remote, str(tmp))
        os.replace(tmp, local)
    return mirror


def discover(paths: Iterable[str | os.PathLike]) -> list[Path]:
    """Contract files under the given files/folders (or fsspec URLs), recursively, sorted. Hidden
    files (the writer's in-flight temp files start with '.') are never picked up."""
    found: set[Path] = set()
    for raw in paths:
        if "://" in str(raw):
            raw = _mirror(str(raw))
        p = Path(raw)
        if not p.exists():
            raise BenchdbError(f"path {raw} does not exist; give a results folder or .parquet file")
        if p.is_file():
            found.add(p.resolve())
            continue
        for root, dirs, files in os.walk(p):
            dirs[:] = [d for d in dirs if not d.startswith(".")]
            for name in files:
                if name.endswith(".parquet") and not name.startswith("."):
                    found.add((Path(root) / name).resolve())
    return sorted(found)


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while chunk := fh.read(_HASH_CHUNK):
            h.update(chunk)
    return h.hexdigest()


_BATCH_SCHEMA = pa.schema([
    ("filename", pa.string()), ("file_id", pa.int64()), ("size_bytes", pa.int64()),
    ("mtime_ns", pa.int64()), ("sha256", pa.string()), ("num_rows", pa.int64()),
    ("scenario_id", pa.string()), ("run_id", pa.string()), ("model_id", pa.string()),
    ("backend", pa.string()), ("device", pa.string()), ("mode", pa.string()),
    ("precision", pa.string()), ("batch_size", pa.int32()), ("input_shape", pa.string()),
    ("status", pa.string()), ("error", pa.string()), ("validity", pa.string()),
    ("validity_reasons", pa.list_(pa.string())), ("timing_method", pa.string()),
    ("driver", pa.string()), ("threads", pa.int32()), ("load_avg_1m", pa.float64()),
    ("stop_reason", pa.string()), ("started_at", pa.string()), ("primary_metric", pa.string()),
    ("settings", pa.string()), ("extra", pa.string()), ("hardware_id", pa.string()),
    ("arch_id", pa.string()),
])


def arch_id(model: dict) -> str:
    key = json.dumps([model.get("model_id"), model.get("revision")])
    return hashlib.sha256(key.encode()).hexdigest()[:16]


def _batch_row(c: _Candidate, file_id: int) -> dict:
    meta = c.footer.metadata
    sc = meta["scenario"]
    return {
        "filename": str(c.path), "file_id": file_id, "size_bytes": c.size, "mtime_ns": c.mtime_ns,
        "sha256": c.sha256, "num_rows": c.footer.num_rows,
        **{k: sc[k] for k in ("scenario_id", "model_id", "backend", "device", "mode", "precision",
                              "batch_size", "input_shape", "status", "validity", "timing_method",
                              "primary_metric")},
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
        "hardware_id": contract.hardware_id(meta["hardware"]),
        "arch_id": arch_id(meta["model"]),
    }


def _dimension_tables(batch: list[_Candidate]) -> dict[str, pa.Table]:
    runs, hardware, archs = {}, {}, {}
    for c in batch:
        meta = c.footer.metadata
        run, hw, model = meta["run"], meta["hardware"], meta["model"]
        runs.setdefault(run["run_id"], {
            "run_id": run["run_id"], "started_at": run["started_at"], "host": run.get("host"),
            "benchdb_version": run.get("benchdb_version"), "git_commit": run.get("git_commit"),
            "software": json.dumps(run.get("software") or {}), "config": json.dumps(run.get("config") or {}),
            "tags": [str(t) for t in run.get("tags") or []]})
        hid = contract.hardware_id(hw)
        hardware.setdefault(hid, {
            "hardware_id": hid, "kind": hw["kind"], "vendor": hw.get("vendor"),
            "device_name": hw["device_name"], "memory_bytes": hw.get("memory_bytes"),
            "compute_capability": hw.get("compute_capability"), "cpu_model": hw.get("cpu_model"),
            "cores_physical": hw.get("cores_physical"), "cores_logical": hw.get("cores_logical"),
            "arch": hw.get("arch"), "os": hw.get("os"), "first_seen_run": run["run_id"],
            "fingerprint": json.dumps(hw, sort_keys=True)})
        aid = arch_id(model)
        archs.setdefault(aid, {
            "arch_id": aid, "model_id": model["model_id"], "revision": model.get("revision"),
            "model_type": model.get("model_type"), "architecture": model.get("architecture"),
            "family": model.get("family"), "task": model.get("task"),
            "num_parameters": model.get("num_parameters"), "flops_per_item": model.get("flops_per_item"),
            "info": json.dumps(model, sort_keys=True)})
    return {
        "new_runs": pa.Table.from_pylist(list(runs.values()), schema=pa.schema([
            ("run_id", pa.string()), ("started_at", pa.string()), ("host", pa.string()),
            ("benchdb_version", pa.string()), ("git_commit", pa.string()), ("software", pa.string()),
            ("config", pa.string()), ("tags", pa.list_(pa.string()))])),
        "new_hardware": pa.Table.from_pylist(list(hardware.values()), schema=pa.schema([
            ("hardware_id", pa.string()), ("kind", pa.string()), ("vendor", pa.string()),
            ("device_name", pa.string()), ("memory_bytes", pa.int64()),
            ("compute_capability", pa.string()), ("cpu_model", pa.string()),
            ("cores_physical", pa.int32()), ("cores_logical", pa.int32()), ("arch", pa.string()),
            ("os", pa.string()), ("first_seen_run", pa.string()), ("fingerprint", pa.string())])),
        "new_architectures": pa.Table.from_pylist(list(archs.values()), schema=pa.schema([
            ("arch_id", pa.string()), ("model_id", pa.string()), ("revision", pa.string()),
            ("model_type", pa.string()), ("architecture", pa.string()), ("family", pa.string()),
            ("task", pa.string()), ("num_parameters", pa.int64()), ("flops_per_item", pa.float64()),
            ("info", pa.string())])),
    }


class _Loader:
    def __init__(self, con: duckdb.DuckDBPyConnection, summary: IngestSummary):
        self.con = con
        self.summary = summary

    def record(self, c: _Candidate, status: str, error: str | None) -> None:
        self.con.execute(sql.load("queries/forget_file.sql"), [str(c.path)])
        self.con.execute(sql.load("queries/record_file.sql"),
                         [str(c.path), c.size, c.mtime_ns, c.sha256, status, error])

    def reject(self, c: _Candidate, reason: str) -> None:
        self.summary.rejected.append((str(c.path), reason))
        self.record(c, "rejected", reason)

    def load(self, batch: list[_Candidate]) -> None:
        """Load a batch in one transaction; if the batch as a whole fails (e.g. a file
        DuckDB cannot read), fall back to loading its files one at a time."""
        try:
            self._load(batch)
        except duckdb.Error as exc:
            if len(batch) == 1:
                self.con.execute("BEGIN TRANSACTION")
                self.reject(batch[0], f"file: cannot be loaded ({str(exc).splitlines()[0]})")
                self.con.execute("COMMIT")
                return
            for c in batch:
                self.load([c])

    def _load(self, batch: list[_Candidate]) -> None:
        con = self.con
        con.execute("BEGIN TRANSACTION")
        try:
            first_id = con.execute(sql.load("queries/next_file_id.sql")).fetchall()[0][0]
            rows = [_batch_row(c, first_id + i) for i, c in enumerate(batch)]
            con.register("batch_files_in", pa.Table.from_pylist(rows, schema=_BATCH_SCHEMA))
            con.execute("CREATE OR REPLACE TEMP TABLE batch_files AS SELECT * FROM batch_files_in")
            con.unregister("batch_files_in")
            files = [str(c.path) for c in batch]
            bad = dict(con.execute(sql.load("queries/check_samples.sql"),
                                   {"files": files, "units": list(contract.NON_NEGATIVE_UNITS)}).fetchall())
            no_stats = [f for (f,) in con.execute(sql.load("queries/files_without_key_stats.sql"),
                                                  {"files": files}).fetchall() if f not in bad]
            if no_stats:
                bad.update(con.execute(sql.load("queries/check_keys_rows.sql"), {"files": no_stats}).fetchall())
            if bad:
                con.execute("DELETE FROM batch_files WHERE list_contains($1, filename)", [list(bad)])
                for c in batch:
                    if str(c.path) in bad:
                        self.reject(c, bad[str(c.path)])
            good = [c for c in batch if str(c.path) not in bad]
            if good:
                good_files = [str(c.path) for c in good]
                con.execute(sql.load("queries/insert_samples.sql"), {"files": good_files})
                con.execute("CREATE OR REPLACE TEMP TABLE stage_stats AS " + sql.load("queries/stage_samples.sql")
                            + sql.load("queries/metric_stats.sql"), {"files": good_files})
                con.execute(sql.load("queries/insert_result_metrics.sql"))
                con.execute(sql.load("queries/insert_results.sql"))
                for name, table in _dimension_tables(good).items():
                    con.register(name, table)
                    con.execute(sql.load(f"queries/insert_{name.removeprefix('new_')}.sql"))
                    con.unregister(name)
                con.execute(sql.load("queries/insert_ingested_files.sql"))
            con.execute("DROP TABLE IF EXISTS stage_stats")
            con.execute("DROP TABLE IF EXISTS batch_files")
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            self.summary.rejected = [r for r in self.summary.rejected
                                     if r[0] not in {str(c.path) for c in batch}]
            raise
        self.summary.new += len(good)
        self.summary.samples += sum(c.footer.num_rows for c in good)
        self.summary.run_ids.update(c.footer.metadata["run"]["run_id"] for c in good)


def ingest(paths: Iterable[str | os.PathLike], db: str | os.PathLike | None = None, *,
           batch_rows: int = DEFAULT_BATCH_ROWS, wait_s: float = 60.0,
           progress: Callable[[int, int], None] | None = None) -> IngestSummary:
    """Ingest every contract file under ``paths`` into the warehouse ``db``.

    ``progress(done, total)`` is called after each committed batch.
    """
    start = time.perf_counter()
    files = discover(paths)
    if not files:
        raise BenchdbError("no .parquet files found under " + ", ".join(map(str, paths))
                           + "; point ingest at the folder a runner wrote with --out")
    con, path = database.open_writable(db, wait_s=wait_s)
    summary = IngestSummary(db=str(path), found=len(files))
    # Each batch reads its files' footers several times (statistics, checks, load): parse once.
    con.execute("SET parquet_metadata_cache = true")
    try:
        loader = _Loader(con, summary)
        known = {(p, s, m) for p, s, m in con.execute(sql.load("queries/known_files.sql")).fetchall()}
        todo: list[_Candidate] = []
        for f in files:
            st = f.stat()
            if (str(f), st.st_size, st.st_mtime_ns) in known:
                summary.skipped += 1
            else:
                todo.append(_Candidate(f, st.st_size, st.st_mtime_ns))
        for c in todo:
            c.sha256 = _sha256(c.path)
        loaded = dict(con.execute(sql.load("queries/loaded_hashes.sql"),
                                  [[c.sha256 for c in todo]]).fetchall()) if todo else {}
        fresh: list[_Candidate] = []
        seen_hash: set[str] = set()
        con.execute("BEGIN TRANSACTION")
        for c in todo:
            if c.sha256 in loaded or c.sha256 in seen_hash:
                summary.duplicates += 1
                loader.record(c, "duplicate", None)
                continue
            seen_hash.add(c.sha256)
            try:
                c.footer = contract.read_footer(c.path)
            except contract.ContractError as exc:
                loader.reject(c, str(exc))
                continue
            fresh.append(c)
        # A scenario id seen before (in the database or earlier in this call) is a different file
        # claiming an already-loaded scenario: refuse it rather than double-count.
        ids = [c.footer.scenario["scenario_id"] for c in fresh]
        owner = dict(con.execute(sql.load("queries/loaded_scenarios.sql"), [ids]).fetchall()) if ids else {}
        accepted = []
        for c in fresh:
            sid = c.footer.scenario["scenario_id"]
            if sid in owner:
                loader.reject(c, f"metadata.scenario.scenario_id: scenario {sid} is already loaded "
                                 f"from {owner[sid]}; a scenario is ingested once")
                continue
            owner[sid] = str(c.path)
            accepted.append(c)
        con.execute("COMMIT")
        total, done = len(accepted), 0
        batch: list[_Candidate] = []
        rows = 0
        for c in accepted:
            batch.append(c)
            rows += c.footer.num_rows
            if rows >= batch_rows:
                loader.load(batch)
                done += len(batch)
                batch, rows = [], 0
                if progress:
                    progress(done, total)
        if batch:
            loader.load(batch)
            done += len(batch)
            if progress:
                progress(done, total)
        con.execute("CHECKPOINT")
    finally:
        con.close()
    summary.seconds = time.perf_counter() - start
    return summary

"""Load contract files into the warehouse: discover, dedupe, validate, load in transactions.

Guarantees:
- A file is loaded whole or not at all: each batch of files is one transaction.
- A file is never loaded twice: files are keyed by content hash (and unchanged files are
  recognised by path, size and mtime without hashing), scenarios by their id.
- Bad files are recorded as rejected with a reason naming the field; good files beside them load.
- User files are never moved, modified or deleted.
- Concurrent ingests into one database serialise on DuckDB's file lock (the second waits).

The parts: :mod:`.discover` (finding and hashing files), :mod:`.mirror` (fsspec URLs),
:mod:`.load` (one batch in one transaction).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Callable, Iterable

from benchdb import sql
from benchdb.errors import BenchdbError
from benchdb.ingest.discover import discover, sha256
from benchdb.ingest.load import Candidate, Loader
from benchdb.schema import contract, database

#: Rows per load transaction. Large enough for bulk speed, small enough to bound memory.
DEFAULT_BATCH_ROWS = 2_000_000

__all__ = ["DEFAULT_BATCH_ROWS", "IngestSummary", "discover", "ingest"]


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
    change_points: int = 0                             # open change points found after loading

    def line(self) -> str:
        return (f"ingested {self.new} new file(s), skipped {self.skipped + self.duplicates} already "
                f"loaded, rejected {len(self.rejected)}; {self.samples:,} samples in "
                f"{self.seconds:.2f} s into {self.db}")


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
        loader = Loader(con, summary)
        known = {(p, s, m) for p, s, m in con.execute(sql.load("queries/known_files.sql")).fetchall()}
        todo: list[Candidate] = []
        for f in files:
            st = f.stat()
            if (str(f), st.st_size, st.st_mtime_ns) in known:
                summary.skipped += 1
            else:
                todo.append(Candidate(f, st.st_size, st.st_mtime_ns))
        for c in todo:
            c.sha256 = sha256(c.path)
        loaded = dict(con.execute(sql.load("queries/loaded_hashes.sql"),
                                  [[c.sha256 for c in todo]]).fetchall()) if todo else {}
        fresh: list[Candidate] = []
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
        batch: list[Candidate] = []
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

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
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor

import duckdb

from benchdb import sql
from benchdb.errors import BenchdbError
from benchdb.ingest.discover import discover, sha256
from benchdb.ingest.load import Loader
from benchdb.ingest.rows import Candidate
from benchdb.ingest.summary import IngestSummary
from benchdb.schema import contract
from benchdb.schema.footers import judge_footers, query_footers
from benchdb.store import database, snapshot

#: Rows per load transaction. Large enough for bulk speed, small enough to bound memory.
DEFAULT_BATCH_ROWS = 2_000_000

__all__ = ["DEFAULT_BATCH_ROWS", "IngestSummary", "discover", "ingest"]


def ingest(
    paths: Iterable[str | os.PathLike],
    db: str | os.PathLike | None = None,
    *,
    batch_rows: int = DEFAULT_BATCH_ROWS,
    wait_s: float = 60.0,
    progress: Callable[[int, int], None] | None = None,
    after: Callable[[duckdb.DuckDBPyConnection, IngestSummary], None] | None = None,
) -> IngestSummary:
    """Ingest every contract file under ``paths`` into the warehouse ``db``.

    The load runs in a write session (:mod:`benchdb.store.snapshot`): open readers never block
    it, and it is published whole or not at all. Samples are written as Parquet parts of the
    warehouse's samples folder (:mod:`benchdb.store.parts`), one per batch. ``after(con,
    summary)`` runs inside the same session once the files are loaded (change-point detection).
    ``progress(done, total)`` is called after each committed batch. A call that finds nothing new writes nothing.
    """
    start = time.perf_counter()
    files = discover(paths)
    if not files:
        raise BenchdbError(
            "no .parquet files found under "
            + ", ".join(map(str, paths))
            + "; point ingest at the folder a runner wrote with --out"
        )
    path = database.resolve_db(db)
    summary = IngestSummary(db=str(path), found=len(files))
    todo, seen = _partition(files, _known_files(path, wait_s)) if path.exists() else (files, [])
    if not todo:  # nothing new: no write session at all
        _count_seen(seen, summary)
    else:
        with snapshot.write_session(path, wait_s=wait_s) as session:
            con = session.con
            # Each batch reads its files' footers several times (checks, load): parse once.
            con.execute("SET parquet_metadata_cache = true")
            # The batch's files are read in parallel, in no particular order (about 1/3 faster):
            # its parts are written in order of result all the same (parts_store.Store.write_files).
            con.execute("SET preserve_insertion_order = false")
            _load_files(con, session.parts, files, summary, batch_rows, progress)
            if after is not None:
                after(con, summary)
    summary.seconds = time.perf_counter() - start
    return summary


def _known_files(path, wait_s: float) -> dict[tuple[str, int, int], tuple[str, str | None]]:
    con, _ = database.open_readonly(path, wait_s=wait_s, verify=False)
    try:
        return _known(con)
    finally:
        con.close()


def _known(con) -> dict[tuple[str, int, int], tuple[str, str | None]]:
    """(path, size, mtime) of every file seen before -> (status, error)."""
    return {
        (p, s, m): (status, error)
        for p, s, m, status, error in con.execute(sql.load("queries/known_files.sql")).fetchall()
    }


def _partition(files, known: dict) -> tuple[list[Candidate], list[tuple[str, str, str | None]]]:
    """(files to judge, files seen before as (path, status, error)), each file stat'ed once: a file
    is seen before while its path, size and modification time are the ones recorded."""
    todo, seen = [], []
    for f in files:
        st = f.stat()
        before = known.get((str(f), st.st_size, st.st_mtime_ns))
        if before is None:
            todo.append(Candidate(f, st.st_size, st.st_mtime_ns))
        else:
            seen.append((str(f), *before))
    return todo, seen


def _count_seen(seen: list[tuple[str, str, str | None]], summary: IngestSummary) -> None:
    """Loaded files count as skipped; rejected ones are listed with the reason they got then."""
    for path, status, error in seen:
        if status == "rejected":
            summary.rejected_before.append((path, error or ""))
        else:
            summary.skipped += 1


def _load_files(con, store, files, summary: IngestSummary, batch_rows: int, progress) -> None:
    todo, seen = _partition(files, _known(con))
    _count_seen(seen, summary)
    # DuckDB's read of the footers runs in a thread of its own while this one hashes the files:
    # both sides spend most of their time outside the GIL (DuckDB, hashlib), so a second core
    # works instead of waiting. Outside a transaction: a file DuckDB cannot read fails its query,
    # which would abort one.
    with ThreadPoolExecutor(1, thread_name_prefix="benchdb-ingest") as duck:
        loader = Loader(con, summary, store, background=duck)
        try:
            reading = loader.in_background(query_footers, con, [c.path for c in todo])
            for c in todo:
                c.sha256 = sha256(c.path)
            rows = loader.join(reading)
            loaded = (
                dict(con.execute(sql.load("queries/loaded_hashes.sql"), [[c.sha256 for c in todo]]).fetchall())
                if todo
                else {}
            )
            # A claim (on a content hash, or on a scenario id) only counts once its file has loaded: a
            # rejected file releases it, so a good copy beside a corrupt one still loads.
            by_hash: dict[str, list[Candidate]] = {}
            for c in todo:
                if c.sha256 not in loaded:
                    by_hash.setdefault(c.sha256, []).append(c)
            judged = [str(group[0].path) for group in by_hash.values()]
            footers = judge_footers(rows, judged)
            con.execute("BEGIN TRANSACTION")
            for c in todo:
                if c.sha256 in loaded:
                    summary.duplicates += 1
                    loader.record(c, "duplicate", None)
            by_scenario, owner = _claim_scenarios(con, loader, by_hash, footers)
            con.execute("COMMIT")
            _load_claims(loader, by_scenario, owner, batch_rows, progress)
            con.execute("BEGIN TRANSACTION")
            _settle_losers(loader, summary, by_scenario, by_hash, owner)
            con.execute("COMMIT")
        except BaseException:
            loader.stop(loader.pending)  # what runs in the background ends before the connection closes
            raise


def _claim_scenarios(
    con, loader: Loader, by_hash: dict[str, list[Candidate]], footers: dict
) -> tuple[dict[str, list[Candidate]], dict[str, str]]:
    """Group the files of readable footers by scenario id (content-hash groups whose footer is bad
    are rejected whole), and reject those of scenarios the warehouse already has. Returns the
    claims by scenario and the owners (paths) of scenarios already loaded."""
    by_scenario: dict[str, list[Candidate]] = {}
    for group in by_hash.values():
        c = group[0]
        footer = footers[str(c.path)]
        if isinstance(footer, contract.ContractError):
            for same in group:
                loader.reject(same, str(footer) if same is c else f"{footer} (same content as {c.path})")
            continue
        c.footer = footer
        by_scenario.setdefault(c.footer.scenario["scenario_id"], []).append(c)
    owner = (
        dict(con.execute(sql.load("queries/loaded_scenarios.sql"), [list(by_scenario)]).fetchall())
        if by_scenario
        else {}
    )
    for sid in [sid for sid in by_scenario if sid in owner]:
        for c in by_scenario.pop(sid):
            loader.reject(c, _claimed(sid, owner[sid]))
    return by_scenario, owner


def _load_claims(
    loader: Loader, by_scenario: dict[str, list[Candidate]], owner: dict[str, str], batch_rows: int, progress
) -> None:
    """Load the first claim of every scenario; where it is rejected the next claim gets its turn.
    A scenario's claims shrink to start at the file that loaded; ``owner`` records that file."""
    total, done = len(by_scenario), 0
    pending = [group[0] for group in by_scenario.values()]
    while pending:
        for batch in _batches(pending, batch_rows):
            loader.load(batch)
            done += len(batch)
            if progress:
                progress(done, total)
        promoted = []
        for c in pending:
            sid = c.valid_footer.scenario["scenario_id"]
            if loader.was_rejected(c):
                by_scenario[sid].pop(0)
                if by_scenario[sid]:  # the next file claiming this scenario gets its turn
                    promoted.append(by_scenario[sid][0])
            else:
                owner[sid] = str(c.path)
        pending = promoted


def _settle_losers(
    loader: Loader,
    summary: IngestSummary,
    by_scenario: dict[str, list[Candidate]],
    by_hash: dict[str, list[Candidate]],
    owner: dict[str, str],
) -> None:
    """Reject the claims that lost their scenario to a loaded file, and settle the copies of each file."""
    for sid, group in by_scenario.items():
        for c in group:
            if str(c.path) != owner.get(sid) and not loader.was_rejected(c):
                loader.reject(c, _claimed(sid, owner[sid]))
    for group in by_hash.values():  # byte-identical copies of a file follow its fate
        first = group[0]
        for same in group[1:]:
            if loader.was_rejected(first):
                if not loader.was_rejected(same):
                    loader.reject(same, f"{loader.reason(first)} (same content as {first.path})")
            else:
                summary.duplicates += 1
                loader.record(same, "duplicate", None)


def _claimed(sid: str, path: str) -> str:
    return f"metadata.scenario.scenario_id: scenario {sid} is already loaded from {path}; a scenario is ingested once"


def _batches(files: list[Candidate], batch_rows: int):
    batch, rows = [], 0
    for c in files:
        batch.append(c)
        rows += c.valid_footer.num_rows
        if rows >= batch_rows:
            yield batch
            batch, rows = [], 0
    if batch:
        yield batch

"""Load a batch of validated contract files in one transaction: checks in SQL, then inserts.

A file is loaded whole or not at all. The batch's rows are written as parts of the samples folder
first, each row under its file's result id (never the id the row carries), marked where its own
key columns differ from its file's; row rules and key columns are then checked over the whole
batch (``check_samples.sql``, from the one pass ``batch_groups.sql`` makes over the rows it reads
back, which also gives the statistics). A file that breaks them is recorded as rejected, and the
rest are written again without it: nothing of a rejected file stays in the samples folder. No
check trusts a file's Parquet statistics: they are the writer's word, not the rows'.
"""

from __future__ import annotations

from concurrent.futures import Executor, Future, wait
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb
import pyarrow as pa

from benchdb import sql
from benchdb.errors import clip, first_line
from benchdb.ingest import rows
from benchdb.ingest.rows import Candidate
from benchdb.schema import contract
from benchdb.store.transaction import rollback

if TYPE_CHECKING:
    from benchdb.ingest.summary import IngestSummary
    from benchdb.store import parts_store


class Loader:
    def __init__(
        self,
        con: duckdb.DuckDBPyConnection,
        summary: IngestSummary,
        store: parts_store.Store,
        *,
        background: Executor | None = None,
    ):
        self.con = con
        self.summary = summary
        self.store = store
        self.rejected: dict[str, str] = {}  # path -> reason, this call
        #: One thread for DuckDB's calls on ``con`` (the footers' read, a batch's write) while this
        #: one does Python's work; never two calls at once (:meth:`join`, :meth:`stop`).
        self.background = background
        #: The call last started in the background (:meth:`stop` ends it on an interrupt).
        self.pending: Future | None = None

    def record(self, c: Candidate, status: str, error: str | None) -> None:
        self.con.execute(sql.load("queries/forget_file.sql"), [str(c.path)])
        self.con.execute(
            sql.load("queries/record_file.sql"), [str(c.path), c.size, c.mtime_ns, c.sha256, status, error]
        )

    def reject(self, c: Candidate, reason: str) -> None:
        reason = clip(reason)
        self.summary.rejected.append((str(c.path), reason))
        self.rejected[str(c.path)] = reason
        self.record(c, "rejected", reason)

    def was_rejected(self, c: Candidate) -> bool:
        return str(c.path) in self.rejected

    def reason(self, c: Candidate) -> str:
        return self.rejected[str(c.path)]

    def load(self, batch: list[Candidate]) -> None:
        """Load a batch in one transaction; if the batch as a whole fails (a file DuckDB cannot
        read, a value Arrow cannot convert), fall back to loading its files one at a time."""
        try:
            self._load(batch)
        except (duckdb.Error, pa.ArrowException, OverflowError) as exc:
            if isinstance(exc, duckdb.InterruptException):  # Ctrl-C, not the file's fault
                raise
            # a value one column cannot hold fails the batch as a whole: alone, it fails its own file
            if len(batch) == 1:
                self.con.execute("BEGIN TRANSACTION")
                self.reject(batch[0], f"file: cannot be loaded ({type(exc).__name__}: {first_line(exc)})")
                self.con.execute("COMMIT")
                return
            for c in batch:
                self.load([c])

    def in_background(self, fn, *args) -> Future:
        """``fn(*args)`` in the background thread (or now, without one); whatever it uses of this
        loader's connection is the caller's again once :meth:`join` has its result."""
        if self.background is not None:
            self.pending = self.background.submit(fn, *args)
            return self.pending
        done: Future = Future()
        done.set_result(fn(*args))
        return done

    def join(self, future: Future):
        """The result of a call :meth:`in_background` runs on this loader's connection. An
        interrupt (Ctrl-C) while waiting stops that call too, and goes on once it has ended."""
        try:
            return future.result()
        except KeyboardInterrupt:
            self.stop(future)
            raise

    def stop(self, future: Future | None) -> None:
        """Interrupt the background call and wait until it has ended, whatever it raises (the
        caller is handling an interrupt already, which must not turn into the call's error): the
        connection is never used by two threads at once, even after a second Ctrl-C."""
        while future is not None and not future.done():
            self.con.interrupt()
            try:
                wait([future])
            except KeyboardInterrupt:
                continue

    def _write(self, batch: list[Candidate]) -> list[Path]:
        """The rows of ``batch``'s files as new parts (none written if one write fails)."""
        # files in order of result id: each part the threads write then holds its results in
        # that order with no sort (parts_store.Store.write_files)
        by_version: dict[int, list[Candidate]] = {1: [], 2: []}
        for c in sorted(batch, key=lambda c: c.valid_footer.scenario["scenario_id"]):
            by_version[1 if c.valid_footer.metadata["contract_version"] == 1 else 2].append(c)
        written: list[Path] = []
        try:
            for version, files_of in by_version.items():
                if files_of:
                    written += self.store.write_files(
                        self.con,
                        sql.load(f"queries/samples_v{version}.sql") + sql.load("queries/samples.sql"),
                        {"files": sql.literals(c.path for c in files_of)},
                        rows=sum(c.valid_footer.num_rows for c in files_of),
                    )
        except BaseException:
            self.store.forget(written)
            raise
        return written

    def _load(self, batch: list[Candidate]) -> None:
        con = self.con
        written: list[Path] = []  # this batch's parts: removed again if it rolls back
        con.execute("BEGIN TRANSACTION")
        try:
            ids = [r[0] for r in con.execute(sql.load("queries/next_file_id.sql"), {"n": len(batch)}).fetchall()]
            # each file's key as its metadata states it, which its rows must carry (samples.sql)
            con.register("batch_keys", pa.Table.from_pylist([rows.key_row(c) for c in batch], schema=rows.KEY_SCHEMA))
            # The rows are written as parts first (in DuckDB's threads while this one builds the
            # batch's file rows), and the one pass of row checks and statistics reads them back:
            # a few large parts scan much faster than the batch's many small files. A batch in
            # which a file breaks a rule is written again without it.
            writing = self.in_background(self._write, batch)
            hardware_ids: dict[str, str] = {}
            try:
                file_rows = [rows.batch_row(c, file_id, hardware_ids) for c, file_id in zip(batch, ids, strict=True)]
            except BaseException:
                self.stop(writing)  # the batch fails (or is interrupted): its write need not finish
                if writing.exception() is None:
                    written = writing.result()  # removed again below (a failed write removed its own)
                raise
            written = self.join(writing)
            con.register("batch_files_in", pa.Table.from_pylist(file_rows, schema=rows.BATCH_SCHEMA))
            con.execute("CREATE OR REPLACE TEMP TABLE batch_files AS SELECT * FROM batch_files_in")
            con.unregister("batch_files_in")
            units = list(contract.NON_NEGATIVE_UNITS)
            if written:
                rows_of, params = "batch_rows_parts.sql", {"parts": sql.literals(written), "units": units}
            else:  # no file of the batch has a row
                rows_of, params = "batch_rows_none.sql", {"units": units}
            con.execute(sql.load(f"queries/{rows_of}") + sql.load("queries/batch_groups.sql"), params)
            bad = dict(con.execute(sql.load("queries/check_samples.sql")).fetchall())
            if bad:
                con.execute("DELETE FROM batch_files WHERE list_contains($1, filename)", [list(bad)])
                for c in batch:
                    if str(c.path) in bad:
                        self.reject(c, bad[str(c.path)])
            good = [c for c in batch if str(c.path) not in bad]
            if bad and written:
                checked = written
                written = self.store.write_files(
                    con,
                    sql.load("queries/samples_kept.sql"),
                    {"parts": sql.literals(checked), "ids": [c.valid_footer.scenario["scenario_id"] for c in good]},
                    rows=sum(c.valid_footer.num_rows for c in good),
                )
                self.store.forget(checked, con)
            if good:
                con.execute(
                    "CREATE OR REPLACE TEMP TABLE stage_stats AS "
                    + sql.load("queries/batch_stat_groups.sql")
                    + sql.load("queries/metric_stats.sql")
                )
                con.execute(sql.load("queries/insert_result_metrics.sql"))
                con.execute(sql.load("queries/insert_results.sql"))
                con.execute(sql.load("interop/insert_sources.sql"))
                con.execute(sql.load("interop/insert_source_statistics.sql"))
                con.execute(sql.load("interop/insert_source_definitions.sql"))
                for name, table in rows.dimension_tables(good, hardware_ids).items():
                    con.register(name, table)
                    con.execute(sql.load(f"queries/insert_{name.removeprefix('new_')}.sql"))
                    con.unregister(name)
                con.execute(sql.load("queries/insert_ingested_files.sql"))
            con.execute("DROP TABLE IF EXISTS stage_stats")
            con.execute("DROP TABLE IF EXISTS batch_files")
            con.execute("DROP TABLE IF EXISTS batch_groups")
            con.execute("COMMIT")
        except BaseException:
            rollback(con)
            con.unregister("batch_keys")
            self.store.forget(written)
            undone = {str(c.path) for c in batch}
            self.summary.rejected = [r for r in self.summary.rejected if r[0] not in undone]
            for path in undone:
                self.rejected.pop(path, None)
            raise
        con.unregister("batch_keys")
        self.summary.new += len(good)
        self.summary.samples += sum(c.valid_footer.num_rows for c in good)
        self.summary.run_ids.update(c.valid_footer.metadata["run"]["run_id"] for c in good)

"""The library facade: one object for everything done to a warehouse file.

Every command that touches a warehouse opens it through :class:`Warehouse`, which opens
connections with the right mode (a writer for ingest, upgrade, ack and calibrate; read-only
everywhere else) and closes them again, so a caller never holds a connection longer than one call:

- one method call each: ``ingest``, ``db status``, ``db upgrade``, ``db compact``, ``query``, ``ack``, ``report``,
  ``check``, ``run --skip-fresh`` / ``--dry-run`` (:meth:`fresh_series`, :meth:`measured_seconds`)
  and ``quickstart`` (:meth:`ingest`, :meth:`report`);
- through :meth:`reading` / :meth:`writing` in the library function that does the work, since
  each reads its own tables: ``publish`` (:mod:`benchdb.hub.publish`), ``export`` and ``export
  --partitioned`` (:mod:`benchdb.interop`, :mod:`benchdb.spark`), ``calibrate`` and ``predict``
  (the performance model).

``import`` writes contract files and touches no warehouse. "Ingest, then look for change points in
the series it touched" lives here and nowhere else.

    wh = Warehouse("bench.duckdb")
    summary = wh.ingest(["results/"])
    cols, rows = wh.query("SELECT model_id, median FROM results_latest")
    verdict = wh.check("latest~1", "latest")
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchdb.errors import BenchdbError, clip, first_line
from benchdb.store import resolve_db

#: Seconds a reading command waits for a writer that holds the warehouse (a writer waits longer:
#: :class:`Warehouse`'s default).
READ_WAIT_S = 10.0

if TYPE_CHECKING:  # imported lazily at call time: `benchdb --help` (and an answer from benchdb.store.memo) stays light
    import duckdb

    from benchdb.analysis.gate import GateResult
    from benchdb.ingest import IngestSummary
    from benchdb.reports.document import Filters, Report
    from benchdb.store import database, parts_store


@dataclass(frozen=True)
class Upgrade:
    applied: list[database.Migration]
    version: int
    #: What another program had changed of benchdb's views, macros or tables, now restored.
    restored: str | None = None
    #: (where the samples folder was, where it is now) when the warehouse had been moved.
    moved: tuple[str, str] | None = None


class Warehouse:
    """A benchdb warehouse file (created by the first ingest)."""

    def __init__(self, db: str | os.PathLike | None = None, *, wait_s: float = 60.0):
        self.path: Path = resolve_db(db)
        self.wait_s = wait_s

    def __repr__(self) -> str:
        return f"Warehouse({str(self.path)!r})"

    # ------------------------------------------------------------------ connections
    @contextmanager
    def reading(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A read-only, sandboxed connection (no file but the warehouse; views checked against
        benchdb's own) for the duration of a ``with`` block."""
        from benchdb.store import database

        con, _ = database.open_readonly(self.path, wait_s=self.wait_s)
        try:
            yield con
        finally:
            con.close()

    @contextmanager
    def writing(self) -> Iterator[duckdb.DuckDBPyConnection]:
        """A writable connection (creating the warehouse when new) for a ``with`` block, on a
        private copy published atomically at its end (:mod:`benchdb.store.snapshot`): open
        readers never block it and never see half of it."""
        from benchdb.store import snapshot

        with snapshot.write_session(self.path, wait_s=self.wait_s) as session:
            yield session.con

    # ------------------------------------------------------------------ schema
    def status(self) -> dict:
        from benchdb.store import database

        return database.status(self.path)

    def count_mismatches(self) -> tuple[int, int, list[tuple[str, str, int | None, int]]]:
        """(results, samples, mismatches): every (result_id, metric, recorded n, samples held)
        whose count in ``results``/``result_metrics`` differs from the rows the warehouse holds
        for it, and samples that belong to no result (recorded None). Empty when all agree."""
        from benchdb import sql

        with self.reading() as con:
            found = con.execute(sql.load("queries/count_mismatches.sql")).fetchall()
            ((results, samples),) = con.execute(sql.load("queries/warehouse_totals.sql")).fetchall()
        return int(results), int(samples), [(str(r), str(m), n, int(h)) for r, m, n, h in found]

    def upgrade(self) -> Upgrade:
        """Apply pending migrations, each in its own transaction, published as one new file."""
        from benchdb.store import database, migrate, snapshot

        changed = None
        if self.path.exists():
            con = database.connect(self.path, read_only=True, wait_s=self.wait_s, sandboxed=True)
            try:
                if database.schema_version(con) == database.code_schema_version():
                    changed = migrate.mismatch(con)
            finally:
                con.close()
        with snapshot.write_session(self.path, wait_s=self.wait_s, migrate=True) as session:
            store = session.parts
            moved = (store.moved_from, str(store.folder)) if store.moved_from is not None else None
            return Upgrade(session.applied, database.schema_version(session.con), changed, moved)

    def compact(self) -> parts_store.Compaction:
        """Rewrite the samples' parts as one (:meth:`benchdb.store.parts_store.Store.compact`)."""
        from benchdb.store import database, snapshot

        database.require(self.path)
        with snapshot.write_session(self.path, wait_s=self.wait_s) as session:
            session.con.execute("BEGIN TRANSACTION")
            done = session.parts.compact(session.con)
            session.con.execute("COMMIT")
            return done

    # ------------------------------------------------------------------ writing
    def ingest(
        self,
        paths: Iterable[str | os.PathLike],
        *,
        batch_rows: int | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> IngestSummary:
        """Load contract files; then give results measured in several processes their
        hierarchical-bootstrap CI, and update the change points of every series touched
        (``summary.change_points`` holds the number of open ones found); all in one write."""
        from benchdb.ingest import DEFAULT_BATCH_ROWS, ingest

        def detect(con, summary: IngestSummary) -> None:
            """What the warehouse judges after a load: intervals over processes, change points."""
            if summary.run_ids:
                from benchdb.analysis import changepoints, hierarchy

                hierarchy.update(con, sorted(summary.run_ids))
                summary.change_points = changepoints.update(con, sorted(summary.run_ids))

        return ingest(
            paths,
            self.path,
            wait_s=self.wait_s,
            progress=progress,
            batch_rows=batch_rows or DEFAULT_BATCH_ROWS,
            after=detect,
        )

    def ack(self, change_id: str, note: str) -> str:
        """Accept a change point as intended; returns its full id."""
        from benchdb.analysis import changepoints

        with self.writing() as con:
            return changepoints.ack(con, change_id, note)

    # ------------------------------------------------------------------ reading
    def query(self, text: str) -> tuple[list[str], list[tuple]]:
        """Run an analyst's SQL, which may only read (:mod:`benchdb.store.query_guard`: an allow-list of
        statements, checked before any of the text runs), on a read-only connection that reaches no
        file but the warehouse's (DuckDB's ``enable_external_access = false``). Returns (columns,
        rows); a statement that returns nothing gives ([], [])."""
        from benchdb import ctrl_c
        from benchdb.startup import duckdb
        from benchdb.store import database
        from benchdb.store.query_guard import check_read_only

        con, _ = database.open_readonly(self.path, wait_s=self.wait_s)
        try:
            check_read_only(con, text)
            try:  # rows are computed while fetched too: an error there is the query's, not benchdb's
                with ctrl_c.stops(con):
                    cur = con.execute(text)
                    if cur.description is None:
                        return [], []
                    return [d[0] for d in cur.description], cur.fetchall()
            except duckdb.Error as exc:
                if isinstance(exc, duckdb.InterruptException):  # Ctrl-C (ctrl_c.stops): not the query's error
                    raise
                first = clip(first_line(exc))
                if (
                    isinstance(exc, duckdb.PermissionException)
                    or "read-only" in first.lower()
                    or "disabled by configuration" in first
                ):
                    raise BenchdbError(f"benchdb query is read-only and reads only the warehouse: {first}") from None
                raise BenchdbError(f"query failed: {first}") from None
        finally:
            con.close()

    def fresh_series(self, since) -> set[str]:
        """Series with a valid result from a run started at or after ``since`` (UTC, naive)."""
        from benchdb import sql

        with self.reading() as con:
            return {r[0] for r in con.execute(sql.load("queries/fresh_results.sql"), {"since": since}).fetchall()}

    def measured_seconds(self) -> dict[str, float]:
        """Per series, how long its latest valid result took to measure (samples x median)."""
        from benchdb import sql

        with self.reading() as con:
            return dict(con.execute(sql.load("queries/estimate_history.sql")).fetchall())

    def report(self, kinds: list[str], filters: Filters, *, detail: bool = False) -> Report:
        """The report of ``kinds`` (``detail``: with the environment and drill-down HTML shows),
        answered from :mod:`benchdb.store.memo` while this state of the warehouse was asked the same;
        its generation time is now either way."""
        from dataclasses import asdict, replace

        from benchdb.reports import build

        rep = self._answer(
            "report",
            {"kinds": list(kinds), "filters": asdict(filters), "detail": detail},
            lambda con: build.build(con, str(self.path), kinds, filters, detail=detail),
        )
        return replace(rep, generated_at=build.generated_now())

    def check(self, baseline: str, candidate: str, **options: Any) -> GateResult:
        """The regression gate (see :func:`benchdb.analysis.check.compare` for the options),
        answered from :mod:`benchdb.store.memo` while this state of the warehouse was asked the same
        (a time: selector open at its end depends on the clock: always computed)."""

        def compare(con):
            from benchdb.analysis import check

            return check.compare(con, baseline, candidate, **options)

        clock = any(s.strip().startswith("time:") and s.strip().endswith("..") for s in (baseline, candidate))
        return self._answer("check", {"baseline": baseline, "candidate": candidate, **options}, compare, keep=not clock)

    def _answer(self, kind: str, options: dict[str, Any], fn: Callable[[Any], Any], *, keep: bool = True) -> Any:
        """``fn(read-only connection)``, or the answer :mod:`benchdb.store.memo` kept for it (``keep``: the
        answer depends on this state of the warehouse and ``options`` alone). A BenchdbError ``fn``
        raises is an answer too (kept, and raised again); errors opening the warehouse are not."""
        from benchdb.store import memo

        def compute() -> tuple[str, Any]:
            with self.reading() as con:
                try:
                    return "ok", fn(con)
                except BenchdbError as exc:
                    return "error", exc

        outcome, value = memo.answer(self.path, kind, options, compute) if keep else compute()
        if outcome == "error":
            raise value
        return value

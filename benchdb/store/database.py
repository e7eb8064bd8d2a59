"""The versioned DuckDB warehouse: opening, locking, migrations, views.

Migrations are numbered files ``benchdb/store/migrations/NNNN_name.sql``, applied in order,
each inside one transaction together with its ``schema_version`` row. After migrations (and
whenever the shipped views change) every view in ``benchdb/sql/views`` is re-applied.
"""

from __future__ import annotations

import os
import re
import shlex
import time
from pathlib import Path
from typing import TYPE_CHECKING

from benchdb import sql, startup
from benchdb.errors import BenchdbError
from benchdb.startup import duckdb
from benchdb.store import DEFAULT_DB, resolve_db  # noqa: F401  (where callers have found them)
from benchdb.store.migrate import (  # noqa: F401  (where callers have found them)
    Migration,
    code_schema_version,
    migrations,
    refresh_views,
    refuse_newer,
    schema_version,
    upgrade,
)
from benchdb.store.migrate import verify as verify_catalog

if TYPE_CHECKING:
    from benchdb.store import parts_store

_LOCK_PID = re.compile(r"PID (\d+)")


#: Marks a connection benchdb sandboxes: DuckDB shares one database among a process's connections of
#: equal configuration, so a notebook's own connection to the file (without it) is never changed.
_SANDBOX = {"custom_user_agent": "benchdb-sandbox"}
#: The most values of a join's build side DuckDB pushes into a scan as an IN filter (:func:`_sandbox`).
JOIN_FILTER_VALUES = 10_000


#: The name a fresh connection gives the warehouse it attaches (:func:`connect`).
ATTACHED = "warehouse"


def connect(
    path: Path, read_only: bool, wait_s: float, sandboxed: bool = False, fresh: bool = False
) -> duckdb.DuckDBPyConnection:
    """Open the DuckDB file, waiting up to ``wait_s`` for another process's lock. ``sandboxed``:
    no file but this database and its samples folder can be read (DuckDB's
    ``enable_external_access`` with ``allowed_directories``). ``fresh`` (reading only): the file
    as it is now, even where this process has a connection to an older state of it open. DuckDB
    hands a new connection to a path the database it already has open for that path, so the
    warehouse is attached (as :data:`ATTACHED`, made the connection's default) to a database of
    its own in memory; a cursor of it starts with ``USE`` :data:`ATTACHED`."""
    config: dict[str, str | bool | int | float | list[str]] = dict(_SANDBOX) if sandboxed else {}
    if not read_only:  # writers register Arrow tables (ingest, migrations): the whole package
        startup.full()
    if fresh:  # where DuckDB would spill had it opened the file itself
        config["temp_directory"] = f"{path}.tmp"
    deadline = time.monotonic() + wait_s
    delay = 0.05
    while True:
        try:
            if fresh:
                con = duckdb.connect(":memory:", config=config)
                try:
                    # a literal, not a parameter: DuckDB before 2.0 cannot bind ATTACH's path
                    con.execute(f"ATTACH {sql.string(str(path))} AS {ATTACHED} (READ_ONLY)")
                    con.execute(f"USE {ATTACHED}")
                except BaseException:
                    con.close()
                    raise
            else:
                con = duckdb.connect(str(path), read_only=read_only, config=config)
            if sandboxed:
                _sandbox(con, path)
            return con
        except duckdb.IOException as exc:
            text = str(exc)
            if "lock" not in text.lower():
                first = text.splitlines()[0] if text else type(exc).__name__
                raise BenchdbError(
                    f"cannot open database {path}: {first}; check that it is a benchdb DuckDB file"
                ) from None
            if time.monotonic() >= deadline:
                pid = _LOCK_PID.search(text)
                who = f" (PID {pid.group(1)})" if pid else ""
                raise BenchdbError(
                    f"database {path} is in use by another process{who}; "
                    "wait for it to finish and try again, or raise --wait"
                ) from None
            time.sleep(delay)
            delay = min(delay * 2, 0.5)
        except duckdb.Error as exc:
            first = str(exc).splitlines()[0]
            if config and "different configuration" in first:
                # this process already holds a connection to the file (a notebook using the library):
                # DuckDB shares its database, whose settings cannot differ; the catalog check still
                # guards the stored SQL (the command line never holds one)
                config, sandboxed = {}, False
                continue
            raise BenchdbError(
                f"cannot open database {path}: {first}; check that it is a benchdb DuckDB file"
            ) from None


def _sandbox(con: duckdb.DuckDBPyConnection, path: Path) -> None:
    """Let DuckDB read no file but the warehouse and its samples folder, for good (the settings are
    locked: no SET, RESET, PRAGMA or stored view can undo them). ``allowed_directories`` can only
    be set once the database is open, and before external access is turned off. It grants writing
    as well as reading (so does ``allowed_paths``; DuckDB has no read-only grant): SQL not
    benchdb's own goes through :func:`benchdb.store.query_guard.check_read_only` first."""
    from benchdb.store import parts

    try:
        # DuckDB turns a join's build side of at most this many values into an IN filter on the
        # scan (default 50), which skips the row groups of other results: the parts are sorted by
        # result id, and the gate asks for hundreds of results at a time.
        con.execute(f"SET dynamic_or_filter_threshold = {JOIN_FILTER_VALUES}")
    except duckdb.Error:
        pass  # configuration locked by a connection of this process: its default
    if not con.execute("SELECT current_setting('enable_external_access')").fetchall()[0][0]:
        return  # a connection of this process sandboxed it already
    folder = parts.folder_for(path)
    try:
        if folder is not None:
            con.execute("SET allowed_directories = $1", [[str(folder) + os.sep]])
        con.execute("SET enable_external_access = false")
        con.execute("SET lock_configuration = true")
    except BaseException:
        con.close()
        raise


def blank_catalog() -> bytes | None:
    """The bytes of a new warehouse's catalog at this code's schema and views (no result, no
    sample), built once per code and DuckDB version and kept in the user's private cache
    (:func:`benchdb.store.memo.private_folder`): a new warehouse starts as a copy of it instead of
    running every migration and creating every view again (~0.2 s). None when there is no private
    cache (the caller builds the file in place). The copy's schema version is checked like any
    warehouse a writer opens (:func:`prepare`); its views, this code's own, are not compared again."""
    import hashlib
    import tempfile

    from benchdb.store import memo, parts_store

    folder = memo.private_folder()
    if folder is None:
        return None
    key = hashlib.sha256(f"{memo.code_digest()}:{duckdb.__version__}".encode()).hexdigest()[:32]
    name = f"blank-{key}.duckdb"
    try:
        fd = memo.open_private(folder, name)
        with os.fdopen(fd, "rb") as f:
            return f.read()
    except OSError:
        pass
    with tempfile.TemporaryDirectory(prefix="benchdb-blank-") as scratch:
        file = Path(scratch) / "blank.duckdb"
        con = connect(file, read_only=False, wait_s=0)
        try:
            upgrade(con, file, store=parts_store.Store(":memory:"))  # no samples folder is named
            con.execute("CHECKPOINT")
        finally:
            con.close()
        data = file.read_bytes()
    memo.write_private(folder, name, data)
    return data


def open_writable(
    db: str | os.PathLike | None, *, wait_s: float = 60.0, available: list[Migration] | None = None
) -> tuple[duckdb.DuckDBPyConnection, Path]:
    """Open (creating if new) the warehouse for writing, at the schema this code ships.

    A new or empty database is initialised. An older schema is refused with the command that
    migrates it; a newer one is refused with the versions of both.

    This writes the file in place, holding DuckDB's lock against every reader: benchdb's own
    writers go through :func:`benchdb.store.snapshot.write_session` instead (readers never block
    it). Use this only where no reader can be open (test fixtures, a brand-new file).
    """
    path = resolve_db(db)
    check_folder(path)
    con = connect(path, read_only=False, wait_s=wait_s)
    try:
        prepare(con, path, available)
    except BaseException:
        con.close()
        raise
    return con, path


def check_folder(path: Path) -> None:
    if path.parent and not path.parent.exists():
        raise BenchdbError(f"folder {path.parent} for database {path} does not exist; create it first")


def prepare(
    con: duckdb.DuckDBPyConnection,
    path: Path,
    available: list[Migration] | None = None,
    *,
    migrate: bool = False,
    store: parts_store.Store | None = None,
    built_here: bool = False,
) -> list[Migration]:
    """Bring an open writable connection to the schema this code ships: initialise a new file,
    refuse a newer one, and refuse an older one unless ``migrate`` (then apply the migrations).
    ``path`` is the warehouse named in messages. ``built_here``: the file is a copy of
    :func:`blank_catalog`, built by this very code, whose views need no comparison with the
    shipped ones (~0.03 s of a new warehouse's first write). Returns the migrations applied."""
    from benchdb.store import parts

    available = available if available is not None else migrations()
    # the views read the samples beside the warehouse, wherever this connection's file is
    parts.point(con, store.folder if store is not None else parts.folder_for(path))
    have, code = schema_version(con), code_schema_version(available)
    refuse_newer(path, have, code)
    if have == 0 or (migrate and have < code):
        return upgrade(con, path, available, store)
    if have < code:
        raise BenchdbError(
            f"database {path} has schema version {have}, this benchdb uses "
            f"{code}; run `benchdb db upgrade --db {shlex.quote(str(path))}` first"
        )
    if not built_here:
        refresh_views(con)
    return []


def open_readonly(
    db: str | os.PathLike | None, *, wait_s: float = 10.0, verify: bool = True, fresh: bool = False
) -> tuple[duckdb.DuckDBPyConnection, Path]:
    """Open an existing warehouse to read it: read-only and sandboxed (DuckDB reads no file but this
    one: a stored view can never read or write another), at the schema this code ships, with the
    views, macros and tables this code ships (:mod:`benchdb.store.catalog`). ``fresh``: the
    published file as it is now (:func:`connect`)."""
    from benchdb.store import memo, parts

    path = resolve_db(db)
    require(path)
    # The catalog check reads every stored definition (~30 ms, most of it DuckDB listing its
    # functions to find the macros); a state of the file that passed it under this code passes
    # again. Taken before DuckDB opens the file: memo.passed also finds the file unchanged since.
    before = memo.state(path) if verify else None
    con = connect(path, read_only=True, wait_s=wait_s, sandboxed=True, fresh=fresh)
    try:
        parts.point(con, parts.folder_for(path))  # a symlinked warehouse's samples are beside its target
        have, code = schema_version(con), code_schema_version()
        refuse_newer(path, have, code)
        if have == 0:
            raise BenchdbError(
                f"{path} is not a benchdb warehouse (no schema_version table); "
                "point --db at a file made by `benchdb ingest`"
            )
        if have < code:
            raise BenchdbError(
                f"database {path} has schema version {have}, this benchdb uses "
                f"{code}; run `benchdb db upgrade --db {shlex.quote(str(path))}` first"
            )
        if verify:  # (ingest reads only its file list first; its write session restores the views)
            if not memo.passed(path, "catalog", before):
                verify_catalog(con, path)
                memo.record_pass(path, "catalog", before)
            parts.verify(con, path)
    except BaseException:
        con.close()
        raise
    return con, path


def require(path: Path) -> None:
    """Refuse a warehouse that does not exist, naming the command that creates one."""
    if not path.exists():
        raise BenchdbError(
            f"database {path} does not exist; create it with `benchdb ingest RESULTS_DIR --db {shlex.quote(str(path))}`"
        )


def status(db: str | os.PathLike | None) -> dict:
    """Schema version of a database against this code's, row counts of the main tables, and the
    samples folder's parts and bytes."""
    from benchdb.store import parts

    path = resolve_db(db)
    code = code_schema_version()
    if not path.exists():
        return {
            "path": str(path),
            "exists": False,
            "schema_version": 0,
            "code_version": code,
            "pending": code,
            "tables": {},
        }
    con = connect(path, read_only=True, wait_s=10.0, sandboxed=True)
    try:
        have = schema_version(con)
        tables = {}
        if have:
            for (name,) in con.execute(sql.load("queries/list_tables.sql")).fetchall():
                tables[name] = con.execute(f"SELECT count(*) FROM {sql.ident(name)}").fetchall()[0][0]
        files = parts.on_disk(path)
        return {
            "path": str(path),
            "exists": True,
            "schema_version": have,
            "code_version": code,
            "pending": max(code - have, 0),
            "tables": tables,
            "samples_folder": {
                "path": str(parts.folder_for(path)),
                "parts": len(files),
                "bytes": sum(f.stat().st_size for f in files),
            },
        }
    finally:
        con.close()

"""The versioned DuckDB warehouse: opening, locking, migrations, views.

Migrations are numbered files ``benchdb/schema/migrations/NNNN_name.sql``, applied in order,
each inside one transaction together with its ``schema_version`` row. After migrations (and
whenever the shipped views change) every view in ``benchdb/sql/views`` is re-applied.
"""

from __future__ import annotations

import os
import re
import shlex
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from benchdb import __version__, sql, startup
from benchdb.errors import BenchdbError
from benchdb.schema import DEFAULT_DB, resolve_db  # noqa: F401  (where callers have found them)
from benchdb.startup import duckdb

if TYPE_CHECKING:
    from benchdb.schema import parts

_MIGRATION_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")
_MIGRATIONS = Path(__file__).parent / "migrations"
_LOCK_PID = re.compile(r"PID (\d+)")


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    sql: str
    #: Source of the optional companion ``NNNN_name.py``: its ``migrate(con)`` runs after the SQL,
    #: in the same transaction, for changes that need benchdb's Python (identity hashes).
    python: str | None = None

    def run(self, con: duckdb.DuckDBPyConnection) -> None:
        con.execute(self.sql)
        if self.python is not None:
            namespace: dict = {"__name__": f"benchdb.schema.migrations.m{self.version:04d}"}
            exec(compile(self.python, f"{self.version:04d}_{self.name}.py", "exec"), namespace)
            namespace["migrate"](con)


def migrations() -> list[Migration]:
    """The migrations this code ships, in version order."""
    folder = _MIGRATIONS
    found = []
    for entry in folder.iterdir():
        m = _MIGRATION_NAME.match(entry.name)
        if m:
            companion = folder / (entry.name[:-4] + ".py")
            python = companion.read_text(encoding="utf-8") if companion.is_file() else None
            found.append(Migration(int(m.group(1)), m.group(2), entry.read_text(encoding="utf-8"), python))
    found.sort(key=lambda mig: mig.version)
    for i, mig in enumerate(found, start=1):
        if mig.version != i:
            raise RuntimeError(f"migration numbering has a gap or duplicate at {mig.version:04d}")
    return found


def code_schema_version(available: list[Migration] | None = None) -> int:
    if available is None:        # from the file names alone (a reader's start-up)
        return max(int(m.group(1)) for m in map(_MIGRATION_NAME.match, os.listdir(_MIGRATIONS)) if m)
    return available[-1].version


#: Marks a connection benchdb sandboxes: DuckDB shares one database among a process's connections of
#: equal configuration, so a notebook's own connection to the file (without it) is never changed.
_SANDBOX = {"custom_user_agent": "benchdb-sandbox"}


def connect(path: Path, read_only: bool, wait_s: float, sandboxed: bool = False) -> duckdb.DuckDBPyConnection:
    """Open the DuckDB file, waiting up to ``wait_s`` for another process's lock. ``sandboxed``:
    no file but this database and its samples folder can be read (DuckDB's
    ``enable_external_access`` with ``allowed_directories``)."""
    config: dict[str, str | bool | int | float | list[str]] = dict(_SANDBOX) if sandboxed else {}
    if not read_only:   # writers register Arrow tables (ingest, migrations): the whole package
        startup.full()
    deadline = time.monotonic() + wait_s
    delay = 0.05
    while True:
        try:
            con = duckdb.connect(str(path), read_only=read_only, config=config)
            if config:
                _sandbox(con, path)
            return con
        except duckdb.IOException as exc:
            text = str(exc)
            if "lock" not in text.lower():
                first = text.splitlines()[0] if text else type(exc).__name__
                raise BenchdbError(f"cannot open database {path}: {first}; "
                                   "check that it is a benchdb DuckDB file") from None
            if time.monotonic() >= deadline:
                pid = _LOCK_PID.search(text)
                who = f" (PID {pid.group(1)})" if pid else ""
                raise BenchdbError(f"database {path} is in use by another process{who}; "
                                   "wait for it to finish and try again, or raise --wait") from None
            time.sleep(delay)
            delay = min(delay * 2, 0.5)
        except duckdb.Error as exc:
            first = str(exc).splitlines()[0]
            if config and "different configuration" in first:
                # this process already holds a connection to the file (a notebook using the library):
                # DuckDB shares its database, whose settings cannot differ; the catalog check still
                # guards the stored SQL (the command line never holds one)
                config = {}
                continue
            raise BenchdbError(f"cannot open database {path}: {first}; "
                               "check that it is a benchdb DuckDB file") from None


def _sandbox(con: duckdb.DuckDBPyConnection, path: Path) -> None:
    """Let DuckDB read no file but the warehouse and its samples folder, for good (the settings are
    locked: no SET, RESET, PRAGMA or stored view can undo them). ``allowed_directories`` can only
    be set once the database is open, and before external access is turned off. It grants writing
    as well as reading (so does ``allowed_paths``; DuckDB has no read-only grant): SQL not
    benchdb's own goes through :func:`benchdb.sql.readonly.check_read_only` first."""
    from benchdb.schema import parts

    if not con.execute("SELECT current_setting('enable_external_access')").fetchall()[0][0]:
        return                      # a connection of this process sandboxed it already
    folder = parts.folder_for(path)
    try:
        if folder is not None:
            con.execute("SET allowed_directories = $1", [[str(folder) + os.sep]])
        con.execute("SET enable_external_access = false")
        con.execute("SET lock_configuration = true")
    except BaseException:
        con.close()
        raise


def schema_version(con: duckdb.DuckDBPyConnection) -> int:
    """The schema version of an open database (0 for an empty one)."""
    exists = con.execute(     # duckdb_tables(), not information_schema: 1 ms against 16 ms
        "SELECT count(*) FROM duckdb_tables() WHERE table_name = 'schema_version'"
    ).fetchall()[0][0]
    if not exists:
        return 0
    return con.execute("SELECT coalesce(max(version), 0) FROM schema_version").fetchall()[0][0]


def _refuse_newer(path: Path, have: int, code: int) -> None:
    if have > code:
        raise BenchdbError(f"database {path} has schema version {have}, but this benchdb "
                           f"({__version__}) supports up to {code}; upgrade benchdb to use it")


def _apply(con: duckdb.DuckDBPyConnection, pending: list[Migration]) -> list[Migration]:
    applied = []
    for mig in pending:
        con.execute("BEGIN TRANSACTION")
        try:
            mig.run(con)
            con.execute(sql.load("queries/record_migration.sql"), [mig.version, mig.name, __version__])
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        applied.append(mig)
    return applied


def _refresh_views(con: duckdb.DuckDBPyConnection, force: bool = False) -> bool:
    """Apply the shipped macros and views when they changed, or when another program changed the
    file's copies (:mod:`benchdb.schema.catalog`): a writer restores benchdb's definitions."""
    from benchdb.schema import catalog, parts

    digest = catalog.views_digest()
    rows = con.execute(sql.load("queries/get_meta.sql"), ["views_sha256"]).fetchall()
    if not force and rows and rows[0][0] == digest and catalog.mismatch(con) is None:
        return False
    con.execute("BEGIN TRANSACTION")
    try:
        sql.apply_views(con)
        parts.restore_view(con)
        con.execute(sql.load("queries/set_meta.sql"), ["views_sha256", digest])
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return True


def upgrade(con: duckdb.DuckDBPyConnection, path: Path,
            available: list[Migration] | None = None, store: parts.Store | None = None) -> list[Migration]:
    """Apply pending migrations, then views. Returns the migrations applied. ``store``: the write
    session's samples folder (a new one for ``path`` when not given), where samples of the
    older single-file layout move to."""
    from benchdb.schema import parts

    available = available if available is not None else migrations()
    have = schema_version(con)
    _refuse_newer(path, have, code_schema_version(available))
    con.execute(_bootstrap_sql())
    applied = _apply(con, [m for m in available if m.version > have])
    if applied and parts.external(con):
        store = store if store is not None else parts.Store(path)
        con.execute("BEGIN TRANSACTION")
        try:
            store.adopt(con)
            store.publish(con, force=True)
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
    if code_schema_version(available) == code_schema_version():
        _refresh_views(con, force=bool(applied))    # the views are written for the latest tables
    return applied


def _bootstrap_sql() -> str:
    return (_MIGRATIONS.parent / "bootstrap.sql").read_text("utf-8")


def blank_catalog() -> bytes | None:
    """The bytes of a new warehouse's catalog at this code's schema and views (no result, no
    sample), built once per code and DuckDB version and kept in the user's private cache
    (:func:`benchdb.memo.private_folder`): a new warehouse starts as a copy of it instead of
    running every migration and creating every view again (~0.2 s). None when there is no private
    cache (the caller builds the file in place). The copy is checked like any warehouse a writer
    opens (:func:`prepare`: schema version, then the views against this code's)."""
    import hashlib
    import tempfile

    from benchdb import memo
    from benchdb.schema import parts

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
            upgrade(con, file, store=parts.Store(":memory:"))      # no samples folder is named
            con.execute("CHECKPOINT")
        finally:
            con.close()
        data = file.read_bytes()
    memo.write_private(folder, name, data)
    return data


def open_writable(db: str | os.PathLike | None, *, wait_s: float = 60.0,
                  available: list[Migration] | None = None) -> tuple[duckdb.DuckDBPyConnection, Path]:
    """Open (creating if new) the warehouse for writing, at the schema this code ships.

    A new or empty database is initialised. An older schema is refused with the command that
    migrates it; a newer one is refused with the versions of both.

    This writes the file in place, holding DuckDB's lock against every reader: benchdb's own
    writers go through :func:`benchdb.schema.snapshot.write_session` instead (readers never block
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


def prepare(con: duckdb.DuckDBPyConnection, path: Path, available: list[Migration] | None = None, *,
            migrate: bool = False, store: parts.Store | None = None) -> list[Migration]:
    """Bring an open writable connection to the schema this code ships: initialise a new file,
    refuse a newer one, and refuse an older one unless ``migrate`` (then apply the migrations).
    ``path`` is the warehouse named in messages. Returns the migrations applied."""
    from benchdb.schema import parts

    available = available if available is not None else migrations()
    # the views read the samples beside the warehouse, wherever this connection's file is
    parts.point(con, store.folder if store is not None else parts.folder_for(path))
    have, code = schema_version(con), code_schema_version(available)
    _refuse_newer(path, have, code)
    if have == 0 or (migrate and have < code):
        return upgrade(con, path, available, store)
    if have < code:
        raise BenchdbError(f"database {path} has schema version {have}, this benchdb uses "
                           f"{code}; run `benchdb db upgrade --db {shlex.quote(str(path))}` first")
    _refresh_views(con)
    return []


def open_readonly(db: str | os.PathLike | None, *, wait_s: float = 10.0,
                  verify: bool = True) -> tuple[duckdb.DuckDBPyConnection, Path]:
    """Open an existing warehouse to read it: read-only and sandboxed (DuckDB reads no file but this
    one: a stored view can never read or write another), at the schema this code ships, with the
    views, macros and tables this code ships (:mod:`benchdb.schema.catalog`)."""
    from benchdb.schema import catalog, parts

    path = resolve_db(db)
    require(path)
    con = connect(path, read_only=True, wait_s=wait_s, sandboxed=True)
    try:
        parts.point(con, parts.folder_for(path))     # a symlinked warehouse's samples are beside its target
        have, code = schema_version(con), code_schema_version()
        _refuse_newer(path, have, code)
        if have == 0:
            raise BenchdbError(f"{path} is not a benchdb warehouse (no schema_version table); "
                               "point --db at a file made by `benchdb ingest`")
        if have < code:
            raise BenchdbError(f"database {path} has schema version {have}, this benchdb uses "
                               f"{code}; run `benchdb db upgrade --db {shlex.quote(str(path))}` first")
        if verify:         # (ingest reads only its file list first; its write session restores the views)
            catalog.verify(con, path)
            parts.verify(con, path)
    except BaseException:
        con.close()
        raise
    return con, path


def require(path: Path) -> None:
    """Refuse a warehouse that does not exist, naming the command that creates one."""
    if not path.exists():
        raise BenchdbError(f"database {path} does not exist; create it with "
                           f"`benchdb ingest RESULTS_DIR --db {shlex.quote(str(path))}`")


def status(db: str | os.PathLike | None) -> dict:
    """Schema version of a database against this code's, row counts of the main tables, and the
    samples folder's parts and bytes."""
    from benchdb.schema import parts

    path = resolve_db(db)
    code = code_schema_version()
    if not path.exists():
        return {"path": str(path), "exists": False, "schema_version": 0, "code_version": code,
                "pending": code, "tables": {}}
    con = connect(path, read_only=True, wait_s=10.0, sandboxed=True)
    try:
        have = schema_version(con)
        tables = {}
        if have:
            for (name,) in con.execute(sql.load("queries/list_tables.sql")).fetchall():
                tables[name] = con.execute(f"SELECT count(*) FROM {_ident(name)}").fetchall()[0][0]
        files = parts.on_disk(path)
        return {"path": str(path), "exists": True, "schema_version": have, "code_version": code,
                "pending": max(code - have, 0), "tables": tables,
                "samples_folder": {"path": str(parts.folder_for(path)), "parts": len(files),
                                   "bytes": sum(f.stat().st_size for f in files)}}
    finally:
        con.close()


def _ident(name: str) -> str:
    """Quote an identifier read from the catalog (never a value from a user)."""
    return '"' + name.replace('"', '""') + '"'

"""Migrations and the catalog this code ships: numbered files ``migrations/NNNN_name.sql`` (with
an optional ``NNNN_name.py`` companion) applied in order, then the macros and views; and the
catalog an empty database has after them, which a warehouse's stored SQL is checked against
(:mod:`benchdb.store.catalog` compares)."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from benchdb import __version__, sql
from benchdb.errors import BenchdbError
from benchdb.store import catalog
from benchdb.store.transaction import transaction

if TYPE_CHECKING:
    import duckdb

    from benchdb.store import parts_store

_MIGRATION_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")
_MIGRATIONS = Path(__file__).parent / "migrations"


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
            namespace: dict = {"__name__": f"benchdb.store.migrations.m{self.version:04d}"}
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
    if available is None:  # from the file names alone (a reader's start-up)
        return max(int(m.group(1)) for m in map(_MIGRATION_NAME.match, os.listdir(_MIGRATIONS)) if m)
    return available[-1].version


def schema_version(con: duckdb.DuckDBPyConnection) -> int:
    """The schema version of an open database (0 for an empty one)."""
    exists = con.execute(  # duckdb_tables(), not information_schema: 1 ms against 16 ms
        "SELECT count(*) FROM duckdb_tables() WHERE table_name = 'schema_version'"
    ).fetchall()[0][0]
    if not exists:
        return 0
    return con.execute("SELECT coalesce(max(version), 0) FROM schema_version").fetchall()[0][0]


def refuse_newer(path: Path, have: int, code: int) -> None:
    if have > code:
        raise BenchdbError(
            f"database {path} has schema version {have}, but this benchdb "
            f"({__version__}) supports up to {code}; upgrade benchdb to use it"
        )


def _apply(con: duckdb.DuckDBPyConnection, pending: list[Migration]) -> list[Migration]:
    applied = []
    for mig in pending:
        with transaction(con):
            mig.run(con)
            con.execute(sql.load("queries/record_migration.sql"), [mig.version, mig.name, __version__])
        applied.append(mig)
    return applied


def refresh_views(con: duckdb.DuckDBPyConnection, force: bool = False) -> bool:
    """Apply the shipped macros and views when they changed, or when another program changed the
    file's copies (:mod:`benchdb.store.catalog`): a writer restores benchdb's definitions."""
    from benchdb.store import parts

    digest = catalog.views_digest()
    rows = con.execute(sql.load("queries/get_meta.sql"), ["views_sha256"]).fetchall()
    if not force and rows and rows[0][0] == digest and mismatch(con) is None:
        return False
    with transaction(con):
        sql.apply_views(con)
        parts.restore_view(con)
        con.execute(sql.load("queries/set_meta.sql"), ["views_sha256", digest])
    return True


def upgrade(
    con: duckdb.DuckDBPyConnection,
    path: Path,
    available: list[Migration] | None = None,
    store: parts_store.Store | None = None,
) -> list[Migration]:
    """Apply pending migrations, then views. Returns the migrations applied. ``store``: the write
    session's samples folder (a new one for ``path`` when not given), where samples of the
    older single-file layout move to."""
    from benchdb.store import parts, parts_store

    available = available if available is not None else migrations()
    have = schema_version(con)
    refuse_newer(path, have, code_schema_version(available))
    con.execute(_bootstrap_sql())
    applied = _apply(con, [m for m in available if m.version > have])
    if applied and parts.external(con):
        store = store if store is not None else parts_store.Store(path)
        with transaction(con):
            store.adopt(con)
            store.publish(con, force=True)
    if code_schema_version(available) == code_schema_version():
        refresh_views(con, force=bool(applied))  # the views are written for the latest tables
    return applied


def _bootstrap_sql() -> str:
    return (_MIGRATIONS.parent / "bootstrap.sql").read_text("utf-8")


def _build() -> dict:
    from benchdb.startup import duckdb

    con = duckdb.connect()
    try:
        upgrade(con, Path(":memory:"))
        return {**catalog.current(con), "samples_parts": catalog.parts_template(con)}
    finally:
        con.close()


@lru_cache(maxsize=1)
def expected() -> dict:
    """The catalog this benchdb ships (from the cache when this code built it before)."""
    from benchdb.store import memo

    folder = memo.private_folder()
    from benchdb.startup import duckdb

    # DuckDB's version too: how it stores a definition changes between versions
    key = hashlib.sha256(f"{memo.code_digest()}:{duckdb.__version__}".encode()).hexdigest()[:32]
    file = folder / f"catalog-{key}.json" if folder is not None else None
    if folder is not None and file is not None:
        try:
            fd = memo.open_private(folder, file.name)
            with os.fdopen(fd, "r", encoding="utf-8") as f:
                got = json.load(f)
            if isinstance(got, dict) and set(got) == {"views", "macros", "tables", "samples_parts"}:
                return got
        except (OSError, ValueError):
            pass
    built = _build()
    if folder is not None and file is not None:
        memo.write_private(folder, file.name, json.dumps(built, sort_keys=True).encode())
    return built


def mismatch(con: duckdb.DuckDBPyConnection) -> str | None:
    """The first shipped object whose stored definition differs, described; None when all match."""
    return catalog.differences(con, expected())


def verify(con: duckdb.DuckDBPyConnection, path: Path) -> None:
    """Refuse a warehouse whose shipped views, macros or tables were changed by another program
    (or that holds another benchdb version's views: its last writer was older or newer)."""
    problem = mismatch(con)
    if problem is None:
        return
    stored = con.execute(sql.load("queries/get_meta.sql"), ["views_sha256"]).fetchall()
    if not stored or stored[0][0] != catalog.views_digest():
        raise BenchdbError(
            f"database {path} holds the views of another benchdb version ({problem}); run "
            f"`benchdb db upgrade --db {shlex.quote(str(path))}` to apply this version's"
        )
    raise BenchdbError(
        f"database {path}: {problem}; benchdb will not answer from SQL it did not write. "
        f"Run `benchdb db upgrade --db {shlex.quote(str(path))}` to restore benchdb's definitions"
    )

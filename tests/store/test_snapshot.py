"""Write sessions on a copy of the catalog (benchdb.store.snapshot): another program's write during a
session is never lost (theirs stays in the file, ours is kept beside it), a WAL another writer left is
replayed into the copy and never onto the new file, and the published file keeps its mode, group and
the symlink that named it. Real DuckDB files, a real second process, the real command line."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner
from conftest import make_meta, make_run, write_file
from support.contract_files import ingested_warehouse

from benchdb.cli import main
from benchdb.errors import BenchdbError
from benchdb.warehouse import Warehouse

pytestmark = pytest.mark.core


def invoke(*args, env=None):
    return CliRunner().invoke(main, [str(a) for a in args], env=env)


def test_a_foreign_write_during_a_write_session_is_never_lost(tmp_path):
    db = ingested_warehouse(tmp_path)
    wh = Warehouse(db, wait_s=1)
    with pytest.raises(BenchdbError, match="was changed by another program during this write") as err:
        with wh.writing() as con:
            con.execute("CREATE TABLE mine AS SELECT 1 AS x")
            other = duckdb.connect(str(db))  # an analyst's plain connection
            other.execute("CREATE TABLE notes AS SELECT 'keep me' AS note")
            other.execute("UPDATE runs SET host = 'edited'")
            other.close()
    kept = Path(str(err.value).split("this write is kept in ")[1].split(". ")[0])
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT note FROM notes").fetchall() == [("keep me",)]  # theirs: untouched
    assert con.execute("SELECT DISTINCT host FROM runs").fetchall() == [("edited",)]
    con.close()
    con = duckdb.connect(str(kept), read_only=True)
    assert con.execute("SELECT x FROM mine").fetchall() == [(1,)]  # ours: kept
    con.close()


#: A plain DuckDB writer (another program) that commits and dies without a checkpoint: its
#: changes are left in the warehouse's WAL only.
_DIES_WITH_A_WAL = """import os, sys
import duckdb
con = duckdb.connect(sys.argv[1])
con.execute("SET checkpoint_threshold = '1GB'")
con.execute("CREATE TABLE notes (note VARCHAR)")
con.execute("INSERT INTO notes VALUES ('from the wal')")
os._exit(0)                                   # no close, no checkpoint: as if killed
"""


def test_a_wal_of_the_old_file_never_meets_the_new_one(tmp_path, monkeypatch):
    """A real WAL beside the warehouse (another program's committed change that died before its
    checkpoint): the next write session keeps that change (the WAL is replayed into its copy) and
    removes the old file's WAL before renaming the new file into place, so the old log is never
    replayed onto the new file."""
    import subprocess
    import sys

    from benchdb.ingest import ingest
    from benchdb.store import snapshot

    db = ingested_warehouse(tmp_path)
    wal = Path(f"{db}.wal")
    subprocess.run([sys.executable, "-c", _DIES_WITH_A_WAL, str(db)], check=True, timeout=60)
    assert wal.exists() and wal.stat().st_size > 0  # a real WAL, holding the only copy of the change
    renames = []
    real_replace = os.replace

    def replace(src, dst, **kw):  # the real rename, seen at the moment it happens (os is every
        if Path(dst) == db:  # module's: benchdb.store.memo renames its cache files with dir fds)
            renames.append(wal.exists())
        real_replace(src, dst, **kw)

    monkeypatch.setattr(snapshot.os, "replace", replace)
    write_file(tmp_path / "more", make_meta(make_run(), batch_size=2))
    ingest([tmp_path / "more"], db)
    assert renames == [False]  # published once, with the old WAL already gone
    assert not wal.exists()
    con = duckdb.connect(str(db), read_only=True)
    try:  # the change from the WAL, once (a replay onto the new file would fail or double it)
        assert con.execute("SELECT note FROM notes").fetchall() == [("from the wal",)]
        assert con.execute("SELECT count(*) FROM results").fetchone() == (2,)
    finally:
        con.close()
    monkeypatch.undo()
    write_file(tmp_path / "third", make_meta(make_run(), batch_size=3))
    assert invoke("ingest", tmp_path / "third", "--db", db).exit_code == 0  # and the next write goes on


def test_a_write_keeps_mode_group_and_a_symlinked_db(tmp_path):
    data, me = tmp_path / "data", tmp_path / "me"
    data.mkdir()
    me.mkdir()
    link = me / "w.duckdb"
    link.symlink_to(Path("..") / "data" / "w.duckdb")
    run = make_run()
    write_file(tmp_path / "r1", make_meta(run, batch_size=1))
    write_file(tmp_path / "r2", make_meta(run, batch_size=2))
    assert invoke("ingest", tmp_path / "r1", "--db", link).exit_code == 0
    target = data / "w.duckdb"
    assert link.is_symlink() and target.is_file() and (data / ".w.duckdb.lock").exists()
    os.chmod(target, 0o600)
    groups = sorted({g for g in os.getgroups() if g != os.stat(target).st_gid} or {os.stat(target).st_gid})
    os.chown(target, -1, groups[0])
    r = invoke("ingest", tmp_path / "r2", "--db", link)
    assert r.exit_code == 0, r.output
    st = os.stat(target)
    assert link.is_symlink() and os.readlink(link) == str(Path("..") / "data" / "w.duckdb")
    assert stat.S_IMODE(st.st_mode) == 0o600 and st.st_gid == groups[0]
    con = duckdb.connect(str(target), read_only=True)
    assert con.execute("SELECT count(*) FROM results").fetchone() == (2,)
    con.close()

"""A warehouse is portable and fails loudly: its file and samples folder, copied or moved
together (read-only too, to another path), read with no write through benchdb and through a plain
DuckDB connection from any working directory; a connection open across two compactions without a
lease gets an error, not zero rows; parts take the warehouse's mode; a full disk or an unwritable ``--out`` is one
line, and a failed write leaves no copy behind. Real DuckDB files, real Parquet, the real command
line; a full disk is a real small tmpfs where one can be mounted."""

from __future__ import annotations

import errno
import hashlib
import os
import shutil
import stat
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import duckdb
import pytest
from conftest import benchdb_cmd, make_run, write_suite

from benchdb.ingest import ingest
from benchdb.store import parts
from benchdb.warehouse import Warehouse

pytestmark = pytest.mark.core

_PLAIN = (
    "import duckdb, sys\n"
    "con = duckdb.connect(sys.argv[1], read_only=True)\n"
    "print(con.execute('SELECT count(*) FROM samples').fetchall()[0][0])\n"
)


def _warehouse(db: Path, batches: int = 2, n_values: int = 100) -> int:
    """Ingest ``batches`` runs (one generation each) of two files; the number of samples."""
    for i in range(batches):
        write_suite(db.parent / f"in{i}", n_files=2, n_values=n_values, run=make_run())
        ingest([db.parent / f"in{i}"], db)
    return batches * 2 * n_values


def _plain_count(db: str, cwd: Path) -> int:
    """The analysts' one line, in a process of its own started in ``cwd``."""
    r = subprocess.run([sys.executable, "-c", _PLAIN, db], cwd=cwd, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return int(r.stdout)


def _tree(folder: Path) -> dict[str, tuple[int, int, str]]:
    """Every file under ``folder``: size, mtime and content hash (what a write would change); the
    writers' lock file aside (a writer records its PID there)."""
    return {
        str(p.relative_to(folder)): (p.stat().st_size, p.stat().st_mtime_ns, hashlib.sha256(p.read_bytes()).hexdigest())
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.name.endswith(".lock")
    }


def _mount(*args: str) -> bool:
    return (
        os.environ.get("BENCHDB_TEST_NO_MOUNT") is None
        and subprocess.run(["mount", *args], capture_output=True).returncode == 0
    )


@contextmanager
def _read_only(folder: Path):
    """``folder`` made read-only: a read-only bind mount where this user may mount (root cannot
    write there either), else every file and folder without write permission."""
    if _mount("--bind", str(folder), str(folder)):
        try:
            assert _mount("-o", "remount,ro,bind", str(folder))
            yield
        finally:
            subprocess.run(["umount", str(folder)], check=True)
        return
    modes = {p: stat.S_IMODE(p.stat().st_mode) for p in [folder, *folder.rglob("*")]}
    for p, mode in modes.items():
        p.chmod(mode & ~0o222)
    try:
        yield
    finally:
        for p, mode in modes.items():
            p.chmod(mode)


@pytest.fixture
def small_disk(tmp_path):
    """A real 16 MiB file system (tmpfs): filling it gives real ENOSPC. Needs the right to mount."""
    disk = tmp_path / "disk"
    disk.mkdir()
    if not _mount("-t", "tmpfs", "-o", "size=16m", "tmpfs", str(disk)):
        pytest.skip("cannot mount a tmpfs here (needs root); test_a_write_error_... simulates the error")
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=True)


def _fill(disk: Path, leave: int) -> Path:
    """Fill ``disk`` but ``leave`` bytes."""
    filler = disk / "filler"
    with open(filler, "wb") as f:
        f.write(b"\0" * max(shutil.disk_usage(disk).free - leave, 0))
    return filler


# ---------------------------------------------------------------------------------------------- portable


def test_a_copied_read_only_warehouse_reads_elsewhere_with_no_write(tmp_path):
    """Copied under another name to another folder, the original gone, the copy read-only: benchdb
    and a plain DuckDB connection (from the copy's folder with a relative path, and from /) read it,
    and nothing in the copy changes."""
    db = tmp_path / "origin" / "w.duckdb"
    db.parent.mkdir()
    total = _warehouse(db)
    copy = tmp_path / "artifact" / "bench.duckdb"
    copy.parent.mkdir()
    shutil.copy2(db, copy)
    shutil.copytree(f"{db}.samples", f"{copy}.samples")
    shutil.rmtree(db.parent)  # nothing can be read from the old place
    before = _tree(copy.parent)
    with _read_only(copy.parent):
        r = benchdb_cmd("query", "SELECT count(*) FROM samples", "--db", str(copy))
        assert r.returncode == 0, r.stderr
        assert str(total) in r.stdout
        r = benchdb_cmd("report", "--matrix", "--format", "csv", "--db", str(copy))
        assert r.returncode == 0 and r.stderr == "", r.stderr
        with Warehouse(copy).reading() as con:  # the library's reader
            assert con.execute("SELECT count(*) FROM samples").fetchall() == [(total,)]
        assert _plain_count("bench.duckdb", cwd=copy.parent) == total
        assert _plain_count(str(copy), cwd=Path("/")) == total
    assert _tree(copy.parent) == before


def test_a_write_after_a_copy_goes_to_the_folder_beside_the_copy(tmp_path):
    db = tmp_path / "a" / "w.duckdb"
    db.parent.mkdir()
    total = _warehouse(db, batches=1)
    copy = tmp_path / "b" / "w.duckdb"
    copy.parent.mkdir()
    shutil.copy2(db, copy)
    shutil.copytree(f"{db}.samples", f"{copy}.samples")
    write_suite(tmp_path / "more", n_files=1, n_values=50, run=make_run())
    ingest([tmp_path / "more"], copy)
    assert _plain_count(str(copy), cwd=tmp_path) == total + 50
    assert _plain_count(str(db), cwd=tmp_path) == total  # the original is its own
    assert len(parts.on_disk(copy)) == 2 and len(parts.on_disk(db)) == 1


def test_a_connection_without_a_lease_open_across_two_compactions_gets_an_error_not_zero_rows(tmp_path):
    """Where no lease is kept (a file system without hard links, simulated by removing the kept
    catalogs; see :mod:`benchdb.store.leases`) the grace of one compaction is all there is."""
    db = tmp_path / "w.duckdb"
    total = _warehouse(db)
    plain = duckdb.connect(str(db), read_only=True)  # a notebook's connection
    try:
        with Warehouse(db).reading() as reader:
            assert plain.execute("SELECT count(*) FROM samples").fetchall() == [(total,)]
            benchdb_cmd("db", "compact", "--db", str(db), check=True)
            # across one compaction the replaced parts are still there
            assert plain.execute("SELECT count(*) FROM samples").fetchall() == [(total,)]
            write_suite(tmp_path / "late", n_files=1, n_values=50, run=make_run())
            ingest([tmp_path / "late"], db)
            kept = list(tmp_path.glob(".w.duckdb.read-*"))
            assert kept or not sys.platform.startswith("linux")
            for link in kept:
                link.unlink()
            benchdb_cmd("db", "compact", "--db", str(db), check=True)
            for con in (plain, reader):
                with pytest.raises(duckdb.IOException, match=r"No files found .*gen=0000000001"):
                    con.execute("SELECT count(*) FROM samples").fetchall()
    finally:
        plain.close()
    assert _plain_count(str(db), cwd=tmp_path) == total + 50  # a new connection reads all


def test_a_folder_from_another_moment_is_one_line(tmp_path):
    db = tmp_path / "w.duckdb"
    _warehouse(db)
    shutil.rmtree(tmp_path / "w.duckdb.samples" / parts.gen_name(1))
    r = benchdb_cmd("query", "SELECT count(*) FROM samples", "--db", str(db))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.strip() == (
        f"benchdb: error: the samples folder {tmp_path / 'w.duckdb.samples'} lacks "
        f"gen=0000000001, which database {db} reads (the folder is older or newer than "
        "the file): copy the file and its folder together, from the same moment"
    )


# ---------------------------------------------------------------------------------------------- modes


def test_parts_their_folders_and_the_writers_copy_take_the_warehouse_mode(tmp_path):
    db = tmp_path / "w.duckdb"
    _warehouse(db, batches=1)
    samples = tmp_path / "w.duckdb.samples"
    os.chmod(db, 0o640)
    group = 4242 if os.geteuid() == 0 else db.stat().st_gid  # only root may pick any group
    os.chown(db, -1, group)
    with Warehouse(db).writing():  # the catalog copy a write session works on is private
        (writing,) = tmp_path.glob(".w.duckdb.*.writing")
        assert stat.S_IMODE(writing.stat().st_mode) == 0o600
    write_suite(tmp_path / "more", n_files=1, n_values=50, run=make_run())
    ingest([tmp_path / "more"], db)
    benchdb_cmd("db", "compact", "--db", str(db), check=True)  # compacted parts too
    made = [samples, samples / "gen=0000000002", samples / "gen=0000000003"]
    for folder in made:
        st = folder.stat()
        assert (oct(stat.S_IMODE(st.st_mode)), st.st_gid) == (oct(0o750), group), folder
    new = [p for p in parts.on_disk(db) if p.parent in made]
    assert len(new) == 2
    for part in new:
        st = part.stat()
        assert (oct(stat.S_IMODE(st.st_mode)), st.st_gid) == (oct(0o640), group), part
    st = db.stat()
    assert (stat.S_IMODE(st.st_mode), st.st_gid) == (0o640, group)  # the published file kept them


# ---------------------------------------------------------------------------------------------- write errors


def _one_line(r: subprocess.CompletedProcess, start: str) -> str:
    """The error line of a command that failed as a user's error (after any progress lines)."""
    assert r.returncode == 2, (r.returncode, r.stderr)
    lines = [line for line in r.stderr.strip().splitlines() if line.startswith("benchdb:")]
    assert len(lines) == 1 and lines[0].startswith(start) and r.stderr.strip().endswith(lines[0]), r.stderr
    assert "internal error" not in r.stderr and "Traceback" not in r.stderr
    return lines[0]


@pytest.mark.parametrize("leave_kib", [0, 1024])  # the catalog copy fails; the copy fits, then a write fails
def test_a_full_disk_during_an_ingest_is_one_line_and_leaves_nothing(small_disk, tmp_path, leave_kib):
    db = small_disk / "w.duckdb"
    write_suite(tmp_path / "a", n_files=1, n_values=50)
    benchdb_cmd("ingest", str(tmp_path / "a"), "--db", str(db), check=True)
    write_suite(tmp_path / "b", n_files=3, n_values=20000, run=make_run())
    filler = _fill(small_disk, db.stat().st_size + leave_kib * 1024)
    before = _tree(small_disk)
    r = benchdb_cmd("ingest", str(tmp_path / "b"), "--db", str(db))
    line = _one_line(r, f"benchdb: error: cannot write database {db}: ")
    assert "No space left on device" in line and "nothing was changed" in line
    assert _tree(small_disk) == before  # no .writing copy, no generation, the warehouse as it was
    filler.unlink()
    benchdb_cmd("ingest", str(tmp_path / "b"), "--db", str(db), check=True)
    assert _plain_count(str(db), cwd=tmp_path) == 50 + 3 * 20000


def test_a_full_disk_during_a_run_is_one_line(small_disk):
    _fill(small_disk, 0)
    r = benchdb_cmd("run", "--backend", "numpy", "--model", "matmul:8", "--out", str(small_disk / "results"))
    line = _one_line(r, "benchdb: error: ")
    assert "No space left on device" in line and str(small_disk / "results") in line


def test_a_write_error_is_one_line_and_leaves_no_copy_simulated(tmp_path, monkeypatch):
    """Where no tmpfs can be mounted (not root): the same promise with the copy's write failing as a
    full disk fails it. Skipped where the real one runs (test_a_full_disk_during_an_ingest_...)."""
    probe = tmp_path / "probe"
    probe.mkdir()
    if _mount("-t", "tmpfs", "-o", "size=1m", "tmpfs", str(probe)):
        subprocess.run(["umount", str(probe)], check=True)
        pytest.skip("a real full disk is tested here (test_a_full_disk_during_an_ingest_...)")
    from click.testing import CliRunner

    from benchdb.cli import main

    db = tmp_path / "w.duckdb"
    _warehouse(db, batches=1)
    write_suite(tmp_path / "b", n_files=1, n_values=50, run=make_run())
    before = _tree(tmp_path)

    def full(src, dst, length=0):
        dst.write(src.read(4096))  # a part of it reached the disk
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), dst.name)

    monkeypatch.setattr(shutil, "copyfileobj", full)
    r = CliRunner().invoke(main, ["ingest", str(tmp_path / "b"), "--db", str(db)])
    assert r.exit_code == 2, r.output
    assert f"cannot write database {db}: " in r.output and "No space left on device" in r.output
    assert _tree(tmp_path) == before


@pytest.mark.parametrize("out", ["/proc/nope", "{tmp}/a-file/results"])
def test_an_out_folder_that_cannot_be_made_is_one_line_before_anything_runs(tmp_path, out):
    (tmp_path / "a-file").write_text("not a folder\n")
    out = out.format(tmp=tmp_path)
    r = benchdb_cmd("run", "--backend", "numpy", "--model", "matmul:8", "--out", out)
    line = _one_line(r, f"benchdb: error: --out {out}: cannot create the folder {out}/")
    assert line.endswith("give --out a folder you can write")

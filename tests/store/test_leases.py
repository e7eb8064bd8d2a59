"""Leases on generations (:mod:`benchdb.store.leases`): a write keeps the catalog it replaces while a
reader in another process holds it, and the next write after that reader closes lets it go."""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import benchdb_cmd, child, make_run, only_on_linux, write_suite

from benchdb.store import leases, parts

pytestmark = [pytest.mark.core, only_on_linux("leases ask Linux's OFD locks")]

_HOLD = (
    "import duckdb, sys\n"
    "con = duckdb.connect(sys.argv[1], read_only=True)\n"
    "print('open', flush=True)\n"
    "sys.stdin.read()\n"
)


def _reader(db):
    """A reader in another process holding the warehouse open until its standard input ends."""
    return child([sys.executable, "-c", _HOLD, str(db)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


def _ingest(db, folder) -> None:
    write_suite(folder, n_files=1, n_values=20, run=make_run())
    benchdb_cmd("ingest", str(folder), "--db", str(db), check=True)


def _gens(db) -> set[int]:
    return {g for g in (parts.gen_of(p.name) for p in parts.folder_for(db).iterdir()) if g is not None}


def test_a_replaced_catalog_is_kept_while_a_reader_holds_it(tmp_path):
    db = tmp_path / "w.duckdb"
    _ingest(db, tmp_path / "in0")
    with _reader(db) as reader:
        assert reader.stdout.readline().strip() == "open"
        _ingest(db, tmp_path / "in1")  # replaces the catalog the reader holds
        (kept,) = tmp_path.glob(".w.duckdb.read-*")
        assert kept.name.startswith(".w.duckdb.read-0000000001-0000000001-")
        assert leases.held(kept)
        _ingest(db, tmp_path / "in2")
        assert kept.exists() and leases.read_ranges(db) == [(1, 1)]
        reader.communicate("")
    assert not leases.held(kept)
    _ingest(db, tmp_path / "in3")  # the next write lets go of what nobody holds
    assert list(tmp_path.glob(".w.duckdb.read-*")) == []


def test_compaction_removes_only_a_prefix_of_generations_below_a_held_range(tmp_path):
    """A reader holds the catalog of generation 1 while generation 2 retires: removing 2 alone would
    leave a hole that a reader of [1, 2] which lost its lease skips silently (the view fails loudly
    only when its lowest generation is gone), so 2 stays as long as 1 does."""
    db = tmp_path / "w.duckdb"
    _ingest(db, tmp_path / "in0")  # generation 1
    with _reader(db) as reader:
        assert reader.stdout.readline().strip() == "open"
        _ingest(db, tmp_path / "in1")  # 2; the catalog of [1, 1] is kept, held
        benchdb_cmd("db", "compact", "--db", str(db), check=True)  # 3 reads [1, 2], which retire
        _ingest(db, tmp_path / "in2")  # 4
        benchdb_cmd("db", "compact", "--db", str(db), check=True)  # 5; what retired before 3 may go
        gens = _gens(db)
        assert 1 in gens and leases.read_ranges(db) == [(1, 1)]
        assert gens == set(range(1, max(gens) + 1)), f"a hole in {sorted(gens)}"
        reader.communicate("")


def test_a_kept_catalog_whose_lock_cannot_be_asked_about_is_treated_as_held(tmp_path):
    """Fail safe: a kept catalog that cannot be examined (here a link that loops, ELOOP) keeps the
    generations it names rather than letting them be removed under a reader."""
    db = tmp_path / "w.duckdb"
    _ingest(db, tmp_path / "in0")
    loop = tmp_path / ".w.duckdb.read-0000000001-0000000001-1"
    loop.symlink_to(loop.name)
    assert leases.read_ranges(db) == [(1, 1)]
    assert loop.is_symlink()

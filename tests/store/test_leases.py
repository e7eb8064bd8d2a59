"""Leases on generations (:mod:`benchdb.store.leases`): a write keeps the catalog it replaces while a
reader in another process holds it, and the next write after that reader closes lets it go."""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import benchdb_cmd, make_run, write_suite

from benchdb.store import leases

pytestmark = [
    pytest.mark.core,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="leases ask Linux's OFD locks"),
]

_HOLD = (
    "import duckdb, sys\n"
    "con = duckdb.connect(sys.argv[1], read_only=True)\n"
    "print('open', flush=True)\n"
    "sys.stdin.read()\n"
)


def _ingest(db, folder) -> None:
    write_suite(folder, n_files=1, n_values=20, run=make_run())
    benchdb_cmd("ingest", str(folder), "--db", str(db), check=True)


def test_a_replaced_catalog_is_kept_while_a_reader_holds_it(tmp_path):
    db = tmp_path / "w.duckdb"
    _ingest(db, tmp_path / "in0")
    reader = subprocess.Popen(
        [sys.executable, "-c", _HOLD, str(db)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert reader.stdout.readline().strip() == "open"
        _ingest(db, tmp_path / "in1")  # replaces the catalog the reader holds
        (kept,) = tmp_path.glob(".w.duckdb.read-*")
        assert kept.name.startswith(".w.duckdb.read-0000000001-0000000001-")
        assert leases.held(kept)
        _ingest(db, tmp_path / "in2")
        assert kept.exists() and leases.read_ranges(db) == [(1, 1)]
    finally:
        reader.communicate("")
    assert not leases.held(kept)
    _ingest(db, tmp_path / "in3")  # the next write lets go of what nobody holds
    assert list(tmp_path.glob(".w.duckdb.read-*")) == []

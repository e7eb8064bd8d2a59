"""Remote results mirrored into benchdb's cache (benchdb.ingest.mirror): a remote key that would leave
the mirror is refused, and a file whose content changed is fetched again even at the same size. A real
fsspec in-memory filesystem, real contract files."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import make_meta, make_run, need_module, write_file

from benchdb.errors import BenchdbError

pytestmark = pytest.mark.core


def test_mirror_refuses_traversal_and_refetches_changed_content(tmp_path, monkeypatch):
    fsspec = need_module("fsspec", "benchdb[spark]")
    from benchdb.ingest.mirror import mirror

    monkeypatch.setenv("BENCHDB_CACHE", str(tmp_path / "cache"))
    fs = fsspec.filesystem("memory")
    run = make_run()
    a = write_file(tmp_path / "src", make_meta(run, batch_size=1), np.full(20, 1e-3))
    b = write_file(tmp_path / "src", make_meta(run, batch_size=2), np.full(20, 2e-3))
    fs.pipe("/bucket29/r/x.parquet", a.read_bytes())
    local = mirror("memory://bucket29/r")
    assert (local / "x.parquet").read_bytes() == a.read_bytes()
    same_size = b.read_bytes()
    # other content of the very same size (a size check alone would miss it): fetched again
    assert len(same_size) == len(a.read_bytes()) and same_size != a.read_bytes()
    fs.pipe("/bucket29/r/x.parquet", same_size)
    assert (mirror("memory://bucket29/r") / "x.parquet").read_bytes() == same_size
    fs.pipe("/bucket29/r/../../escape.parquet", a.read_bytes())
    # the store keeps the key as written ("r/../../escape.parquet" under the folder): the mirror must refuse it
    assert [p for p in fs.find("/bucket29/r") if ".." in p], fs.find("/bucket29/r")
    with pytest.raises(BenchdbError, match="refusing remote key"):
        mirror("memory://bucket29/r")
    assert not list((tmp_path / "cache").rglob("escape.parquet"))
    assert not (tmp_path / "escape.parquet").exists()

"""benchdb.ingest.discover: which files an ingest reads under what it is given (folders walked,
hidden names and folders skipped, links followed to the file they name, fsspec URLs mirrored
first), what a file named on the command line must be, and the content hash files are known by."""

from __future__ import annotations

import hashlib

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import make_meta, make_run, need_module, write_file

from benchdb.errors import BenchdbError
from benchdb.ingest.discover import discover, sha256

pytestmark = pytest.mark.core


def test_folders_are_walked_for_parquet_files_hidden_ones_skipped(tmp_path):
    run = make_run()
    a = write_file(tmp_path / "res" / "day1", make_meta(run, batch_size=1), name="a.parquet")
    b = write_file(tmp_path / "res" / "day2", make_meta(run, batch_size=2), name="b.parquet")
    (tmp_path / "res" / "day1" / ".a.parquet.123.tmp").write_bytes(b"PAR1 partial")
    (tmp_path / "res" / "day1" / ".x.parquet").write_bytes(b"PAR1 partial")
    (tmp_path / "res" / "notes.txt").write_text("not a result")
    hidden = tmp_path / "res" / ".staging"
    hidden.mkdir()
    (hidden / "c.parquet").write_bytes(a.read_bytes())
    elsewhere = write_file(tmp_path / "elsewhere", make_meta(run, batch_size=3), name="c.parquet")
    (tmp_path / "res" / "linked.parquet").symlink_to(elsewhere)
    assert discover([tmp_path / "res"]) == sorted([a, b, elsewhere])
    # a file given itself, and the same file reached twice, count once
    assert discover([a, tmp_path / "res" / "day1"]) == [a]


def test_a_named_file_must_be_a_measurement_file(tmp_path):
    text = tmp_path / "afile"
    text.write_text("model,latency\nbert,0.1\n")
    with pytest.raises(BenchdbError, match=r"afile is not a Parquet file; give a results folder"):
        discover([text])
    plain = tmp_path / "data.parquet"
    pq.write_table(pa.table({"x": [1, 2]}), plain)
    with pytest.raises(BenchdbError, match=r"data.parquet is a Parquet file without benchdb's contract metadata"):
        discover([plain])
    with pytest.raises(BenchdbError, match=r"^path .*nowhere does not exist; give a results folder"):
        discover([tmp_path / "nowhere"])
    # inside a folder the same files are not judged here: the load rejects each with why
    assert discover([tmp_path]) == [plain]


def test_an_fsspec_url_is_mirrored_then_walked(tmp_path, monkeypatch):
    fsspec = need_module("fsspec", "benchdb[spark]")
    monkeypatch.setenv("BENCHDB_CACHE", str(tmp_path / "cache"))
    local = write_file(tmp_path / "res", make_meta(make_run()), name="r.parquet")
    fs = fsspec.filesystem("memory")
    fs.pipe("/bench-discover/runs/r.parquet", local.read_bytes())
    fs.pipe("/bench-discover/runs/.r.parquet.tmp", b"PAR1 partial")
    try:
        (found,) = discover(["memory://bench-discover"])
    finally:
        fs.rm("/bench-discover", recursive=True)
    assert found.name == "r.parquet" and found.is_relative_to(tmp_path / "cache")
    assert found.read_bytes() == local.read_bytes()


def test_a_file_is_known_by_its_sha256(tmp_path):
    path = tmp_path / "big.bin"
    data = bytes(range(256)) * 9000  # more than one read chunk
    path.write_bytes(data)
    assert sha256(path) == hashlib.sha256(data).hexdigest()

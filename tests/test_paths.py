"""Writing a file whole or not at all (benchdb.paths.atomic_path / write_atomic): readers see the old
file or the new one, and a failed write leaves neither a half file nor a temp file behind."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from benchdb.paths import atomic_path, write_atomic


def _leftovers(folder):
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def test_write_atomic_text_and_bytes(tmp_path):
    target = tmp_path / "out.json"
    assert write_atomic(target, "é\n") == target
    assert target.read_bytes() == "é\n".encode()
    write_atomic(str(target), b"\x00\x01")  # replaces, takes a str path too
    assert target.read_bytes() == b"\x00\x01"
    assert _leftovers(tmp_path) == []


def test_atomic_path_parquet(tmp_path):
    target = tmp_path / "t.parquet"
    table = pa.table({"x": [1, 2, 3]})
    with atomic_path(target) as tmp:
        assert tmp.parent == tmp_path and tmp.name.startswith(".") and tmp.name.endswith(".tmp")
        pq.write_table(table, tmp)
        assert not target.exists()  # nothing at the target until the block ends
    assert pq.read_table(target).equals(table)
    assert _leftovers(tmp_path) == []


def test_atomic_path_error_leaves_old_target_and_no_temp(tmp_path):
    target = tmp_path / "keep.txt"
    target.write_text("old", encoding="utf-8")
    with pytest.raises(RuntimeError, match="half way"), atomic_path(target) as tmp:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write("new, half")
        raise RuntimeError("half way")
    assert target.read_text(encoding="utf-8") == "old"
    assert _leftovers(tmp_path) == []


def test_atomic_path_error_before_any_target(tmp_path):
    target = tmp_path / "new.txt"
    with pytest.raises(KeyboardInterrupt), atomic_path(target) as tmp:
        tmp.write_text("partial", encoding="utf-8")
        raise KeyboardInterrupt
    assert list(tmp_path.iterdir()) == []


def test_write_atomic_failing_write_leaves_nothing(tmp_path):
    target = tmp_path / "t.txt"
    target.write_bytes(b"old")
    with pytest.raises(TypeError):
        write_atomic(target, 12)  # type: ignore[arg-type]
    assert target.read_bytes() == b"old"
    assert _leftovers(tmp_path) == []


def test_atomic_path_needs_the_folder(tmp_path):
    with pytest.raises(FileNotFoundError):
        write_atomic(tmp_path / "missing" / "f.txt", "x")
    assert list(tmp_path.iterdir()) == []


def test_a_name_from_data_is_a_safe_identifier_and_a_write_stays_inside_its_folder(tmp_path):
    """The last check before a file named from data is written: a symlink or '..' that leaves the
    folder is refused, and remote keys are compared normalised."""
    from benchdb.errors import BenchdbError
    from benchdb.paths import inside, is_safe_name

    assert [is_safe_name(n) for n in ("run-1.a_b", "..", ".hidden", "a/b", "", "x" * 129, 7)] == [True] + [False] * 6
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "away").symlink_to(tmp_path)
    assert inside(tmp_path / "out", tmp_path / "out" / "r" / "f") == str(tmp_path / "out" / "r" / "f")
    for bad in (tmp_path / "out" / ".." / "f", tmp_path / "out" / "away" / "f"):
        with pytest.raises(BenchdbError, match="lies outside"):
            inside(tmp_path / "out", bad)
    assert inside("s3://b/site", "s3://b/site/./runs/x", local=False) == "s3:/b/site/runs/x"
    with pytest.raises(BenchdbError, match="lies outside"):
        inside("s3://b/site", "s3://b/site-2/x", local=False)

"""The shared helpers: sql.rows (a cursor's rows as dicts) and paths.atomic_path / write_atomic."""

from __future__ import annotations

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from benchdb import sql
from benchdb.paths import atomic_path, write_atomic


def test_rows_keys_in_column_order_and_values():
    con = duckdb.connect()
    cur = con.execute("SELECT 2 AS b, 'x' AS a, NULL AS c UNION ALL SELECT 3, 'y', 1.5 ORDER BY b")
    got = sql.rows(cur)
    assert got == [{"b": 2, "a": "x", "c": None}, {"b": 3, "a": "y", "c": 1.5}]
    assert [list(r) for r in got] == [["b", "a", "c"]] * 2


def test_rows_of_empty_result_and_bound_parameters():
    con = duckdb.connect()
    assert sql.rows(con.execute("SELECT 1 AS one WHERE false")) == []
    assert sql.rows(con.execute("SELECT $v AS v", {"v": 7})) == [{"v": 7}]


def test_rows_takes_what_is_left_to_fetch():
    con = duckdb.connect()
    cur = con.execute("SELECT range AS i FROM range(3)")
    assert cur.fetchone() == (0,)
    assert sql.rows(cur) == [{"i": 1}, {"i": 2}]


def test_rows_matches_the_idiom_it_replaces():
    con = duckdb.connect()
    query = "SELECT range AS n, range * 2.5 AS half, 'r' || range AS name FROM range(5)"
    cur = con.execute(query)
    cols = [d[0] for d in cur.description]
    expected = [dict(zip(cols, r, strict=True)) for r in cur.fetchall()]
    assert sql.rows(con.execute(query)) == expected


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

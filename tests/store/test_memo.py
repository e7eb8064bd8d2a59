"""Answers of `report` and `check` kept per state of the warehouse (benchdb.store.memo): the
same answer again without starting DuckDB, a new answer after any write, and never an error of its own.

Real contract files, a real DuckDB warehouse, the real command line (subprocesses for what a
command imports, click's CliRunner otherwise)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import ENGINE, imported_modules, make_meta, make_run, write_file

from benchdb.cli import main
from benchdb.startup import duckdb
from benchdb.store import memo
from benchdb.warehouse import Warehouse

pytestmark = pytest.mark.core


def _warehouse(tmp_path: Path, runs=("a", "b")) -> Path:
    res, db = tmp_path / "r", tmp_path / "w.duckdb"
    res.mkdir(exist_ok=True)
    for i, label in enumerate(runs):
        run = make_run(started_at=f"2026-11-0{i + 1}T10:00:00+00:00")
        for bs in (1, 2):
            write_file(res, make_meta(run, batch_size=bs), name=f"{label}{bs}.parquet")
    Warehouse(db).ingest([res])
    return db


@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    d = tmp_path / "answers"
    monkeypatch.setenv("BENCHDB_ANSWERS_DIR", str(d))
    return d


def _cli(*args):
    return CliRunner().invoke(main, list(args))


def test_second_report_answers_from_the_cache_without_the_engine(tmp_path, cache):
    db = _warehouse(tmp_path)
    args = ("report", "--optimal-hardware", "--format", "json", "--db", str(db))
    assert ENGINE in imported_modules(*args)  # computed: DuckDB ran the queries
    assert len(list(cache.glob("report-*.pickle"))) == 1
    mods = imported_modules(*args)
    assert ENGINE not in mods and "numpy" not in mods  # answered from the cache: no engine started
    first, again = _cli(*args), _cli(*args)
    assert first.exit_code == again.exit_code == 0
    assert first.output == again.output and '"model_id": "matmul:64"' in first.output
    assert oct(cache.stat().st_mode & 0o777) == "0o700"


def test_a_write_gives_a_new_answer(tmp_path, cache):
    db = _warehouse(tmp_path)
    args = ("report", "--optimal-hardware", "--format", "json", "--db", str(db))
    before = _cli(*args).output
    run = make_run(started_at="2026-11-05T10:00:00+00:00")
    write_file(tmp_path / "r", make_meta(run, model_id="matmul:128", input_shape="n=128"), name="c.parquet")
    Warehouse(db).ingest([tmp_path / "r"])  # benchdb's writer: a new file
    after = _cli(*args).output
    assert "matmul:128" in after and "matmul:128" not in before
    # another program writing the file in place (no benchdb writer) is a new state too
    con = duckdb.connect(str(db))
    con.execute("UPDATE results SET model_id = 'renamed' WHERE model_id = 'matmul:128'")
    con.close()
    assert "renamed" in _cli(*args).output
    assert len(list(cache.glob("report-*.pickle"))) == 3


def test_check_keeps_its_verdicts_and_its_errors(tmp_path, cache):
    db = _warehouse(tmp_path)
    nothing = ("check", "--baseline", "run:nope", "--candidate", "latest", "--db", str(db))
    r1, r2 = _cli(*nothing), _cli(*nothing)
    assert r1.exit_code == r2.exit_code == 2 and r1.output == r2.output and "matches no run" in r1.output
    assert len(list(cache.glob("check-*.pickle"))) == 1  # a selector matching nothing: kept too
    gate = ("check", "--baseline", "latest~1", "--candidate", "latest", "--format", "json", "--db", str(db))
    g1, g2 = _cli(*gate), _cli(*gate)
    assert g1.exit_code == g2.exit_code and g1.output == g2.output and '"verdict"' in g1.output
    other = _cli(*gate, "--threshold", "50%")
    assert '"threshold": 0.5' in other.output  # other options: another answer


def test_an_answer_is_kept_per_state_kind_and_options(tmp_path, cache, monkeypatch):
    """memo.answer itself: computed once per (warehouse state, kind, options), computed anew when the
    file changes, never kept for a file that does not exist, and at most KEEP answers kept."""
    db = tmp_path / "w.duckdb"
    db.write_bytes(b"state one")
    calls: list[str] = []

    def compute(tag: str):
        return lambda: calls.append(tag) or {"answer": tag, "n": len(calls)}

    assert memo.answer(db, "report", {"a": 1}, compute("first")) == {"answer": "first", "n": 1}
    assert memo.answer(db, "report", {"a": 1}, compute("again")) == {"answer": "first", "n": 1}
    assert memo.answer(db, "report", {"a": 2}, compute("options")) == {"answer": "options", "n": 2}
    assert memo.answer(db, "check", {"a": 1}, compute("kind")) == {"answer": "kind", "n": 3}
    db.write_bytes(b"state two, longer")
    assert memo.answer(db, "report", {"a": 1}, compute("changed")) == {"answer": "changed", "n": 4}
    assert memo.answer(tmp_path / "absent.duckdb", "report", {}, compute("no file"))["answer"] == "no file"
    assert memo.answer(tmp_path / "absent.duckdb", "report", {}, compute("still none"))["answer"] == "still none"
    kept = sorted(p.name.split("-")[0] for p in cache.iterdir())
    assert kept == ["check", "report", "report", "report"]
    assert all(p.stat().st_mode & 0o777 == 0o600 for p in cache.iterdir())
    monkeypatch.setattr(memo, "KEEP", 2)
    memo.answer(db, "report", {"a": 3}, compute("trims"))
    assert len(list(cache.iterdir())) == 2


def test_open_ended_time_selector_is_never_kept(tmp_path, cache):
    db = _warehouse(tmp_path)
    _cli("check", "--baseline", "time:..2026-11-01T12:00", "--candidate", "time:2026-11-02..", "--db", str(db))
    assert not list(cache.glob("check-*.pickle"))


def test_no_cache_and_unusable_or_corrupt_caches_compute(tmp_path, cache, monkeypatch):
    db = _warehouse(tmp_path)
    args = ("report", "--optimal-hardware", "--format", "json", "--db", str(db))

    def kept_files():
        return sorted(p.name for p in cache.iterdir()) if cache.exists() else []

    before = kept_files()  # (the ingest may have kept the blank catalog a new warehouse starts from)
    monkeypatch.setenv("BENCHDB_NO_CACHE", "1")
    assert ENGINE in imported_modules(*args) and kept_files() == before  # nothing written to it
    monkeypatch.delenv("BENCHDB_NO_CACHE")
    expected = _cli(*args).output
    (kept,) = cache.glob("report-*.pickle")
    kept.write_bytes(b"not a pickle")  # a damaged answer: computed again, replaced
    assert _cli(*args).output == expected and kept.read_bytes() != b"not a pickle"
    os.chmod(cache, 0o777)  # a folder others may write: not trusted
    kept.write_bytes(b"not a pickle")
    assert ENGINE in imported_modules(*args)
    assert _cli(*args).output == expected and kept.read_bytes() == b"not a pickle"


def test_an_edit_anywhere_in_the_package_changes_the_code_digest(tmp_path):
    """A report template or query edited in a checkout must not be answered from the older code's
    cache: the digest covers every file of benchdb/, not only the cache's own folder. The edit is made
    to a copy of the package: touching the checkout's own file changed the digest under the tests that
    run beside this one, and a report they expected from the cache was computed again."""
    import shutil
    import subprocess
    import sys

    import benchdb

    copy = tmp_path / "benchdb"
    shutil.copytree(Path(benchdb.__file__).parent, copy, ignore=shutil.ignore_patterns("__pycache__"))
    code = "import benchdb; from benchdb.store import memo; print(benchdb.__file__, memo.code_digest())"

    def digest() -> str:
        # run beside the copy: `-c` puts the working directory first on sys.path
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path)
        where, value = out.stdout.split()
        assert Path(where).parent == copy  # the copy was imported, not the checkout
        return value

    template = copy / "reports" / "templates" / "report.md.j2"
    before = digest()
    st = template.stat()
    os.utime(template, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    assert digest() != before


def test_a_state_that_passed_the_catalog_check_is_not_checked_again_and_an_edit_is_still_refused(tmp_path, cache):
    """The catalog check (stored views and macros against benchdb's) is kept per state of the file,
    from the write that published it or the first open that checked it: a later open of an unchanged
    warehouse skips it; an edit in place, by a program that is not
    benchdb, is a new state and is refused although the state before it passed."""
    from benchdb.errors import BenchdbError
    from benchdb.store import database

    db = _warehouse(tmp_path, runs=("a",))
    before = memo.state(db)
    # benchdb's write checked the catalog it published: the first reader of that state need not
    assert memo.passed(db, "catalog", before)
    assert [p.suffix for p in cache.iterdir() if p.name.startswith("catalog-")] == [".passed"]
    for p in cache.glob("catalog-*.passed"):
        p.unlink()
    assert not memo.passed(db, "catalog", before)
    con, _ = database.open_readonly(db)
    con.close()
    assert memo.passed(db, "catalog", before)
    assert [p.suffix for p in cache.iterdir() if p.name.startswith("catalog-")] == [".passed"]
    # the record speaks for that state only: a state taken before the file changed is not vouched for
    os.utime(db)
    assert not memo.passed(db, "catalog", before)

    raw = duckdb.connect(str(db))
    raw.execute("CREATE OR REPLACE MACRO bdb_pct_min_n(q) AS 1")
    raw.close()
    with pytest.raises(BenchdbError, match="bdb_pct_min_n differs"):
        database.open_readonly(db)
    assert not memo.passed(db, "catalog", memo.state(db))
    # a record another user could have planted (not private) vouches for nothing
    (tmp_path / "good").mkdir()
    good = _warehouse(tmp_path / "good", runs=("a",))
    con, _ = database.open_readonly(good)
    con.close()
    assert memo.passed(good, "catalog", memo.state(good))
    for p in cache.iterdir():
        p.chmod(0o666)
    assert not memo.passed(good, "catalog", memo.state(good))

"""What every format of `benchdb import` shares (benchdb/interop/__init__.py): the files of a format
found in folders, a bad file costing only itself, and the same files imported again adding nothing.
Each format's own figures are checked in tests/interop/test_<its module>.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import cli, import_and_ingest
from conftest import db_rows as rows

from benchdb.interop import import_files
from benchdb.interop.writer import SourceError
from benchdb.schema import contract

pytestmark = pytest.mark.core

FIX = Path(__file__).parents[1] / "fixtures" / "interop"


def test_importing_the_same_files_again_adds_nothing(tmp_path):
    db = import_and_ingest(tmp_path, "pytest-benchmark", FIX / "pytest_benchmark" / "pytest_benchmark.json")
    r = cli(
        "import", "pytest-benchmark", FIX / "pytest_benchmark" / "pytest_benchmark.json", "--out", tmp_path / "imported"
    )
    assert r.exit_code == 0
    r = cli("ingest", tmp_path / "imported", "--db", db)
    assert r.exit_code == 0, r.output
    assert rows(db, "SELECT count(*) AS n FROM results") == [{"n": 3}]


def test_a_bad_file_costs_only_itself_and_an_unknown_format_is_refused(tmp_path):
    good = FIX / "pytest_benchmark" / "pytest_benchmark.json"
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "broken.json").write_text('{"benchmarks": [')
    (folder / "empty.json").write_text('{"machine_info": {}, "benchmarks": []}')
    summary = import_files("pytest-benchmark", [str(good), str(folder)], tmp_path / "out")
    assert summary.imported == [(good, 3)] and len(summary.written) == 3
    assert {contract.read_footer(p).scenario["source"]["format"] for p in summary.written} == {"pytest-benchmark"}
    failed = dict(summary.failed)
    assert set(failed) == {folder / "broken.json", folder / "empty.json"}
    assert failed[folder / "broken.json"].endswith("(the file looks truncated)")
    assert failed[folder / "empty.json"] == "no results in it (is it a pytest-benchmark file?)"
    with pytest.raises(SourceError, match="unknown format 'nosuch'; choose one of optimum-benchmark, "):
        import_files("nosuch", [str(good)], tmp_path / "out")
    with pytest.raises(SourceError, match="no such file or folder"):
        import_files("pytest-benchmark", [str(tmp_path / "none")], tmp_path / "out")

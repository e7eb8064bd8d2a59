"""What every format of `benchdb import` shares (benchdb/interop/__init__.py): the files of a format
found in folders, a bad file costing only itself, and the same files imported again adding nothing;
and each format registered once (benchdb/interop/formats.py). Each format's own figures are checked
in tests/interop/test_<its module>.py."""

from __future__ import annotations

import ast
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


def _literal_collections(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            yield node.elts
        elif isinstance(node, ast.Dict):
            yield [k for k in node.keys if k is not None]


def test_every_format_module_is_registered_once():
    """A module that reads a format (``parse`` or ``import_paths``) is in the registry, and every
    entry's module reads: the command line, the recorded source and the module come from one line."""
    from benchdb.interop import formats, module

    root = Path(formats.__file__).parent
    readers = set()
    for path in root.rglob("*.py"):
        defined = {n.name for n in ast.parse(path.read_text(encoding="utf-8")).body if isinstance(n, ast.FunctionDef)}
        if defined & {"parse", "import_paths"}:
            readers.add(".".join(path.relative_to(root).with_suffix("").parts))
    assert readers == {i.module for i in formats.IMPORTERS}
    for entry in formats.IMPORTERS:
        mod = module(entry.name)
        assert hasattr(mod, "import_paths") or (mod.FILES and callable(mod.parse)), entry.name
    for table in (formats.IMPORTERS, formats.EXPORTERS):
        assert len({e.name for e in table}) == len(table)
    assert len({i.source for i in formats.IMPORTERS}) == len(formats.IMPORTERS)


def test_no_second_list_of_the_formats():
    """Outside the registry no module spells out several format names together (a second list the
    registry would not keep in step), and one module alone defines a ``FORMATS``."""
    from benchdb.interop import formats

    names = set(formats.import_names()) | set(formats.export_names())
    package = Path(formats.__file__).parents[1]
    lists, defining = [], []
    for path in sorted(package.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if "FORMATS" not in text and sum(f'"{n}"' in text for n in names) < 3:
            continue  # nothing to look at closer
        tree = ast.parse(text)
        where = str(path.relative_to(package.parent))
        if any(
            isinstance(t, ast.Name) and t.id == "FORMATS"
            for n in tree.body
            if isinstance(n, ast.Assign)
            for t in n.targets
        ):
            defining.append(where)
        if path == Path(formats.__file__):
            continue
        for elts in _literal_collections(tree):
            spelled = {e.value for e in elts if isinstance(e, ast.Constant)} & names
            if len(spelled) >= 3:
                lists.append(f"{where}:{elts[0].lineno}: {sorted(spelled)}")
    assert lists == []
    assert len(defining) <= 1, defining

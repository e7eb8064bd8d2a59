"""benchdb.backends.userbench.discovery: the benches a spec names (a folder's ``bench_*.py`` files,
a file, or ``FILE::FUNCTION``), each file imported once per process under a private name, its
``bench_*`` functions in definition order."""

from __future__ import annotations

import pytest
from support.user_benches import bench_folder, write

from benchdb.backends.userbench import discovery
from benchdb.errors import BenchdbError


@pytest.fixture
def benches(tmp_path):
    """A folder of bench files: two found by name, one explicit-only, hidden and tool folders."""
    return bench_folder(tmp_path)


def test_discovery_finds_bench_files_and_functions_in_definition_order(benches):
    found = [(p.relative_to(benches).as_posix(), name) for p, name in discovery.discover(str(benches))]
    assert found == [("bench_a.py", "bench_zeta"), ("bench_a.py", "bench_alpha"), ("sub/bench_b.py", "bench_b")]
    # any .py file given explicitly, and FILE::FUNCTION for one bench
    assert [n for _, n in discovery.discover(str(benches / "other.py"))] == ["bench_other"]
    assert [n for _, n in discovery.discover(f"{benches / 'bench_a.py'}::bench_alpha")] == ["bench_alpha"]
    assert all(p.is_absolute() for p, _ in discovery.discover(str(benches)))


def test_a_bench_file_is_imported_once_under_a_private_name(tmp_path):
    """Two files of the same name in two folders are two modules, neither importable by its own name;
    a file asked for again is the module already imported, not a second run of its code."""
    a = write(tmp_path / "a" / "bench_same.py", "RUNS = []\nRUNS.append(1)\n\ndef bench_x():\n    return 1\n")
    b = write(tmp_path / "b" / "bench_same.py", "def bench_y():\n    return 2\n")
    first = discovery.load_module(a)
    assert discovery.load_module(tmp_path / "a" / ".." / "a" / "bench_same.py") is first and first.RUNS == [1]
    other = discovery.load_module(b)
    assert other is not first and first.__name__ != other.__name__
    assert first.__name__.startswith("_benchdb_bench_bench_same_")
    assert discovery.model_id(a, "bench_x") == "bench_same::bench_x"
    assert discovery.split_spec(f"{a}::bench_x") == (str(a), "bench_x")


def test_a_spec_that_names_no_bench_is_one_line(tmp_path):
    write(tmp_path / "bench_ok.py", "def bench_one():\n    return 1\n")
    write(tmp_path / "bench_broken.py", "def bench_two(:\n")
    write(tmp_path / "empty" / "notes.py", "x = 1\n")
    (tmp_path / "data.txt").write_text("x")
    for spec, message in (
        (f"{tmp_path}/nowhere", f"bench path {tmp_path}/nowhere does not exist"),
        (f"{tmp_path}::bench_one", f"bench {tmp_path}::bench_one: {tmp_path} is a folder; FILE::FUNCTION needs"),
        (f"{tmp_path}/empty", f"bench folder {tmp_path}/empty has no bench_*.py files"),
        (f"{tmp_path}/data.txt", f"bench file {tmp_path}/data.txt is not a .py file"),
        (f"{tmp_path}/bench_ok.py::bench_two", f"bench file {tmp_path}/bench_ok.py has no bench 'bench_two'; it has"),
        (f"{tmp_path}/bench_broken.py", f"bench file {tmp_path}/bench_broken.py could not be imported: SyntaxError"),
    ):
        with pytest.raises(BenchdbError) as err:
            discovery.discover(spec)
        assert str(err.value).startswith(message) and "\n" not in str(err.value), str(err.value)

"""The bounded reader every document goes through: size, depth, YAML anchors and aliases, CSV fields,
long lines and links out of a tree each end in one DocumentError naming the file and the limit."""

from __future__ import annotations

import csv
import os

import pytest
import yaml

from benchdb.errors import BenchdbError
from benchdb.schema import documents
from benchdb.schema.documents import DocumentError

pytestmark = pytest.mark.core

LAUGHS = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"{b}: &{b} [{', '.join([f'*{a}'] * 9)}]\n" for a, b in zip("abcdefgh", "bcdefghi", strict=True)
)


def write(tmp_path, name: str, text: str):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_yaml_anchors_and_aliases_are_refused_with_their_line(tmp_path):
    bomb = write(tmp_path, "bomb.yaml", LAUGHS)
    with pytest.raises(DocumentError) as err:
        documents.read_document(bomb)
    assert str(err.value).startswith(f"{bomb}: using a YAML anchor or alias &a at line 1")
    assert isinstance(err.value, BenchdbError) and err.value.path == bomb
    lone = write(tmp_path, "alias.yaml", "x: 1\ny: *nowhere\n")
    with pytest.raises(DocumentError, match=r"alias \*nowhere at line 2"):
        documents.read_document(lone)


@pytest.mark.parametrize(
    "text",
    [
        "runs: " + "[" * 5_000 + "]" * 5_000,  # flow lists
        "x:\n" + "".join(" " * i + "- \n" for i in range(1, 300)),  # block lists, one level a line
        "[" * 101 + "]" * 101,  # one past the cap
    ],
)
@pytest.mark.parametrize("libyaml", [True, False])  # libyaml's quick check first, or PyYAML's loader alone
def test_yaml_nested_past_the_cap_is_refused(tmp_path, monkeypatch, text, libyaml):
    monkeypatch.setattr(yaml, "__with_libyaml__", libyaml and yaml.__with_libyaml__)
    with pytest.raises(DocumentError, match="nested more than 100 levels deep"):
        documents.read_document(write(tmp_path, "deep.yaml", text))


def test_the_depth_cap_admits_what_real_files_nest():
    assert documents.parse_yaml("[" * 100 + "]" * 100, "ok.yaml") is not None
    assert documents.parse_json("[" * 100 + "]" * 100, "ok.json") is not None


@pytest.mark.parametrize("depth", [101, 900, 100_000])  # 900: past the cap, within json's own recursion
def test_json_nested_past_the_cap_is_refused(tmp_path, depth):
    deep = write(tmp_path, "deep.json", '{"a": ' * depth + "1" + "}" * depth)
    with pytest.raises(DocumentError, match="nested more than 100 levels deep"):
        documents.read_document(deep)


@pytest.mark.parametrize(
    ("name", "text", "words"),
    [
        ("bad.json", '{"a": 1,', "not valid JSON: line 1, column 9: Expecting property name"),
        ("bad.yaml", "a: [1, 2\n", "not valid YAML: line 2, column 1: expected ',' or ']'"),
        ("big.yaml", "a: " + "9" * 5_000, "not readable YAML (Exceeds the limit"),
        ("big.json", '{"a": ' + "9" * 5_000 + "}", "not readable JSON (Exceeds the limit"),
    ],
)
def test_unreadable_content_is_a_document_error(tmp_path, name, text, words):
    with pytest.raises(DocumentError) as err:
        documents.read_document(write(tmp_path, name, text))
    assert words in err.value.problem


def test_a_file_over_the_size_cap_is_refused_before_reading(tmp_path):
    sparse = tmp_path / "huge.yaml"
    with sparse.open("wb") as f:
        f.truncate(8 * 2**30)  # 8 GiB of nothing: refused by its size, none of it read
    with pytest.raises(DocumentError) as err:
        documents.read_document(sparse)
    assert err.value.problem.startswith("larger than the 1 MiB benchdb reads of such a file (8,192 MiB)")
    for read in (documents.read_lines, documents.read_csv):
        with pytest.raises(DocumentError, match="larger than the 256 MiB"):
            list(read(sparse, max_bytes=256 * 2**20))


def test_a_file_without_a_size_is_read_to_the_cap_and_no_further():
    with pytest.raises(DocumentError, match=r"larger than the 0\.1 MiB"):
        documents.read_bytes("/dev/zero", max_bytes=100_000)


def test_csv_fields_are_bounded_and_the_modules_limit_is_restored(tmp_path):
    table = write(tmp_path, "summary.csv", "Location,Accuracy\nclosed/a,1\nclosed/b," + "x" * 300_000 + "\n")
    before = csv.field_size_limit()
    with pytest.raises(DocumentError) as err:
        documents.read_csv(table, max_bytes=2**20)
    assert err.value.problem == "a CSV table with a field over 131,072 characters at line 3"
    assert csv.field_size_limit() == before
    assert len(documents.read_csv(table, max_bytes=2**20, field_limit=400_000)) == 2
    assert csv.field_size_limit() == before


def test_streamed_lines_skip_an_over_long_line(tmp_path):
    log = write(tmp_path, "log.txt", "first\n" + "y" * 5_000 + "\nlast")
    assert list(documents.read_lines(log, max_bytes=2**20, line_limit=100)) == ["first\n", "last"]


def test_a_link_out_of_the_tree_is_refused(tmp_path):
    tree, outside = tmp_path / "tree", tmp_path / "secret.json"
    (tree / "systems").mkdir(parents=True)
    outside.write_text('{"token": "x"}')
    (tree / "systems" / "a.json").symlink_to(outside)
    (tree / "real.json").write_text("{}")
    (tree / "systems" / "b.json").symlink_to(tree / "real.json")
    with pytest.raises(DocumentError, match=f"a link out of {tree}"):
        documents.read_document(tree / "systems" / "a.json", within=tree)
    assert documents.read_document(tree / "systems" / "b.json", within=tree) == {}
    (tmp_path / "elsewhere").mkdir()
    os.symlink(tmp_path / "elsewhere", tree / "linked")
    (tmp_path / "elsewhere" / "c.json").write_text("{}")
    with pytest.raises(DocumentError, match="a link out of"):
        documents.read_document(tree / "linked" / "c.json", within=tree)

"""The lists of files benchdb wrote into a folder: a site's marker and a Space's manifest, read the
same way by the site builder (which replaces only its own files) and the Space publisher (which
uploads only them)."""

from __future__ import annotations

import json

import pytest

from benchdb.file_lists import MARKER, all_files, file_list, listed_files

pytestmark = pytest.mark.core


def test_a_site_lists_its_files_and_anything_else_lists_none(tmp_path):
    (tmp_path / MARKER).write_text(json.dumps({"format": "benchdb-site", "files": ["index.html", "data/a.json", 3]}))
    assert listed_files(tmp_path) == ["index.html", "data/a.json"]  # a non-string entry is no file
    (tmp_path / MARKER).write_text(json.dumps({"format": "benchdb-space-manifest", "files": ["x"]}))
    assert listed_files(tmp_path) is None  # another list's format is not a site's
    (tmp_path / MARKER).write_text("{not json")
    assert listed_files(tmp_path) is None
    assert listed_files(tmp_path / "missing") is None


def test_a_list_of_another_shape_names_nothing(tmp_path):
    path = tmp_path / "manifest.json"
    for doc in ([], {"format": "m"}, {"format": "m", "files": "index.html"}):
        path.write_text(json.dumps(doc))
        assert file_list(path, "m") is None
    path.write_text(json.dumps({"format": "m", "files": []}))
    assert file_list(path, "m") == []


def test_every_file_and_link_under_a_folder_relative_and_sorted(tmp_path):
    (tmp_path / "data" / "trends").mkdir(parents=True)
    (tmp_path / "data" / "trends" / "0.json").write_text("{}")
    (tmp_path / "index.html").write_text("")
    elsewhere = tmp_path.parent / f"{tmp_path.name}-elsewhere"
    elsewhere.mkdir()
    (elsewhere / "secret.txt").write_text("")
    (tmp_path / "linked").symlink_to(elsewhere, target_is_directory=True)
    # a link to a folder is listed as itself, never followed into
    assert all_files(tmp_path) == ["data/trends/0.json", "index.html", "linked"]

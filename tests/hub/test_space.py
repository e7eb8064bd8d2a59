"""benchdb.hub.space: a site `benchdb site` wrote, planned and pushed to a static Space in one commit.
Only the files the site's marker lists are uploaded (never a dotfile or a link), only what an
earlier publish wrote is ever deleted, and a file of the Space no publish wrote is replaced only when
asked. Called directly against a local fake Hub; `benchdb publish --space` on a real site is
tests/hub/test_hub.py and tests/guarantees/test_safe_share.py."""

from __future__ import annotations

import json

import pytest
import yaml

from benchdb.errors import BenchdbError
from benchdb.hub import space

SPACE = "user/dash"


@pytest.fixture
def at_hub(hub, monkeypatch):
    monkeypatch.setenv("HF_ENDPOINT", hub.url)
    monkeypatch.setenv("HF_TOKEN", "hf_write")
    return hub


def _site(folder, files: dict[str, bytes], listed: list[str]):
    for rel, data in files.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_bytes(data)
    marker = {"format": "benchdb-site", "version": 1, "files": listed}
    (folder / ".benchdb-site.json").write_text(json.dumps(marker))
    return folder


def test_only_the_files_the_site_wrote_are_uploaded(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOKEN=hf_secret")
    site = _site(
        tmp_path / "site",
        {"index.html": b"<p>hi</p>", "data/runs.json": b"[]", ".env": b"HF_TOKEN=x", "extra.json": b"{}"},
        ["index.html", "data/runs.json", ".env", "static/leak.txt", "data/gone.json"],
    )
    (site / "static").mkdir()
    (site / "static" / "leak.txt").symlink_to(secret)
    files, ignored = space.site_files(site)
    assert sorted(files) == ["data/runs.json", "index.html"] and files["index.html"] == site / "index.html"
    assert ignored == [".env", "extra.json", "static/leak.txt"]
    (site / ".benchdb-site.json").unlink()
    with pytest.raises(BenchdbError, match=r"is not a site `benchdb site` wrote \(no readable .benchdb-site.json\)"):
        space.site_files(site)


def test_a_new_space_gets_the_site_a_static_card_and_the_manifest(at_hub, tmp_path):
    site = _site(tmp_path / "site", {"index.html": b"<p>hi</p>"}, ["index.html"])
    plan = space.plan(site, SPACE)
    assert (plan.exists, plan.parent, plan.deletions, plan.replaced) == (False, None, [], [])
    assert sorted(plan.uploads) == [space.MANIFEST, "README.md", "index.html"]
    front = yaml.safe_load(plan.uploads["README.md"].decode().split("---")[1])
    assert (front["sdk"], front["app_file"], front["title"]) == ("static", "index.html", "benchdb: dash")
    assert plan.lines() == [
        f"  + {space.MANIFEST} ({len(plan.uploads[space.MANIFEST]):,} bytes)",
        f"  + README.md ({len(plan.uploads['README.md']):,} bytes)",
        "  + index.html (9 bytes)",
    ]
    assert space.push(plan)
    repo = at_hub.repos[("space", SPACE)]
    assert repo.files["index.html"] == b"<p>hi</p>"
    assert json.loads(repo.files[space.MANIFEST])["files"] == ["README.md", "index.html"]


def test_a_later_publish_deletes_only_its_own_files_and_replaces_others_only_when_told(at_hub, tmp_path):
    own = {"app.py": b"x = 1\n", "index.html": b"<p>mine</p>", ".gitattributes": b"*.bin lfs\n"}
    repo = at_hub.add_repo("space", SPACE, own)
    site = _site(tmp_path / "site", {"index.html": b"<p>new</p>", "data/a.json": b"{}"}, ["index.html", "data/a.json"])
    plan = space.plan(site, SPACE)
    assert plan.exists and plan.replaced == ["index.html"] and plan.deletions == []
    assert "  + index.html (10 bytes)  (replaces a file no publish wrote)" in plan.lines()
    with pytest.raises(BenchdbError) as err:
        space.push(plan)
    assert str(err.value).startswith(
        "Space user/dash has 1 file(s) that no benchdb publish wrote and this one would replace: index.html; "
        "give --replace-existing"
    )
    assert len(repo.commits) == 1  # nothing sent
    space.push(plan, replace_existing=True)
    assert repo.files["index.html"] == b"<p>new</p>" and repo.files["app.py"] == own["app.py"]
    # the site drops a page: the next publish deletes it, and nothing it did not write
    (site / "data" / "a.json").unlink()
    (site / ".benchdb-site.json").write_text(json.dumps({"format": "benchdb-site", "files": ["index.html"]}))
    later = space.plan(site, SPACE)
    assert (later.deletions, later.replaced) == (["data/a.json"], [])
    space.push(later)
    assert "data/a.json" not in repo.files and repo.files["app.py"] == own["app.py"] and ".gitattributes" in repo.files

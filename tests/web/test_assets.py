"""The dashboard's charting library (benchdb.web.assets): the page's name for each pinned file, found in
benchdb's cache once fetched (nothing fetched again), and a tarball that is not the pinned release
refused in one line that says how to fetch it, leaving nothing in the cache. No network."""

from __future__ import annotations

import pytest

from benchdb.web import assets

pytestmark = pytest.mark.core


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("BENCHDB_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_the_pages_names_for_the_pinned_files_in_the_cache(cache):
    files = assets.files()
    assert sorted(files) == ["d3.LICENSE", "d3.min.js", "plot.LICENSE", "plot.umd.min.js"]
    assert files["d3.min.js"] == cache / "npm" / "d3" / "7.9.2" / "d3.min.js"
    assert files["plot.LICENSE"] == cache / "npm" / "@observablehq+plot" / "0.6.17" / "LICENSE"
    for path in files.values():  # as an earlier fetch left them
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(path.name)
    assert assets.ensure() == files  # nothing missing: nothing fetched


def test_a_tarball_that_is_not_the_pinned_release_is_refused(cache, tmp_path, capsys):
    other = tmp_path / "left-pad-1.3.0.tgz"
    other.write_bytes(b"x")
    assert assets.main(["--tarball", str(other)]) == 1
    assert f"error: {other} is neither @observablehq/plot@0.6.17 nor d3@7.9.2" in capsys.readouterr().err
    forged = tmp_path / "d3-7.9.2.tgz"
    forged.write_bytes(b"not the release")
    assert assets.main(["--tarball", str(forged)]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: d3 7.9.2 tarball {forged} does not match its registry integrity") and err.endswith(
        f"fetch it again with: {assets.INSTALL}"
    )
    assert list((cache / "npm" / "d3").iterdir()) == []  # no release, no half-written folder

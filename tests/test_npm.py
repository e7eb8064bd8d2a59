"""benchdb.npm: a pinned npm tarball's files land in place only when the tarball matches its pinned
integrity and holds every file as a regular file; anything else writes nothing. Real tarballs
written here (what ``npm pack`` writes: the files under ``package/``)."""

from __future__ import annotations

import base64
import hashlib
import io
import tarfile
from pathlib import Path

import pytest

from benchdb import npm
from benchdb.errors import BenchdbError

pytestmark = pytest.mark.core

FILES = {"dist/lib.min.js": b"export const x = 1;\n", "dist/lib.wasm": b"\0asm\1\0\0\0"}


def _tarball(path: Path, files: dict[str, bytes], folder: str | None = None, link: tuple | None = None) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for name, body in files.items():
            info = tarfile.TarInfo(f"package/{name}")
            info.size = len(body)
            tar.addfile(info, io.BytesIO(body))
        if folder:
            info = tarfile.TarInfo(f"package/{folder}")
            info.type = tarfile.DIRTYPE
            tar.addfile(info)
        if link:  # (name, where it points)
            info = tarfile.TarInfo(f"package/{link[0]}")
            info.type, info.linkname = tarfile.SYMTYPE, link[1]
            tar.addfile(info)
    return path


def _package(tarball: Path, names=tuple(FILES)) -> npm.Package:
    digest = base64.b64encode(hashlib.sha512(tarball.read_bytes()).digest()).decode()
    return npm.Package("@scope/lib", "1.2.3", f"sha512-{digest}", names, "1 kB")


def test_a_matching_tarball_puts_its_files_in_place(tmp_path):
    good = _tarball(tmp_path / "lib.tgz", FILES)
    pkg = _package(good)
    target = tmp_path / "cache" / "lib" / "1.2.3"
    assert npm.missing(pkg, target) == ["lib.min.js", "lib.wasm"]
    assert npm.install(pkg, target, good) == target
    assert {p.name: p.read_bytes() for p in target.iterdir()} == {
        "lib.min.js": FILES["dist/lib.min.js"],
        "lib.wasm": FILES["dist/lib.wasm"],
    }
    assert npm.missing(pkg, target) == []
    # nothing missing: no tarball is read (not even one that would fail)
    assert npm.install(pkg, target, tmp_path / "absent.tgz") == target
    assert sorted(p.name for p in target.parent.iterdir()) == ["1.2.3"]  # no staging folder left


def test_a_tarball_that_fails_its_integrity_or_lacks_a_file_writes_nothing(tmp_path):
    good = _tarball(tmp_path / "lib.tgz", FILES)
    pkg = _package(good)
    bad = _tarball(tmp_path / "bad.tgz", {**FILES, "dist/lib.wasm": b"other"})
    target = tmp_path / "cache" / "lib"
    with pytest.raises(BenchdbError) as err:
        npm.install(pkg, target, bad, hint="benchdb fetch")
    assert str(err.value) == (
        f"@scope/lib 1.2.3 tarball {bad} does not match its registry integrity "
        f"{pkg.integrity[:20]}...; fetch it again with: benchdb fetch"
    )
    short = _tarball(tmp_path / "short.tgz", {"dist/lib.min.js": FILES["dist/lib.min.js"]})
    with pytest.raises(ValueError, match=r"^@scope/lib 1.2.3 tarball lacks dist/lib.wasm$"):
        npm.install(_package(short), target, short, error=ValueError)
    odd = _tarball(tmp_path / "odd.tgz", {"dist/lib.min.js": b"x"}, folder="dist/lib.wasm")
    with pytest.raises(BenchdbError, match="tarball's dist/lib.wasm is not a regular file"):
        npm.install(_package(odd), target, odd)
    for where in ("../../etc/passwd", "lib.min.js"):  # outside the package (missing), or another file
        linked = _tarball(tmp_path / "link.tgz", {"dist/lib.min.js": b"x"}, link=("dist/lib.wasm", where))
        with pytest.raises(BenchdbError, match="tarball's dist/lib.wasm is not a regular file"):
            npm.install(_package(linked), target, linked)
    assert not target.exists() and list(target.parent.iterdir()) == []


def test_the_registry_is_the_npm_one_unless_configured(monkeypatch):
    pkg = npm.Package("@observablehq/plot", "0.6.17", "sha512-x", ("dist/plot.umd.min.js",))
    monkeypatch.delenv("npm_config_registry", raising=False)
    assert pkg.spec == "@observablehq/plot@0.6.17" and pkg.names() == ["plot.umd.min.js"]
    assert pkg.tarball_url() == "https://registry.npmjs.org/@observablehq/plot/-/plot-0.6.17.tgz"
    monkeypatch.setenv("npm_config_registry", "http://127.0.0.1:4873/")
    assert pkg.tarball_url() == "http://127.0.0.1:4873/@observablehq/plot/-/plot-0.6.17.tgz"

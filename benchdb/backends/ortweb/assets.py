"""The onnxruntime-web files the page loads: a pinned npm release, fetched once into the cache.

Only what the page needs is kept (about 43 MB): the ES-module entries (``ort.wasm.min.mjs`` for
WASM; ``ort.min.mjs``, the JSEP build, for WebGPU and WebNN) and their WebAssembly modules. The
tarball comes from the npm registry (``$npm_config_registry`` if set) and is checked against the
registry's sha512 integrity pinned here before anything is written; files land in a temporary
folder that is renamed into place, so a failed fetch leaves nothing half-written.

``benchdb run --backend ort-web`` fetches them on first use; to fetch them ahead (or offline,
from a tarball ``npm pack onnxruntime-web@VERSION`` wrote)::

    python -m benchdb.backends.ortweb.assets [--tarball onnxruntime-web-1.30.0.tgz]
"""

from __future__ import annotations

import base64
import hashlib
import os
import shutil
import sys
import tarfile
import tempfile
from pathlib import Path

from benchdb.errors import BackendUnavailable

VERSION = "1.30.0"
#: The registry's ``dist.integrity`` of onnxruntime-web@VERSION.
INTEGRITY = "sha512-q0y+JrrtukXSzsBWEMccVfqX25LRmosXHF+CaRJmg8pZClzcV7svNc4rKY3jL02Vb7QmRMDs1SigqR4CXAfKYQ=="
FILES = ("ort.wasm.min.mjs", "ort-wasm-simd-threaded.mjs", "ort-wasm-simd-threaded.wasm",
         "ort.min.mjs", "ort-wasm-simd-threaded.jsep.mjs", "ort-wasm-simd-threaded.jsep.wasm")
#: The module entry per execution provider.
ENTRY = {"wasm": "ort.wasm.min.mjs", "webgpu": "ort.min.mjs", "webnn": "ort.min.mjs"}
INSTALL = f"{sys.executable} -m benchdb.backends.ortweb.assets"


def cache_root() -> Path:
    return Path(os.environ.get("BENCHDB_CACHE") or Path.home() / ".cache" / "benchdb")


def folder() -> Path:
    """Where the files are: ``$BENCHDB_ORTWEB_DIR`` (an onnxruntime-web ``dist`` folder), else the cache."""
    own = os.environ.get("BENCHDB_ORTWEB_DIR")
    return Path(own) if own else cache_root() / "onnxruntime-web" / VERSION


def missing() -> list[str]:
    where = folder()
    return [f for f in FILES if not (where / f).is_file()]


def tarball_url() -> str:
    registry = os.environ.get("npm_config_registry") or "https://registry.npmjs.org/"
    return f"{registry.rstrip('/')}/onnxruntime-web/-/onnxruntime-web-{VERSION}.tgz"


def _check_integrity(path: Path) -> None:
    algo, _, expected = INTEGRITY.partition("-")
    h = hashlib.new(algo)
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    if base64.b64encode(h.digest()).decode() != expected:
        raise BackendUnavailable(f"onnxruntime-web {VERSION} tarball {path} does not match its registry "
                                 f"integrity {INTEGRITY[:20]}...; fetch it again with: {INSTALL}")


def install(tarball: str | os.PathLike | None = None, log=None) -> Path:
    """Put the pinned files into :func:`folder` (from ``tarball``, else downloaded); returns it."""
    target = folder()
    lacking = missing()
    if not lacking:
        return target
    if os.environ.get("BENCHDB_ORTWEB_DIR"):       # the user's folder: read, never written or removed
        raise BackendUnavailable(f"BENCHDB_ORTWEB_DIR={target} lacks {', '.join(lacking)}; point it at a complete "
                                 f"onnxruntime-web {VERSION} dist folder, or unset it to let benchdb fetch its "
                                 "own copy into its cache")
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent, prefix=".ortweb-") as tmp:
        tmp_path = Path(tmp)
        if tarball is None:
            import urllib.request

            url = tarball_url()
            if log:
                log(f"fetching onnxruntime-web {VERSION} (33 MB) from {url} into {target}")
            tarball = tmp_path / "ort.tgz"
            try:
                with urllib.request.urlopen(url, timeout=120) as resp, open(tarball, "wb") as out:
                    shutil.copyfileobj(resp, out)
            except OSError as exc:
                raise BackendUnavailable(f"could not download onnxruntime-web {VERSION} from {url} ({exc}); "
                                         f"with npm: npm pack onnxruntime-web@{VERSION} && {INSTALL} --tarball "
                                         f"onnxruntime-web-{VERSION}.tgz") from None
        _check_integrity(Path(tarball))
        staged = tmp_path / "dist"
        staged.mkdir()
        with tarfile.open(tarball, "r:gz") as tar:
            for name in FILES:
                try:
                    member = tar.getmember(f"package/dist/{name}")
                except KeyError:
                    raise BackendUnavailable(f"onnxruntime-web {VERSION} tarball lacks dist/{name}") from None
                src = tar.extractfile(member)
                if src is None:        # a link or folder where the file should be
                    raise BackendUnavailable(f"onnxruntime-web {VERSION} tarball's dist/{name} is not a regular file")
                with src, open(staged / name, "wb") as dst:
                    shutil.copyfileobj(src, dst)
        if target.exists():            # benchdb's own partial cache folder: replace it whole
            shutil.rmtree(target)
        os.replace(staged, target)
    return target


def main(argv: list[str] | None = None) -> int:
    import argparse

    p = argparse.ArgumentParser(prog="python -m benchdb.backends.ortweb.assets",
                                description=f"Fetch onnxruntime-web {VERSION} for benchdb's ort-web backend.")
    p.add_argument("--tarball", help="an onnxruntime-web tarball (npm pack) instead of downloading")
    args = p.parse_args(argv)
    try:
        path = install(args.tarball, log=lambda t: print(t, file=sys.stderr))
    except BackendUnavailable as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"onnxruntime-web {VERSION}: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

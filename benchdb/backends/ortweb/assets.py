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

import os
import sys
from pathlib import Path

from benchdb import npm
from benchdb.errors import BackendUnavailable
from benchdb.paths import cache_root

VERSION = "1.30.0"
#: The registry's ``dist.integrity`` of onnxruntime-web@VERSION.
INTEGRITY = "sha512-q0y+JrrtukXSzsBWEMccVfqX25LRmosXHF+CaRJmg8pZClzcV7svNc4rKY3jL02Vb7QmRMDs1SigqR4CXAfKYQ=="
FILES = (
    "ort.wasm.min.mjs",
    "ort-wasm-simd-threaded.mjs",
    "ort-wasm-simd-threaded.wasm",
    "ort.min.mjs",
    "ort-wasm-simd-threaded.jsep.mjs",
    "ort-wasm-simd-threaded.jsep.wasm",
)
PACKAGE = npm.Package("onnxruntime-web", VERSION, INTEGRITY, tuple(f"dist/{f}" for f in FILES), size="33 MB")
#: The module entry per execution provider.
ENTRY = {"wasm": "ort.wasm.min.mjs", "webgpu": "ort.min.mjs", "webnn": "ort.min.mjs"}
INSTALL = f"{sys.executable} -m benchdb.backends.ortweb.assets"


def folder() -> Path:
    """Where the files are: ``$BENCHDB_ORTWEB_DIR`` (an onnxruntime-web ``dist`` folder), else the cache."""
    own = os.environ.get("BENCHDB_ORTWEB_DIR")
    return Path(own) if own else cache_root() / "onnxruntime-web" / VERSION


def missing() -> list[str]:
    return npm.missing(PACKAGE, folder())


def install(tarball: str | os.PathLike | None = None, log=None) -> Path:
    """Put the pinned files into :func:`folder` (from ``tarball``, else downloaded); returns it."""
    target = folder()
    lacking = missing()
    if not lacking:
        return target
    if os.environ.get("BENCHDB_ORTWEB_DIR"):  # the user's folder: read, never written or removed
        raise BackendUnavailable(
            f"BENCHDB_ORTWEB_DIR={target} lacks {', '.join(lacking)}; point it at a complete "
            f"onnxruntime-web {VERSION} dist folder, or unset it to let benchdb fetch its "
            "own copy into its cache"
        )
    return npm.install(PACKAGE, target, tarball, log, error=BackendUnavailable, hint=INSTALL)


def main(argv: list[str] | None = None) -> int:
    import argparse

    p = argparse.ArgumentParser(
        prog="python -m benchdb.backends.ortweb.assets",
        description=f"Fetch onnxruntime-web {VERSION} for benchdb's ort-web backend.",
    )
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

"""The charting library the dashboard's page loads: Observable Plot and d3, pinned npm releases
fetched once into benchdb's cache and checked against the registry's integrity
(:mod:`benchdb.npm`); `benchdb dashboard` serves them and `benchdb site` copies them beside the page,
so nothing loads from a CDN and a site works offline.

`benchdb dashboard` and `benchdb site` fetch them on first use; to fetch them ahead (or offline, from
tarballs ``npm pack @observablehq/plot@0.6.17 d3@7.9.2`` wrote)::

    python -m benchdb.web.assets [--tarball observablehq-plot-0.6.17.tgz --tarball d3-7.9.2.tgz]
"""

from __future__ import annotations

import sys
from pathlib import Path

from benchdb import npm
from benchdb.errors import BenchdbError
from benchdb.paths import cache_root

PLOT = npm.Package(
    "@observablehq/plot",
    "0.6.17",
    "sha512-/qaXP/7mc4MUS0s4cPPFASDRjtsWp85/TbfsciqDgU1HwYixbSbbytNuInD8AcTYC3xaxACgVX06agdfQy9W+g==",
    ("dist/plot.umd.min.js", "LICENSE"),
    size="0.4 MB",
)
D3 = npm.Package(
    "d3",
    "7.9.2",
    "sha512-ZKb/mONPVKzaO5UlcWcwN8bS4ezvQaYu+bsou+XgNABdGC800kwH651ADTbbTxMPHW13UlvbQafdmJQDk1w7Mg==",
    ("dist/d3.min.js", "LICENSE"),
    size="0.2 MB",
)
PACKAGES = (D3, PLOT)
INSTALL = f"{sys.executable} -m benchdb.web.assets"


def folder(pkg: npm.Package) -> Path:
    return cache_root() / "npm" / pkg.name.replace("/", "+") / pkg.version


def files() -> dict[str, Path]:
    """The page's name for each file (``d3.min.js``, ``d3.LICENSE``, ...) -> where it is."""
    out = {}
    for pkg in PACKAGES:
        short = pkg.name.rsplit("/", 1)[-1]
        for name in pkg.names():
            out[f"{short}.{name}" if name == "LICENSE" else name] = folder(pkg) / name
    return out


def ensure(log=None, tarballs: dict[str, str] | None = None) -> dict[str, Path]:
    """Fetch what is missing (once; checked), then :func:`files`."""
    for pkg in PACKAGES:
        npm.install(pkg, folder(pkg), (tarballs or {}).get(pkg.name), log, error=BenchdbError, hint=INSTALL)
    return files()


def main(argv: list[str] | None = None) -> int:
    import argparse

    p = argparse.ArgumentParser(
        prog="python -m benchdb.web.assets", description="Fetch the dashboard's charting library (Observable Plot, d3)."
    )
    p.add_argument(
        "--tarball", action="append", default=[], help="a tarball npm pack wrote, instead of downloading (repeatable)"
    )
    args = p.parse_args(argv)
    tarballs = {}
    for t in args.tarball:
        name = Path(t).name  # npm pack names them observablehq-plot-0.6.17.tgz, d3-7.9.2.tgz
        pkg = next((k for k in PACKAGES if name.startswith(k.name.lstrip("@").replace("/", "-") + "-")), None)
        if pkg is None:
            print(f"error: {t} is neither {PLOT.spec} nor {D3.spec}", file=sys.stderr)
            return 1
        tarballs[pkg.name] = t
    try:
        found = ensure(log=lambda t: print(t, file=sys.stderr), tarballs=tarballs)
    except BenchdbError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print("dashboard assets: " + ", ".join(f"{k} ({v.parent})" for k, v in found.items() if not k.endswith("LICENSE")))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""A commit's environment for `benchdb bisect` (:mod:`benchdb.bisect.search`): the default setup (a
venv that sees this interpreter's packages, with the project at the commit installed into it) or
the user's setup command; a setup that fails skips the commit."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

#: Seconds one setup may take.
SETUP_TIMEOUT_S = 1800


class SetupFailed(Exception):
    """A commit's environment could not be built (the commit is skipped)."""


def _sh(cmd: list[str] | str, cwd: Path, env: dict[str, str] | None = None) -> None:
    try:
        proc = subprocess.run(
            cmd,
            cwd=cwd,
            env=env,
            shell=isinstance(cmd, str),
            capture_output=True,
            text=True,
            timeout=SETUP_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        raise SetupFailed(f"the setup ran past {SETUP_TIMEOUT_S} s") from None
    if proc.returncode != 0:
        from benchdb.ab.process import last_line

        raise SetupFailed(f"exit code {proc.returncode}: {last_line(proc.stderr or proc.stdout) or 'no message'}")


def run_setup(setup: str, root: Path, env: Path) -> None:
    _sh(setup.replace("{env}", shlex.quote(str(env))), root, {**os.environ, "BENCHDB_ENV": str(env)})


def default_setup(root: Path, env: Path) -> None:
    import site
    import sysconfig

    _sh([sys.executable, "-m", "venv", "--without-pip", str(env)], root)
    python = env / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    host = [p for p in dict.fromkeys([*site.getsitepackages(), sysconfig.get_path("purelib")]) if os.path.isdir(p)]
    # Lines of a .pth file that start with "import" run at start-up: addsitedir also reads the host's
    # own .pth files (an editable benchdb), after the venv's own packages.
    Path(purelib, "_benchdb_host.pth").write_text(
        "".join(f"import site; site.addsitedir({p!r})\n" for p in host), encoding="utf-8"
    )
    pip = [
        sys.executable,
        "-m",
        "pip",
        "--python",
        str(python),
        "install",
        "--no-deps",
        "--quiet",
        "--disable-pip-version-check",
        "--no-input",
    ]
    with tempfile.TemporaryDirectory(prefix="benchdb-wheel-") as wheels:
        try:  # one build process; pip's own build would run two (the metadata, then the wheel)
            _sh([str(python), "-c", _BUILD_WHEEL, wheels], root)
            (wheel,) = Path(wheels).glob("*.whl")
        except (SetupFailed, ValueError):
            wheel = None
        if wheel is not None:
            _sh([*pip, str(wheel)], root)
            return
    try:  # the build backend from the host's packages: no download
        _sh([*pip, "--no-build-isolation", "."], root)
    except SetupFailed:
        _sh([*pip, "."], root)


#: A wheel of the project in the checkout (the working directory), built by its PEP 517 backend in
#: the commit's interpreter (which sees the host's packages: pip's --no-build-isolation) into the
#: folder argv[1]. It exits non-zero where pip knows better: no pyproject.toml or build-backend, an
#: in-tree backend (backend-path), no TOML reader (Python 3.10 without tomli), a backend missing
#: here or failing; pip then builds and installs as it would have.
_BUILD_WHEEL = """
import importlib, sys
if sys.path[0] == "":  # the checkout is not importable while its backend runs (PEP 517)
    del sys.path[0]
try:
    import tomllib
except ImportError:
    import tomli as tomllib
with open("pyproject.toml", "rb") as f:
    system = tomllib.load(f).get("build-system", {})
if not system.get("build-backend") or system.get("backend-path"):
    sys.exit(2)
module, _, attr = system["build-backend"].partition(":")
hooks = importlib.import_module(module)
for name in filter(None, attr.split(".")):
    hooks = getattr(hooks, name)
hooks.build_wheel(sys.argv[1])
"""

"""A commit's default environment for `benchdb bisect` (benchdb/bisect/setup.py): the project
at the commit installed into a venv that sees this interpreter's packages, through the project's
own build backend, or through pip where that backend cannot be run directly."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from benchdb.bisect.setup import SetupFailed, default_setup

SETUP_PY = "from setuptools import setup\nsetup(name='{name}', version='0.1.0', packages=['{name}'])\n"
PYPROJECT = (
    '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n\n'
    '[project]\nname = "{name}"\nversion = "0.1.0"\n\n[tool.setuptools]\npackages = ["{name}"]\n'
)


def project(root: Path, name: str, files: dict[str, str]) -> Path:
    (root / name).mkdir(parents=True)
    (root / name / "__init__.py").write_text("WHERE = __file__\n")
    for path, text in files.items():
        (root / path).write_text(text.format(name=name))
    return root


def installed(env: Path, name: str, cwd: Path) -> str:
    proc = subprocess.run(
        [
            str(env / "bin" / "python"),
            "-c",
            f"import {name}, importlib.metadata as m; print({name}.WHERE, m.version({name!r}))",
        ],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


@pytest.mark.parametrize(
    "files", [{"pyproject.toml": PYPROJECT}, {"setup.py": SETUP_PY}], ids=["build-backend", "setup.py-only"]
)
def test_the_project_is_installed_into_the_commits_environment(tmp_path, files):
    """With a build backend named in pyproject.toml, its wheel; without one, pip's own build: either
    way the package and its metadata are in the environment's site-packages, not the checkout."""
    root = project(tmp_path / "checkout", "setuppkg", files)
    default_setup(root, tmp_path / "env")
    where, version = installed(tmp_path / "env", "setuppkg", tmp_path).split()
    assert "site-packages" in where and str(root) not in where and version == "0.1.0"


def test_a_project_that_cannot_be_built_fails_its_setup(tmp_path):
    root = project(tmp_path / "checkout", "brokenpkg", {"pyproject.toml": "[project\nname = "})
    with pytest.raises(SetupFailed, match="exit code"):
        default_setup(root, tmp_path / "env")

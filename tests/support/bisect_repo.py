"""A small git repository for `benchdb bisect`: a package with a user bench, one commit per change.

Used by tests/cli/test_bisect.py and benchmarks/bisect_noise.py.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

PYPROJECT = """[build-system]
requires = ["setuptools"]
build-backend = "setuptools.build_meta"

[project]
name = "slowpkg"
version = "0.1.0"

[tool.setuptools]
packages = ["slowpkg"]
"""

BENCH = """import slowpkg


def bench_work():
    slowpkg.work()
"""

WORK = 30_000


def package(work: int) -> str:
    return f"WORK = {work}\n\n\ndef work():\n    return sum(i * i for i in range(WORK))\n"


def git(repo: Path, *args: str, date: str | None = None) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
    }
    if date:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = date
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, env=env
    ).stdout.strip()


def make_repo(
    repo: Path, n: int = 16, slow_at: int | None = 11, factor: float = 1.25, broken: tuple[int, ...] = ()
) -> list[str]:
    """``n`` commits (1-based); from commit ``slow_at`` on the bench does ``factor`` times the work;
    each commit in ``broken`` cannot be installed (the next one repairs it). Returns the shas."""
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    (repo / "slowpkg").mkdir()
    (repo / "benches").mkdir()
    (repo / "benches" / "bench_work.py").write_text(BENCH)
    shas = []
    for i in range(1, n + 1):
        work = round(WORK * factor) if slow_at is not None and i >= slow_at else WORK
        (repo / "slowpkg" / "__init__.py").write_text(package(work))
        (repo / "pyproject.toml").write_text("[project\nname = " if i in broken else PYPROJECT)
        (repo / "NOTES.txt").write_text(f"change {i}\n")
        git(repo, "add", "-A")
        subject = (
            f"change {i}" + (" (slower work)" if i == slow_at else "") + (" (broken build)" if i in broken else "")
        )
        git(repo, "commit", "-q", "-m", subject, date=f"2026-11-{i:02d}T10:00:00+00:00")
        shas.append(git(repo, "rev-parse", "HEAD"))
    return shas

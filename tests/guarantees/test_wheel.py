"""The wheel is the whole of benchdb: built from the tree as `pip install .`
would build it, it holds every file under benchdb/ (the dashboard's SQL and page included), and,
installed into a fresh virtual environment, its own `benchdb` ingests, builds a site and serves."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import sysconfig
import urllib.request
import zipfile
from pathlib import Path

import pytest
from conftest import REPO, child, make_meta, make_run, write_file

pytestmark = pytest.mark.slow


def _sources() -> list[str]:
    """The files of this checkout (tracked, and new ones git does not ignore)."""
    try:
        out = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=REPO,
            capture_output=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout: the wheel is compared with `git ls-files`")
    return [p for p in out.decode().split("\0") if p and (REPO / p).is_file()]


def _setuptools_at_least(major: int) -> bool:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return int(version("setuptools").split(".")[0]) >= major
    except (PackageNotFoundError, ValueError):
        return False


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel, built from a copy of the tree (a build writes build/ and *.egg-info beside the sources)."""
    tmp = tmp_path_factory.mktemp("wheel")
    src = tmp / "src"
    for rel in _sources():
        if rel.startswith("benchdb/") or "/" not in rel:
            (src / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / rel, src / rel)
    # This venv's setuptools when it is new enough (offline); else pip fetches one into an isolated build.
    isolation = ["--no-build-isolation", "--no-index"] if _setuptools_at_least(68) else []
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", *isolation, "-q", "-w", str(tmp / "dist"), str(src)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (found,) = (tmp / "dist").glob("benchdb-*.whl")
    return found


def test_wheel_holds_every_file_under_benchdb(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    tracked = [p for p in _sources() if p.startswith("benchdb/") and "__pycache__" not in p]
    missing = [p for p in tracked if p not in names]
    assert missing == []
    assert "benchdb/sql/dashboard/results.sql" in names and "benchdb/web/static/app.js" in names


#: What `pip install benchdb` without the torch extra lacks (the extra, and what needs it).
TORCH_EXTRA = ("torch", "transformers", "functorch", "torchgen", "accelerate", "kernels")


def _install(wheel: Path, tmp_path: Path, leave_out: tuple[str, ...] = ()) -> tuple[Path, dict]:
    """A fresh venv with the wheel (no dependencies installed: it sees this venv's packages through a
    .pth file, which adds their folder but not this checkout's editable install); ``leave_out``: those
    packages stay out of sight (a folder of links to every other one stands in for this venv's)."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps", "--no-index", str(wheel)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    ours = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    if leave_out:
        seen = tmp_path / "outer-site"
        seen.mkdir()
        for folder in ours:
            for entry in Path(folder).iterdir():
                name = entry.name.split("-")[0].split(".")[0].lower()
                if name not in leave_out and not (seen / entry.name).exists():
                    (seen / entry.name).symlink_to(entry)
        ours = {str(seen)}
    Path(purelib, "outer-venv.pth").write_text("\n".join(sorted(ours)) + "\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    return venv, env


def test_installed_wheel_ingests_builds_a_site_and_serves(wheel, tmp_path):
    venv, env = _install(wheel, tmp_path)
    python = venv / "bin" / "python"

    def run(*args: str, **kw) -> subprocess.CompletedProcess:
        return subprocess.run(
            [str(venv / "bin" / "benchdb"), *args],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=300,
            **kw,
        )

    where = subprocess.run(
        [str(python), "-c", "import benchdb; print(benchdb.__file__)"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        check=True,
    ).stdout.strip()
    assert Path(where).is_relative_to(venv), where  # the wheel's benchdb, not this checkout's

    run_meta = make_run()
    for bs in (1, 2):
        write_file(tmp_path / "results", make_meta(run_meta, batch_size=bs))
    db = tmp_path / "bench.duckdb"
    r = run("ingest", str(tmp_path / "results"), "--db", str(db))
    assert r.returncode == 0, r.stderr

    r = run("site", "--db", str(db), "--out", str(tmp_path / "site"))
    assert r.returncode == 0, r.stderr
    site = tmp_path / "site"
    assert (site / "index.html").is_file() and (site / "static" / "app.js").is_file()
    assert len(json.loads((site / "data" / "results.json").read_text())["rows"]) == 2

    argv = [str(venv / "bin" / "benchdb"), "serve", "--db", str(db), "--port", "0"]
    with child(argv, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path) as server:
        url = None
        for line in server.stderr:  # "benchdb dashboard on http://HOST:PORT/ ..."
            if "benchdb dashboard on " in line:
                url = line.split(" on ", 1)[1].split()[0]
                break
        assert url, "serve did not start"
        with urllib.request.urlopen(url + "api/results", timeout=60) as resp:
            assert resp.status == 200 and len(json.loads(resp.read())["rows"]) == 2
        server.send_signal(signal.SIGINT)  # Ctrl-C ends the installed command's server
        assert server.wait(timeout=30) == 0


@pytest.mark.serial  # its figures rest on a quiet machine: beside another test (xdist) it failed
def test_quickstart_without_the_torch_extra_runs_what_it_has(wheel, tmp_path):
    """Without torch and transformers, the quickstart measures what the installed backends can run
    (numpy's matmul; ONNX Runtime and OpenVINO build their tiny models with torch) and says in one
    line each what it left out and the command that adds it: exit 0, never an internal error."""
    venv, env = _install(wheel, tmp_path, leave_out=TORCH_EXTRA)
    check = "import importlib.util as u; print([m for m in ('torch', 'transformers') if u.find_spec(m)])"
    assert (
        subprocess.run(
            [str(venv / "bin" / "python"), "-c", check], capture_output=True, text=True, env=env
        ).stdout.strip()
        == "[]"
    )
    proc = subprocess.run(
        [str(venv / "bin" / "benchdb"), "quickstart", "--repeats", "1", "--db", "q.duckdb"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "internal error" not in proc.stderr
    hint = "pip install 'benchdb[torch]' torch=="
    left = proc.stdout[proc.stdout.index("not compared in the answer") : proc.stdout.index("report: ")].splitlines()
    assert any(ln.strip().startswith(f"pytorch: not installed ({hint}") for ln in left), left
    assert any(
        ln.strip().startswith("onnxruntime, openvino: tiny:bert, tiny:vit need torch and transformers") and hint in ln
        for ln in left
    ), left
    assert "| matmul:256 |" in proc.stdout
    assert max(len(line) for line in proc.stdout.splitlines() if str(tmp_path) not in line) <= 120  # fits

"""A third-party backend package, built and pip-installed here, added through the
`benchdb.backends` entry-point group with a run option of its own: the option appears in
`benchdb run --help`, config files, the scenario identity and an `--ab` child's arguments."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import duckdb
import pytest
from conftest import benchdb_cmd

from benchdb.backends import registry

FAST = ["--warmup", "1", "--min-iters", "5", "--min-time", "0.01", "--max-time", "0.1", "--max-background-cpu", "100%"]

INIT = '''
"""A third-party backend: numpy's matmul under another name, with a --mine-scale option."""
from benchdb.backends.protocol import BackendInfo, Option

OPTIONS = (Option("mine_scale", "int", 1, "How many times the matrix is multiplied per call.", minimum=1,
                  identity=True),)
BACKEND = BackendInfo("mine", "mine-pkg", "mine_pkg", "pip install mine-pkg", "mine_pkg.backend",
                      options=OPTIONS, summary="numpy matmul, scaled")
'''

BACKEND = """
from dataclasses import replace

from benchdb.backends.numpy import backend as _numpy
from benchdb.backends.core_options import backend_option


def software():
    return {"mine": "0.1", **_numpy.software()}


def hardware_of(device):
    return _numpy.hardware_of(device)


def model_info(model):
    return _numpy.model_info(model)


def plan(opts):
    scale = backend_option(opts, "mine_scale")
    return [(model, [replace(sc, backend="mine", settings={**sc.settings, "scale": scale}) for sc in scenarios])
            for model, scenarios in _numpy.plan(opts)]


def run_model(model, scenarios, opts, on_start=None):
    yield from _numpy.run_model(model, scenarios, opts, on_start)
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


@pytest.fixture(scope="module")
def plugin_site(tmp_path_factory):
    """A real distribution declaring a `benchdb.backends` entry point, pip-installed into a
    private folder (never into the shared venv)."""
    root = tmp_path_factory.mktemp("plugin")
    src, site = root / "src", root / "site"
    write(
        src / "pyproject.toml",
        """
        [build-system]
        requires = ["setuptools>=61"]
        build-backend = "setuptools.build_meta"

        [project]
        name = "mine-pkg"
        version = "0.1"

        [project.entry-points."benchdb.backends"]
        mine = "mine_pkg:BACKEND"
    """,
    )
    write(src / "mine_pkg" / "__init__.py", INIT)
    write(src / "mine_pkg" / "backend.py", BACKEND)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "--target",
            str(site),
            str(src),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    assert (site / "mine_pkg" / "__init__.py").exists()
    return site


def _env(site: Path) -> dict[str, str]:
    return {"PYTHONPATH": os.pathsep.join([str(site), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}


def _options_of(db: Path) -> list[dict]:
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute("SELECT options FROM results WHERE backend = 'mine' ORDER BY options").fetchall()
    return [json.loads(r[0]) if isinstance(r[0], str) else r[0] for r in rows]


def test_the_registry_lists_and_loads_it(plugin_site, monkeypatch):
    monkeypatch.syspath_prepend(str(plugin_site))
    registry.backends.cache_clear()
    try:
        assert "mine" in registry.names()
        assert registry.info("mine").implementation == "mine_pkg.backend"
        assert registry.load("mine").software()["mine"] == "0.1"
        from benchdb.backends import core_options as options

        assert [o.name for o, owners in options.every() if owners == ["mine"]] == ["mine_scale"]
    finally:
        monkeypatch.undo()
        registry.backends.cache_clear()
    assert "mine" not in registry.names()


def test_its_option_is_in_help_config_identity_and_the_ab_child(plugin_site, tmp_path):
    env = _env(plugin_site)
    # run --help shows it, marked with its backend
    help_text = benchdb_cmd("run", "--help", env=env, check=True).stdout
    assert "--mine-scale" in help_text and "[mine] How many times" in help_text
    assert "--mine-scale" not in benchdb_cmd("run", "--help", check=True).stdout  # not installed: not shown

    # a config file sets it; the scenario identity carries it (another value: another scenario)
    config = write(
        tmp_path / "bench.yaml",
        """
        settings: {mine_scale: 3, threads: 1}
        runs: [{backends: mine, models: matmul:16}]
    """,
    )
    db = tmp_path / "w.duckdb"
    proc = benchdb_cmd("run", "--config", str(config), "--out", str(tmp_path / "a"), *FAST, env=env)
    assert proc.returncode == 0, proc.stderr
    # the command line sets it too, and overrides nothing else
    proc = benchdb_cmd(
        "run",
        "--backend",
        "mine",
        "--model",
        "matmul:16",
        "--threads",
        "1",
        "--mine-scale",
        "2",
        "--out",
        str(tmp_path / "b"),
        *FAST,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr
    benchdb_cmd("ingest", str(tmp_path / "a"), str(tmp_path / "b"), "--db", str(db), env=env, check=True)
    assert _options_of(db) == [{"mine_scale": 2, "threads": 1}, {"mine_scale": 3, "threads": 1}]
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute(
            "SELECT count(DISTINCT series_id), count(DISTINCT options_id) FROM results WHERE backend = 'mine'"
        ).fetchone() == (2, 2)

    # a bad value in a config file: one line naming the key
    bad = write(tmp_path / "bad.yaml", "runs: [{backends: mine, models: matmul:16, mine_scale: 0}]")
    proc = benchdb_cmd("run", "--config", str(bad), "--dry-run", env=env)
    assert proc.returncode == 2 and "config key 'mine_scale': 0 is not a positive integer" in proc.stderr

    # --ab: each side's child process is given --mine-scale 3 (its files record the options it measured)
    ab_db = tmp_path / "ab.duckdb"
    proc = benchdb_cmd(
        "run",
        "--config",
        str(config),
        "--ab",
        sys.executable,
        sys.executable,
        "--repeats",
        "2",
        "--out",
        str(tmp_path / "ab"),
        "--db",
        str(ab_db),
        *FAST,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert _ab_children_had_scale(tmp_path / "ab", 3)
    benchdb_cmd("ingest", str(tmp_path / "ab"), "--db", str(ab_db), env=env, check=True)
    assert _options_of(ab_db) == [{"mine_scale": 3, "threads": 1}] * 2


def _ab_children_had_scale(out: Path, scale: int) -> bool:
    """Every file the --ab sides wrote records the option's value in its scenario options."""
    from benchdb.schema import contract

    files = list(out.rglob("*.parquet"))
    return bool(files) and all(
        contract.read_footer(f).metadata["scenario"]["options"]["mine_scale"] == scale for f in files
    )


def test_without_the_package_the_backend_is_unknown(tmp_path):
    proc = benchdb_cmd("run", "--backend", "mine", "--model", "matmul:16", "--out", str(tmp_path / "o"))
    assert proc.returncode == 2
    assert proc.stderr.strip().startswith("benchdb: error: unknown backend 'mine'; choose one of ")


def test_every_registered_backend_implements_the_protocol():
    import dataclasses
    import importlib
    import types

    from benchdb.backends import core_options as options
    from benchdb.backends.protocol import Backend
    from benchdb.harness.hardware import availability

    names = registry.names()
    assert {"numpy", "pytorch", "onnxruntime", "openvino", "userbench", "ort-web"} <= set(names)
    for name in names:
        info = registry.info(name)
        assert info.name == name and info.hint and info.devices
        assert info.option_set is not None and "threads" in {f.name for f in dataclasses.fields(info.option_set)}
        if availability(info)["status"] != "available":
            continue
        module = importlib.import_module(info.implementation)
        assert isinstance(module, Backend), name
        assert registry.missing_methods(module) == [], name
    flags = [o.cli_flag for o, _ in options.every()]
    assert len(flags) == len(set(flags)), "two declared options share a flag"

    broken = types.ModuleType("broken")
    broken.software = lambda: {}
    broken.plan = lambda opts, extra: []
    assert registry.missing_methods(broken) == ["hardware_of()", "plan(opts)", "run_model()", "model_info()"]

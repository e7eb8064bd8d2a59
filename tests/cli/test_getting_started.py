"""`benchdb hardware` (:mod:`benchdb.cli.getting_started`): what this machine has and how to make
an unavailable backend available."""

import json

from click.testing import CliRunner

from benchdb.backends.protocol import BackendInfo
from benchdb.cli import getting_started, main
from benchdb.harness import hardware
from benchdb.plan import config as cfgmod


def invoke(*args, env=None):
    return CliRunner().invoke(main, list(args), env=env)


def test_missing_backend_is_reported_as_unavailable_with_hint():
    info = BackendInfo("ghost", "benchdb-ghost-backend", "benchdb_ghost_backend", "pip install ghost")
    assert hardware.availability(info) == {
        "name": "ghost",
        "status": "unavailable",
        "version": None,
        "hint": "pip install ghost",
    }


def test_hardware_command():
    r = invoke("hardware")
    assert r.exit_code == 0
    assert r.stdout.splitlines()[1].startswith("cpu       ")
    assert "backends:" in r.stdout and "  numpy " in r.stdout
    data = json.loads(invoke("hardware", "--json").stdout)
    assert data["cpu"]["cores_logical"] >= 1
    assert {b["name"] for b in data["backends"]} == {
        "numpy",
        "pytorch",
        "onnxruntime",
        "openvino",
        "ort-web",
        "openai",
        "userbench",
    }


def test_hardware_names_what_each_backend_measures_with():
    """openai's version is httpx's and ort-web's is onnxruntime-web's (run by playwright): each is named,
    so neither reads as the backend's own version."""
    from benchdb.backends.ortweb import assets
    from benchdb.harness.hardware import package_version as version

    data = {b["name"]: b for b in json.loads(invoke("hardware", "--format", "json").stdout)["backends"]}
    assert data["openai"]["uses"] == {"httpx": version("httpx")}
    assert data["ort-web"]["uses"] == {"onnxruntime-web": assets.VERSION, "playwright": version("playwright")}
    assert data["numpy"]["uses"] == {"numpy": version("numpy")}
    lines = {ln.split()[0]: ln for ln in invoke("hardware").stdout.splitlines() if ln.startswith("  ")}
    if data["openai"]["status"] == "available":
        assert lines["openai"].split()[1:] == ["httpx", version("httpx")]
    if data["ort-web"]["status"] == "available":
        assert f"onnxruntime-web {assets.VERSION}, playwright {version('playwright')}" in lines["ort-web"]


def test_hardware_says_how_to_make_an_unavailable_backend_available():
    from benchdb.harness.machine_report import availability_text

    ghost = BackendInfo("ghost", "benchdb-ghost-backend", "benchdb_ghost_backend", "pip install ghost")
    assert availability_text(hardware.availability(ghost)) == "unavailable - to make it available: pip install ghost"
    probed = {"name": "x", "status": "unavailable", "hint": "apt-get install chromium", "reason": "no Chromium"}
    assert availability_text(probed) == "unavailable: no Chromium - to make it available: apt-get install chromium"
    data = {b["name"]: b for b in json.loads(invoke("hardware", "--format", "json").stdout)["backends"]}
    lines = {ln.split()[0]: ln for ln in invoke("hardware").stdout.splitlines() if ln.startswith("  ")}
    assert all(lines[name].split(None, 1)[1] == availability_text(b) for name, b in data.items())


def test_suites_lists_each_suite_with_its_backends():
    lines = invoke("suites").stdout.splitlines()
    assert [ln.split()[0] for ln in lines] == cfgmod.suite_names()
    smoke = cfgmod.load_suite("smoke")
    assert lines[cfgmod.suite_names().index("smoke")].endswith(
        f"{smoke.description} [{', '.join(dict.fromkeys(o.backend for o in smoke.runs))}]"
    )
    assert getting_started.next_steps("w.duckdb").startswith("warehouse: w.duckdb; next:\n  benchdb report --matrix")

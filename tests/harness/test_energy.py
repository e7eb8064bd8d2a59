"""CPU energy from RAPL (benchdb.harness.energy) against fake powercap / hwmon folders: zone
selection, wrap-around, the monitor hook, `benchdb hardware`, and a real numpy run whose fake
counter moves at a known rate (and wraps) while the run measures."""

import json
import os
import threading
import time
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from benchdb.cli import main
from benchdb.harness import energy
from benchdb.harness.monitors import ENERGY_INTERVAL_S, RSS_INTERVAL_S, Monitor, RssSource

FAST = ["--min-time", "0.5", "--max-time", "2", "--warmup", "1", "--min-iters", "5"]


def _zone(root: Path, name: str, label: str, uj: int, max_uj: int = 2**32) -> Path:
    d = root / name
    d.mkdir(parents=True)
    (d / "name").write_text(label + "\n")
    (d / "energy_uj").write_text(f"{uj}\n")
    (d / "max_energy_range_uj").write_text(f"{max_uj}\n")
    return d / "energy_uj"


def _set(path: Path, uj: int) -> None:
    tmp = path.with_name(".tmp")
    tmp.write_text(f"{uj}\n")
    os.replace(tmp, path)


@pytest.fixture
def powercap(tmp_path):
    root = tmp_path / "powercap"
    (root / "intel-rapl").mkdir(parents=True)  # the control type: no counter
    files = {
        "pkg0": _zone(root, "intel-rapl:0", "package-0", 990_000, max_uj=1_000_000),
        "core": _zone(root, "intel-rapl:0:0", "core", 5),  # inside the package: left out
        "dram": _zone(root, "intel-rapl:0:1", "dram", 100),
        "pkg1": _zone(root, "intel-rapl:1", "package-1", 0),
        "psys": _zone(root, "intel-rapl:2", "psys", 7),
    }  # overlaps packages: left out
    return root, files


@pytest.mark.core
def test_zones_are_packages_and_dram_and_wraparound_is_counted(powercap, tmp_path):
    root, files = powercap
    p = energy.probe(root, tmp_path / "no-hwmon")
    assert p.available
    assert [z.name for z in p.zones] == ["intel-rapl:0/package-0", "intel-rapl:0:1/dram", "intel-rapl:1/package-1"]
    assert p.detail == "RAPL, 3 zone(s): package-0, dram, package-1"

    t = [100.0]
    src = energy.RaplSource(p.zones, clock=lambda: t[0])
    first = dict((m, v) for m, _, v in src.sample())
    assert first == {"energy_j": 0.0, "rapl_zones": 3.0}
    # package-0 wraps: 990,000 -> 1,000,000 (its max) -> 0 -> 20,000 uJ is 30,001 uJ
    _set(files["pkg0"], 20_000)
    _set(files["dram"], 1_100)  # +1,000
    _set(files["pkg1"], 2_000)  # +2,000
    _set(files["core"], 10**9)  # ignored
    t[0] = 100.5
    second = dict((m, v) for m, _, v in src.sample())
    assert second["energy_j"] == pytest.approx(0.033001)
    assert second["power_w"] == pytest.approx(0.033001 / 0.5)
    _set(files["pkg0"], 520_000)  # +500,000 without a wrap
    t[0] = 101.0
    third = dict((m, v) for m, _, v in src.sample())
    assert third["energy_j"] == pytest.approx(0.533001)
    assert third["power_w"] == pytest.approx(1.0)


@pytest.mark.core
def test_step_across_wrap_and_reset():
    assert energy.step_uj(10, 25, 100) == 15
    assert energy.step_uj(95, 4, 100) == 10  # 95 -> 100, 0, 1 .. 4: 5 + 1 + 4
    assert energy.step_uj(95, 4, None) == 4  # no range: a reset, count from 0


@pytest.mark.core
def test_amd_energy_hwmon_sockets(tmp_path):
    hw = tmp_path / "hwmon" / "hwmon3"
    hw.mkdir(parents=True)
    (hw / "name").write_text("amd_energy\n")
    for i, (label, uj) in enumerate([("Ecore000", 1), ("Esocket0", 5_000_000), ("Esocket1", 7)], start=1):
        (hw / f"energy{i}_input").write_text(f"{uj}\n")
        (hw / f"energy{i}_label").write_text(label + "\n")
    p = energy.probe(tmp_path / "no-powercap", tmp_path / "hwmon")
    assert [z.name for z in p.zones] == ["hwmon3/amd_energy/Esocket0", "hwmon3/amd_energy/Esocket1"]


@pytest.mark.core
def test_nothing_readable_is_said_once_by_hardware(tmp_path):
    p = energy.probe(tmp_path / "none", tmp_path / "none2")
    assert not p.available and "CPU energy is not measured here" in p.detail
    env = {energy.POWERCAP_ENV: str(tmp_path / "none"), energy.HWMON_ENV: str(tmp_path / "none2")}
    r = CliRunner().invoke(main, ["hardware"], env=env)
    assert r.exit_code == 0, r.output
    lines = [line for line in r.output.splitlines() if "energy" in line.lower()]
    assert lines == [f"energy    cpu unavailable: {p.detail}"]
    r = CliRunner().invoke(main, ["hardware", "--format", "json"], env=env)
    assert json.loads(r.output)["cpu_energy"] == {"status": "unavailable", "detail": p.detail}


@pytest.mark.core
@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_root_only_counters_say_how_to_open_them(powercap, tmp_path):
    root, files = powercap
    for f in files.values():
        f.chmod(0)
    p = energy.probe(root, tmp_path / "none")
    assert not p.available and "readable by root only" in p.detail and "chmod a+r" in p.detail


@pytest.mark.core
def test_monitor_adds_rapl_unless_a_source_measures_energy(powercap, monkeypatch):
    root, _ = powercap
    monkeypatch.setenv(energy.POWERCAP_ENV, str(root))
    mon = Monitor([RssSource()])
    assert [type(s).__name__ for s in mon.sources] == ["RssSource", "RaplSource"]
    assert mon.interval_s == ENERGY_INTERVAL_S  # power: a wrapping counter, sampled often

    class GpuEnergy:  # stands for NvmlSource (provides_energy = True)
        provides_energy = True

        def sample(self):
            return []

    assert [type(s).__name__ for s in Monitor([GpuEnergy()]).sources] == ["GpuEnergy"]
    assert Monitor([GpuEnergy()]).interval_s == ENERGY_INTERVAL_S
    monkeypatch.setenv(energy.POWERCAP_ENV, str(root / "missing"))
    monkeypatch.setenv(energy.HWMON_ENV, str(root / "missing"))
    assert [type(s).__name__ for s in Monitor([RssSource()]).sources] == ["RssSource"]
    assert Monitor([RssSource()]).interval_s == RSS_INTERVAL_S > ENERGY_INTERVAL_S  # RSS alone: rarer wakes


@pytest.mark.slow
def test_real_run_records_energy_per_item_from_a_moving_counter(tmp_path):
    """A tiny PyTorch BERT run (child process, real timing loop) while a thread advances the fake package
    counter at 10 W with a 1 J range (it wraps every 0.1 s): the scenario's power is ~10 W and
    energy per item = power x latency / batch in results_latest; the method is RAPL."""
    root = tmp_path / "powercap"
    counter = _zone(root, "intel-rapl:0", "package-0", 0, max_uj=1_000_000)
    stop = threading.Event()
    t0 = time.monotonic()

    def advance():
        while not stop.is_set():
            _set(counter, int((time.monotonic() - t0) * 10e6) % 1_000_001)
            time.sleep(0.001)

    writer = threading.Thread(target=advance, daemon=True)
    writer.start()
    out, db = tmp_path / "res", tmp_path / "w.duckdb"
    env = {energy.POWERCAP_ENV: str(root), energy.HWMON_ENV: str(tmp_path / "none")}
    try:
        r = CliRunner().invoke(
            main,
            [
                "run",
                "--backend",
                "pytorch",
                "--model",
                "tiny:bert",
                "--seq-lens",
                "16",
                "--out",
                str(out),
                # what is tested is the energy accounting, not the timing's
                # precision: a loose CI target keeps the result valid (so in
                # results_latest) when another process shares the 2 cores
                "--max-background-cpu",
                "100%",
                "--target-ci",
                "0.5",
                *FAST,
            ],
            env=env,
        )
    finally:
        stop.set()
        writer.join()
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(main, ["ingest", str(out), "--db", str(db)])
    assert r.exit_code == 0, r.output
    con = duckdb.connect(str(db), read_only=True)
    got = dict(
        con.execute("select metric, median from result_metrics where metric in ('power_w', 'rapl_zones')").fetchall()
    )
    assert got["rapl_zones"] == 1.0
    assert 5.0 < got["power_w"] < 20.0  # 10 W; the writer thread shares a busy core
    energy_j = con.execute("select max(value) from samples where metric = 'energy_j'").fetchone()[0]
    seconds = con.execute("select max(t_offset_s) from samples where metric = 'energy_j'").fetchone()[0]
    assert energy_j == pytest.approx(10.0 * seconds, rel=0.3)  # wraps every 0.1 s: counted, not lost
    row = con.execute("select energy_per_item_j, power_w * median / batch_size from results_latest").fetchone()
    assert row[0] == pytest.approx(row[1]) and row[0] > 0

"""A system is the unit of hardware: hardware files, identity, the migration, and imports that name one."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from benchdb.schema import identity, system
from tests.conftest import HARDWARE, benchdb_cmd, cli, db_rows, make_meta, make_run, write_file

FIXTURES = Path(__file__).parents[1] / "fixtures"
H200 = """\
system_name: 8x H200 SXM (test)
accelerator: {vendor: NVIDIA, name: NVIDIA H200-SXM-141GB, memory: 141GB}
accelerators_per_node: 8
nodes: 1
cpu: {model: Intel Xeon Platinum 8480C, sockets: 2, cores: 112}
host_memory: 2TiB
interconnect: NVLink 4
availability: available
accelerators: 8
parallelism: {tp: 8}
"""


@pytest.mark.core
def test_a_hardware_file_is_a_system_and_its_usage():
    doc = __import__("yaml").safe_load(H200)
    rec = system.normalize(doc)
    assert rec["kind"] == "cuda" and rec["vendor"] == "NVIDIA" and rec["device_name"] == "NVIDIA H200-SXM-141GB"
    assert (rec["accelerators_per_node"], rec["nodes"], rec["cpu_sockets"], rec["cores_physical"]) == (8, 1, 2, 112)
    assert rec["memory_bytes"] == 141 * 10**9 and rec["host_memory_bytes"] == 2 * 2**40
    assert system.usage(doc) == {"accelerators": 8, "parallelism": {"tp": 8}}
    assert system.accelerators_of(rec) == 8
    # published sizes: a count of modules, binary and decimal units; a configuration names no size
    assert system.parse_size("24x 64GB") == 24 * 64 * 10**9
    assert system.parse_size("1.5TiB") == int(1.5 * 2**40)
    assert system.parse_size("HBM3") is None and system.parse_size("N/A") is None
    # a CPU-only system: no accelerator, the CPU is its device
    cpu = system.normalize({"cpu": {"model": "AMD EPYC 9655", "sockets": 2}})
    assert (cpu["kind"], cpu["device_name"], cpu["accelerators_per_node"]) == ("cpu", "AMD EPYC 9655", 0)


@pytest.mark.core
@pytest.mark.parametrize(
    ("doc", "words"),
    [
        ({"accelerator": {"name": "X"}, "accelerators_per_node": "eight"}, "accelerators_per_node is 'eight'"),
        ({"accelerator": {"name": "X", "memory": "lots"}}, "accelerator: memory 'lots' is not a size"),
        ({"accelerators_per_node": 8}, "no accelerator name"),
        ({"system_name": "x"}, "names no accelerator and no CPU"),
        ({"accelerator": {"name": "X"}, "gpus": 8}, "unknown field 'gpus'"),
        ({"accelerator": {"name": "X"}, "nodes": 0}, "nodes is 0"),
        ({"accelerator": {"name": "X"}, "availability": "soon"}, "availability 'soon'"),
        ({"accelerator": {"name": "X"}, "parallelism": {"tp": 8, "sp": 2}}, "unknown key 'sp'"),
        ({"accelerator": {"name": "X"}, "parallelism": {"dp_attention": "yes"}}, "dp_attention must be true or false"),
    ],
)
def test_a_bad_description_names_its_field(doc, words):
    with pytest.raises(system.SystemError, match=words.replace("(", r"\(")):
        system.normalize(doc, "h.yaml")
        system.usage(doc, "h.yaml")


@pytest.mark.core
def test_a_device_keeps_its_id_as_a_system_of_one_and_counts_make_other_systems():
    gpu = {
        "kind": "cuda",
        "vendor": "NVIDIA",
        "device_name": "NVIDIA H100 80GB HBM3",
        "memory_bytes": 80 * 2**30,
        "compute_capability": "9.0",
        "cpu_model": "Intel Xeon",
        "cores_logical": 32,
        "arch": "x86_64",
    }
    one = identity.hardware_id(gpu)
    assert identity.hardware_id({**gpu, "accelerators_per_node": 1, "nodes": 1}) == one
    assert identity.hardware_id({**HARDWARE, "accelerators_per_node": 0}) == identity.hardware_id(HARDWARE)
    eight = identity.hardware_id({**gpu, "accelerators_per_node": 8})
    assert (
        len(
            {
                one,
                eight,
                identity.hardware_id({**gpu, "accelerators_per_node": 8, "nodes": 2}),
                identity.hardware_id({**gpu, "accelerators_per_node": 8, "interconnect": "NVLink"}),
            }
        )
        == 4
    )
    # the host's name and sockets are no part of it: two identical machines are the same hardware
    assert identity.hardware_id({**gpu, "accelerators_per_node": 8, "cpu_sockets": 2}) == eight


def test_a_machines_own_run_records_the_host_its_hardware_file_describes(tmp_path):
    """Seen on an H200: the run's hardware row had the same id as `benchdb hardware --format yaml`
    but no CPU sockets or host memory, which the description gives."""
    r = cli("hardware", "--format", "yaml")
    assert r.exit_code == 0, r.output
    (tmp_path / "me.yaml").write_text(r.output)
    rec = system.load(tmp_path / "me.yaml")
    run = cli(
        "run",
        "--backend",
        "numpy",
        "--model",
        "matmul:32",
        "--min-time",
        "50ms",
        "--max-time",
        "100ms",
        "--out",
        tmp_path / "r",
    )
    assert run.exit_code == 0, run.output
    db = tmp_path / "w.duckdb"
    assert cli("ingest", tmp_path / "r", "--db", db).exit_code == 0
    (row,) = db_rows(
        db,
        "SELECT hardware_id, cpu_sockets, host_memory_bytes, cores_physical, accelerators_per_node, "
        "nodes FROM hardware",
    )
    assert row["hardware_id"] == identity.hardware_id(rec)
    assert row["cpu_sockets"] == rec["cpu_sockets"] and row["cpu_sockets"]
    assert row["host_memory_bytes"] and abs(row["host_memory_bytes"] - rec["host_memory_bytes"]) < 2**30
    assert (row["cores_physical"], row["accelerators_per_node"], row["nodes"]) == (rec["cores_physical"], 0, 1)


@pytest.mark.core
def test_an_import_with_a_hardware_file_records_the_system_and_its_parallelism(tmp_path):
    hw = tmp_path / "8xh200.yaml"
    hw.write_text(H200)
    src = FIXTURES / "interop" / "serving" / "vllm" / "c2_detailed.json"
    out, db = tmp_path / "out", tmp_path / "w.duckdb"
    r = cli("import", "vllm-serve", src, "--hardware-file", hw, "--out", out)
    assert r.exit_code == 0, r.output
    assert cli("ingest", out, "--db", db).exit_code == 0
    (s,) = db_rows(db, "SELECT * FROM systems")
    assert (s["accelerator"], s["accelerators_per_node"], s["nodes"], s["accelerators"]) == (
        "NVIDIA H200-SXM-141GB",
        8,
        1,
        8,
    )
    assert (s["system_name"], s["cpu_sockets"], s["interconnect"], s["results"]) == (
        "8x H200 SXM (test)",
        2,
        "NVLink 4",
        1,
    )
    (res,) = db_rows(db, "SELECT accelerators, parallelism::VARCHAR AS p, options ->> 'parallelism' AS o FROM results")
    assert res["accelerators"] == 8 and json.loads(res["p"]) == json.loads(res["o"]) == {"tp": 8}


@pytest.mark.core
def test_a_bad_hardware_file_costs_the_import_one_line_and_writes_nothing(tmp_path):
    hw = tmp_path / "bad.yaml"
    hw.write_text("accelerator: {name: NVIDIA H200}\naccelerators_per_node: -1\n")
    src = FIXTURES / "interop" / "serving" / "vllm" / "c2_detailed.json"
    r = cli("import", "vllm-serve", src, "--hardware-file", hw, "--out", tmp_path / "out")
    assert r.exit_code == 2 and "Traceback" not in r.output
    assert f"--hardware-file {hw}: accelerators_per_node is -1" in r.output
    assert not (tmp_path / "out").exists()


def test_devices_already_in_a_warehouse_become_systems_of_one(tmp_path):
    """Not core: the golden warehouse is a DuckDB 2.x file, which the dependency floors' DuckDB cannot
    open (as tests/guarantees/test_upgrade.py). The golden 0.1 warehouse migrates in place: its CPU rows have no
    accelerator, and every result ran on the whole (one-device) system."""
    target = tmp_path / "old.duckdb"
    with gzip.open(FIXTURES / "warehouse_v0.1.0_schema2.duckdb.gz", "rb") as src, open(target, "wb") as dst:
        shutil.copyfileobj(src, dst)
    before = db_rows(target, "SELECT hardware_id, kind FROM hardware ORDER BY 1")
    proc = benchdb_cmd("db", "upgrade", "--db", str(target), check=True)
    assert "0010_systems" in proc.stdout
    after = db_rows(target, "SELECT hardware_id, kind, accelerators_per_node, nodes FROM hardware ORDER BY 1")
    assert [(h["hardware_id"], h["kind"]) for h in after] == [(h["hardware_id"], h["kind"]) for h in before]
    assert all(h["nodes"] == 1 and h["accelerators_per_node"] == (0 if h["kind"] == "cpu" else 1) for h in after)
    counts = db_rows(
        target,
        "SELECT count(*) AS n, count(accelerators) AS known, max(accelerators) AS most "
        "FROM results r JOIN hardware h USING (hardware_id) WHERE h.kind = 'cpu'",
    )[0]
    assert counts["n"] > 0 and counts["known"] == counts["n"] and counts["most"] == 0


@pytest.mark.core
def test_a_native_result_and_its_system_after_ingest(tmp_path):
    run = make_run()
    write_file(tmp_path / "r", make_meta(run))
    db = tmp_path / "w.duckdb"
    assert cli("ingest", tmp_path / "r", "--db", db).exit_code == 0
    (s,) = db_rows(db, "SELECT accelerator, accelerators_per_node, nodes, cpu_model, results FROM systems")
    assert s == {
        "accelerator": None,
        "accelerators_per_node": 0,
        "nodes": 1,
        "cpu_model": "Test CPU 9000",
        "results": 1,
    }
    assert db_rows(db, "SELECT accelerators, parallelism FROM results") == [{"accelerators": 0, "parallelism": None}]

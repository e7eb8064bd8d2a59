"""What an NVIDIA H200 gave for the kernelized modes and its system description
(benchmarks/gpu/kernels.sh and system.sh), replayed with no GPU:

- a ~250 M-parameter LLaMA (benchdb.testing.tiny_llm --size small, bf16, random weights) measured
  eager, ``--mode kernels`` and ``--mode kernels+compile``, its 33 RMSNorm layers swapped for a Triton
  RMSNorm from a local kernel repository (``--kernels LlamaRMSNorm=REPO:TritonRMSNorm``);
- ``benchdb hardware --format yaml`` on the same machine (``hardware.yaml``).

The contract files are ingested as they came back; the system the runs recorded, the kernels that
were applied, their agreement with fp32 and the optimal table's answer are checked.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner
from conftest import ingest_fixture

from benchdb.cli import main
from benchdb.schema import identity, system

pytestmark = pytest.mark.core

FIXTURE = Path(__file__).parents[1] / "fixtures" / "gpu" / "h200_kernels"


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory) -> Path:
    return ingest_fixture(FIXTURE, tmp_path_factory.mktemp("h200k") / "h200.duckdb", 6)


def _rows(db: Path, sql: str) -> list[tuple]:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute(sql).fetchall()


def test_the_runs_hardware_is_the_system_the_machine_describes(warehouse):
    described = system.load(FIXTURE / "hardware.yaml")
    assert described["device_name"] == "NVIDIA H200" and described["accelerators_per_node"] == 1
    assert described["cores_physical"] == 16 and described["cpu_sockets"] == 1
    ((hid, kind, name, cc, per_node, nodes, accelerators),) = _rows(
        warehouse,
        "SELECT DISTINCT h.hardware_id, h.kind, h.device_name, h.compute_capability, "
        "h.accelerators_per_node, "
        "h.nodes, r.accelerators FROM results r JOIN hardware h USING (hardware_id)",
    )
    assert (kind, name, cc, per_node, nodes, accelerators) == ("cuda", "NVIDIA H200", "9.0", 1, 1, 1)
    assert hid == identity.hardware_id(described)


def test_every_kernelized_result_swapped_all_33_norms_for_the_local_triton_kernel(warehouse):
    rows = _rows(
        warehouse,
        """SELECT mode, batch_size, validity, json_extract_string(extra, '$.kernels.replaced'),
                                      json_extract_string(extra, '$.kernels.layers[0].kernel')
                               FROM results WHERE metric = 'latency_s' ORDER BY mode, batch_size""",
    )
    assert [(m, b) for m, b, *_ in rows] == [
        ("eager", 1),
        ("eager", 8),
        ("kernels", 1),
        ("kernels", 8),
        ("kernels+compile", 1),
        ("kernels+compile", 8),
    ]
    assert {v for _, _, v, _, _ in rows} == {"valid"}
    kernelized = [r for r in rows if r[0] != "eager"]
    assert {r[3] for r in kernelized} == {"33"}
    assert {r[4] for r in kernelized} == {"_triton_rmsnorm_cuda.layers.TritonRMSNorm.forward"}


def test_the_kernel_agrees_with_fp32_as_closely_as_bf16_eager_does(warehouse):
    got = {
        (m, b, metric): v
        for m, b, metric, v in _rows(
            warehouse,
            """SELECT r.mode, r.batch_size, m.metric, m.median FROM results r JOIN result_metrics m
                      USING (result_id) WHERE m.metric IN ('cosine_similarity', 'token_agreement')""",
        )
    }
    for mode in ("kernels", "kernels+compile"):
        for b in (1, 8):
            assert got[(mode, b, "cosine_similarity")] > 0.9998
            assert got[(mode, b, "token_agreement")] >= got[("eager", b, "token_agreement")] - 0.01


def test_kernels_then_compile_each_cut_the_latency_and_the_table_names_kernels_compile(warehouse):
    lat = {
        (m, b): v
        for m, b, v in _rows(warehouse, "SELECT mode, batch_size, median FROM results WHERE metric = 'latency_s'")
    }
    for b in (1, 8):
        assert lat[("kernels+compile", b)] < lat[("kernels", b)] < lat[("eager", b)]
    # at batch 8 the model stops waiting on kernel launches: compile's gain is largest there
    assert lat[("eager", 8)] / lat[("kernels+compile", 8)] > lat[("eager", 1)] / lat[("kernels+compile", 1)]
    res = CliRunner().invoke(main, ["report", "--optimal-hardware", "--db", str(warehouse)])
    assert res.exit_code == 0, res.output
    assert "kernels+compile" in res.output and "unconfirmed" in res.output

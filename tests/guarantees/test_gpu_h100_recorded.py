"""What an NVIDIA H100 gave (benchmarks/gpu/serve.sh), replayed with no GPU:

- ``transformers serve`` (continuous batching) of a ~250 M-parameter LLaMA in bf16, swept by
  ``benchdb run --backend openai --server ...`` at concurrency 1, 16 and 64 with NVML energy, and
  measured at ``--url`` beside an independent client;
- PyTorch eager against ``compile:reduce-overhead`` (CUDA graphs) and ``compile:max-autotune``;
- nvidia-smi's own 100 ms power log over the serving sweep (``smi_serving.csv``).

The contract files are ingested as they came back; the serving report's rows, the precision the
server ran, the energy per output token against nvidia-smi's integral and the compile speedups are
checked.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner
from conftest import ingest_fixture

from benchdb.cli import main

pytestmark = pytest.mark.core

FIXTURE = Path(__file__).parents[1] / "fixtures" / "gpu" / "h100"
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks" / "gpu"))


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory) -> Path:
    return ingest_fixture(FIXTURE, tmp_path_factory.mktemp("h100") / "h100.duckdb", 10)


def test_the_served_model_is_recorded_in_its_own_precision_with_energy_per_token(warehouse):
    with duckdb.connect(str(warehouse), read_only=True) as con:
        rows = con.execute("""SELECT concurrency, precision, hardware_name, engine, energy_per_output_token_j,
                                     output_throughput_per_device, ttft_p50_s, tpot_p50_s
                              FROM serving_points WHERE hardware_name LIKE 'NVIDIA H100%'
                              ORDER BY concurrency""").fetchall()
        invalid = con.execute("""SELECT input_shape, validity_reasons FROM results
                                 WHERE backend = 'openai' AND validity = 'invalid'""").fetchall()
    # concurrency 1 ran 8 requests in its 12 s: invalid (too few), never a row of the report
    assert [r[0] for r in rows] == [16, 64]
    assert {r[1] for r in rows} == {"bf16"} and {r[3] for r in rows} == {"transformers"}
    assert any("concurrency=1" in shape and "too_few_samples" in str(why) for shape, why in invalid)
    (c16, c64) = rows
    # more load: more tokens per second and fewer joules per token, at a worse TTFT
    assert c64[5] > c16[5] > 0 and 0 < c64[4] < c16[4] < 1.0 and c64[6] > c16[6]


def test_energy_per_token_agrees_with_nvidia_smis_own_power_log(warehouse, tmp_path):
    from compare import smi
    from compare_serving import integral

    # compare.smi reads WORK/smi.csv: the fixture's log under that name
    (tmp_path / "smi.csv").write_bytes((FIXTURE / "smi_serving.csv").read_bytes())
    log = smi(tmp_path)
    with duckdb.connect(str(warehouse), read_only=True) as con:
        points = con.execute("""SELECT r.input_shape, r.extra, max(s.value) FILTER (WHERE s.metric = 'energy_j')
                                FROM results r JOIN samples s USING (result_id)
                                WHERE r.backend = 'openai' AND r.precision = 'bf16' GROUP BY ALL""").fetchall()
    checked = 0
    for shape, extra, joules in points:
        extra = json.loads(extra) if isinstance(extra, str) else extra
        t0, t1 = extra["energy_window_s"]
        theirs = integral(log, t0, t1, "power.draw")
        assert theirs is not None, shape
        assert joules == pytest.approx(theirs, rel=0.02), shape
        checked += 1
    assert checked == 3


def test_cuda_graphs_and_autotuning_beat_eager_on_the_h100(warehouse):
    with duckdb.connect(str(warehouse), read_only=True) as con:
        med = {
            (m.rsplit("/", 1)[-1], mode): v
            for m, mode, v in con.execute(
                """SELECT model_id, mode, median FROM results_latest
               WHERE backend = 'pytorch' AND metric = 'latency_s' AND validity = 'valid'"""
            ).fetchall()
        }
    bert = "bert-base"
    assert set(med) == {
        (bert, "eager"),
        (bert, "compile:reduce-overhead"),
        (bert, "compile:max-autotune"),
        ("llm", "eager"),
        ("llm", "compile:reduce-overhead"),
    }
    assert med[bert, "compile:reduce-overhead"] < med[bert, "compile:max-autotune"] < med[bert, "eager"]
    assert med["llm", "compile:reduce-overhead"] < med["llm", "eager"] / 4


def test_the_serving_report_shows_the_h100_rows(warehouse):
    res = CliRunner().invoke(main, ["report", "--serving", "--db", str(warehouse), "--format", "md", "--wide"])
    assert res.exit_code == 0, res.output
    assert "NVIDIA H100 80GB HBM3" in res.output and "bf16" in res.output and "c=64" in res.output
    # the same server measured at --url: its declared hardware, not the client's
    assert "gpu-box" in res.output


def test_the_h100_serving_points_read_tokens_per_megawatt_through_the_chassis_model(warehouse):
    """benchdb's own measurement: the server GPU's energy over each load point (NVML) is its mean
    power, and the chassis model turns it into facility power for tokens/s per MW."""
    from benchdb.analysis import system_power

    with duckdb.connect(str(warehouse), read_only=True) as con:
        points = con.execute("""SELECT interactivity, device_power_w, total_throughput_per_device FROM serving_points
                                WHERE hardware_name LIKE 'NVIDIA H100%' ORDER BY concurrency""").fetchall()
    assert all(100 < watts < 700 for _, watts, _ in points)  # an H100 SXM serving, under its 700 W TDP
    x, watts, per_gpu = points[0]
    res = CliRunner().invoke(
        main, ["report", "--serving", "--cost-at", str(x), "--db", str(warehouse), "--format", "json"]
    )
    assert res.exit_code == 0, res.output
    (row,) = [r for r in json.loads(res.output)["serving_cost"] if r["hardware_name"].startswith("NVIDIA H100")]
    modelled = system_power.system_power("NVIDIA H100 80GB HBM3", watts, 1)
    assert isinstance(modelled, system_power.SystemPower) and modelled.extrapolated  # 1 GPU of an 8-GPU HGX
    assert row["gpu_w"] == pytest.approx(watts) and row["facility_w_per_gpu"] == pytest.approx(modelled.facility_w)
    assert row["tokens_per_s_per_mw"] == pytest.approx(row["total_per_gpu"] * 1e6 / modelled.facility_w)
    assert "HGX H100 8-GPU (air), PUE 1.3, extrapolated to a full chassis" in row["power_basis"]
    # the figures docs/guides/serving.md quotes: 128.5 W measured at 16 concurrent requests, 451 W all-in
    assert round(watts, 1) == 128.5 and round(row["facility_w_per_gpu"], 1) == 451.0

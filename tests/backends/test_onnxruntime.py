"""benchdb.backends.onnxruntime.backend: a session is keyed to the device of its first execution
provider, and the memory it records is its own (the increment over what was loaded before it)."""

from __future__ import annotations

from dataclasses import replace

import duckdb
import pytest
from click.testing import CliRunner
from conftest import QUICK_RUN, need_module
from support import shared_exports

from benchdb.cli import main
from benchdb.harness import hardware
from benchdb.harness.scenario import RunOptions
from benchdb.harness.timing import StopRule
from benchdb.plan.planning import build_plan, hardware_ids
from benchdb.schema import identity

QUICK = QUICK_RUN


def invoke(*args, env=None):
    return CliRunner().invoke(main, list(args), env=env)


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    """The session's shared export cache (tests/support/shared_exports.py)."""
    with shared_exports.used(tmp_path_factory) as path:
        yield path


@pytest.mark.core
def test_onnxruntime_with_a_gpu_provider_is_keyed_to_that_device(monkeypatch):
    """No GPU here: the installed onnxruntime stands in for onnxruntime-gpu by listing the CUDA provider."""
    need_module("onnxruntime", "benchdb[onnx]")
    import onnxruntime as ort

    real = ort.get_available_providers()
    monkeypatch.setattr(ort, "get_available_providers", lambda: ["CUDAExecutionProvider", *real])
    rule = StopRule()
    cpu = RunOptions("onnxruntime", ("tiny:bert",), seq_lens=(8,), threads=2, rule=rule)
    gpu = replace(cpu, backend_options={"providers": ("CUDA", "CPU")})
    [cpu_sc] = build_plan([cpu])[0].scenarios
    [gpu_sc] = build_plan([gpu])[0].scenarios
    assert cpu_sc.device == "cpu" and gpu_sc.device == "cuda:0"
    assert gpu_sc.options["providers"] == ["CUDA", "CPU"]
    ids = hardware_ids(build_plan([cpu, gpu]))
    assert ids[("onnxruntime", "cpu")] == identity.hardware_id(hardware.cpu_fingerprint())
    assert ids[("onnxruntime", "cuda:0")] != ids[("onnxruntime", "cpu")]
    fp = hardware.device_fingerprint("cuda:0")
    assert fp["kind"] == "cuda" and fp["device_name"] != hardware.cpu_fingerprint()["device_name"]


def test_onnxruntime_memory_increment_excludes_pytorch_and_grows_with_batch(cache, tmp_path):
    out = tmp_path / "res"
    r = invoke(
        "run",
        "--backend",
        "onnxruntime",
        "--model",
        "tiny:bert",
        "--batch-sizes",
        "1,128",
        "--out",
        str(out),
        "--no-isolation",
        *QUICK,
    )
    assert r.exit_code == 0, r.output
    rows = duckdb.sql(f"""select batch_size, metric, max(value) from '{out}/**/*.parquet'
                          where metric in ('peak_rss_bytes', 'rss_before_bytes', 'peak_rss_increment_bytes')
                          group by all""").fetchall()
    got = {(bs, metric): value for bs, metric, value in rows}
    for bs in (1, 128):
        peak, before, inc = (got[(bs, m)] for m in ("peak_rss_bytes", "rss_before_bytes", "peak_rss_increment_bytes"))
        assert inc > 0 and inc == pytest.approx(peak - before)
        # the baseline holds the interpreter, PyTorch and the model kept for verification
        assert before > 100 * 2**20 and inc < peak
    # the whole-process peak hides it; the session's own memory grows with the batch (activations)
    assert got[(128, "peak_rss_increment_bytes")] > got[(1, "peak_rss_increment_bytes")] + 16 * 2**20

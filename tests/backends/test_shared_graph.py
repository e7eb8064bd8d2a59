"""ONNX Runtime and OpenVINO runners: every key class through both, verified against PyTorch fp32."""

import os
import subprocess
import sys

import duckdb
import numpy as np
import pytest
from click.testing import CliRunner
from conftest import QUICK_RUN
from support import shared_exports

from benchdb.backends.shared import graph, models
from benchdb.backends.shared import onnx_export as export
from benchdb.cli import main
from benchdb.errors import BenchdbError
from benchdb.harness.scenario import RunOptions
from benchdb.schema import contract

QUICK = QUICK_RUN

#: What each key class does through both exported-graph backends on this CPU (torch 2.13).
EXPECTED = {t: "ok" for t in models.KEY_CLASSES}
EXPECTED["llava_next"] = "unsupported"


def invoke(*args, env=None):
    return CliRunner().invoke(main, list(args), env=env)


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    """The session's shared export cache (tests/support/shared_exports.py): the sweep's exports
    serve test_ortweb.py's runs of the same models at the same shapes, and the other way round."""
    with shared_exports.used(tmp_path_factory) as path:
        yield path


@pytest.fixture(scope="module")
def sweep(cache, tmp_path_factory):
    """All 13 classes through onnxruntime then openvino (verify-only, default seq len 128), ingested."""
    tmp = tmp_path_factory.mktemp("sweep")
    out, db = tmp / "res", tmp / "w.duckdb"
    for backend in ("onnxruntime", "openvino"):
        r = invoke(
            "run", "--backend", backend, "--model", "list:tiny", "--verify-only", "--no-isolation", "--out", str(out)
        )
        assert r.exit_code == 0, r.output + repr(r.exception)
    assert invoke("ingest", str(out), "--db", str(db)).exit_code == 0
    con = duckdb.connect(str(db), read_only=True)
    yield con
    con.close()


@pytest.mark.slow  # its fixture exports tiny models and runs them through both backends
@pytest.mark.parametrize("backend", ["onnxruntime", "openvino"])
def test_every_key_class_has_its_expected_status(sweep, backend):
    rows = sweep.execute(
        "select model_id, status, error, extra, input_shape from results where backend = ? order by 1", [backend]
    ).fetchall()
    got = {m.removeprefix("tiny:"): (status, error, extra) for m, status, error, extra, _ in rows}
    shapes = {m: shape for m, *_, shape in rows}
    assert shapes["tiny:bert"] == shapes["tiny:llama"] == "seq_len=128"  # the default
    assert shapes["tiny:clip"] == "seq_len=128,image=32x32"
    assert {k: v[0] for k, v in got.items()} == EXPECTED
    status, error, _ = got["llava_next"]
    assert error.startswith("no exporter could convert this model: dynamo-static: ")
    assert "legacy-dynamic: " in error
    if backend == "openvino":
        assert "torch.export: " in error


@pytest.mark.slow  # its fixture exports tiny models and runs them through both backends
@pytest.mark.parametrize("backend", ["onnxruntime", "openvino"])
def test_ok_classes_agree_with_pytorch(sweep, backend):
    rows = sweep.execute(
        """
        select r.model_id, m.median from results r join result_metrics m using (result_id)
        where r.backend = ? and r.status = 'ok' and m.metric = 'max_rel_err'""",
        [backend],
    ).fetchall()
    assert len(rows) == 12
    for model_id, rel in rows:
        assert rel <= export.TOLERANCE["fp32"], model_id


@pytest.mark.slow  # its fixture exports tiny models and runs them through both backends
def test_export_routes_are_recorded(sweep):
    routes = dict(
        sweep.execute(
            "select model_id, json_extract_string(extra, '$.route') from results "
            "where backend = 'onnxruntime' and status = 'ok'"
        ).fetchall()
    )
    assert routes["tiny:bert"] == "onnx:dynamo-static"
    assert routes["tiny:whisper"] == "onnx:dynamo-static"
    assert routes["tiny:llava"] == "onnx:legacy-dynamic"  # dynamo cannot export LLaVA here
    ov = dict(
        sweep.execute(
            "select model_id, json_extract_string(extra, '$.route') from results "
            "where backend = 'openvino' and status = 'ok'"
        ).fetchall()
    )
    assert set(ov.values()) == {"openvino:onnx"}


@pytest.fixture(scope="module")
def timed(tmp_path_factory):
    """tiny:vit at batch sizes 1 and 2, timed: ONNX Runtime at two graph levels, OpenVINO at two
    precisions and both hints, from a fresh export cache; the files' footers and the warehouse."""
    tmp = tmp_path_factory.mktemp("timed")
    out, db = tmp / "res", tmp / "w.duckdb"
    old = os.environ.get("BENCHDB_CACHE")
    os.environ["BENCHDB_CACHE"] = str(tmp / "fresh-cache")
    try:
        args = ["--model", "tiny:vit", "--batch-sizes", "1,2", "--out", str(out), "--no-isolation", *QUICK]
        r = invoke("run", "--backend", "onnxruntime", "--mode", "opt-all,opt-disabled", *args)
        assert r.exit_code == 0, r.output
        r = invoke("run", "--backend", "openvino", "--precision", "fp32,bf16", "--mode", "latency,throughput", *args)
        assert r.exit_code == 0, r.output
    finally:
        if old is None:
            os.environ.pop("BENCHDB_CACHE", None)
        else:
            os.environ["BENCHDB_CACHE"] = old
    assert invoke("ingest", str(out), "--db", str(db)).exit_code == 0
    files = sorted(out.rglob("*.parquet"))
    con = duckdb.connect(str(db), read_only=True)
    yield [contract.read_footer(f) for f in files], con
    con.close()


@pytest.mark.slow  # its fixture exports tiny models and runs them through both backends
def test_timed_runs_and_export_cache(timed):
    footers, _ = timed
    assert len(footers) == 12
    assert all(f.scenario["status"] == "ok" for f in footers), [f.scenario["error"] for f in footers]
    ov = [f for f in footers if f.scenario["backend"] == "openvino"]
    assert {(f.scenario["precision"], f.scenario["extra"]["precision_used"]) for f in ov} <= {
        ("fp32", "fp32"),
        ("bf16", "bf16"),
        ("bf16", "fp32"),
    }
    assert any(f.scenario["extra"]["precision_used"] == "fp32" for f in ov)
    # each artifact (ONNX and OpenVINO IR, per batch size: dynamo exports are static) is made once,
    # then served from the cache to the other modes and precisions
    cached = [f.scenario["extra"]["export_cached"] for f in footers]
    assert cached.count(False) == 4 and cached.count(True) == 8


@pytest.mark.slow  # its fixture exports tiny models and runs them through both backends
def test_openvino_throughput_hint_runs_the_optimal_number_of_async_requests(timed):
    footers, con = timed
    ov = [f for f in footers if f.scenario["backend"] == "openvino"]
    for f in ov:
        sc = f.scenario
        if sc["mode"] == "throughput":
            n = sc["options"]["num_requests"]  # part of the identity: what ran
            assert isinstance(n, int) and n >= 1
            assert sc["extra"]["num_requests"] == n and sc["extra"]["api"] == "async"
        else:
            assert "num_requests" not in sc["options"] and "num_requests" not in sc["extra"]
    rows = con.execute("""
        select r.mode, r.batch_size, r.metric, r.unit, r.n, r.median, r.throughput, t.median, t.n, t.unit
        from results r left join result_metrics t on t.result_id = r.result_id and t.metric = 'throughput_items_s'
        where r.backend = 'openvino'""").fetchall()
    assert sorted({r[0] for r in rows}) == ["latency", "throughput"]
    for mode, bs, metric, unit, n, median, throughput, measured, n_measured, measured_unit in rows:
        assert (metric, unit) == ("latency_s", "s") and n >= 10  # latency of each request
        if mode == "throughput":
            # items completed per second of wall time, one figure; results.throughput is that figure
            assert (n_measured, measured_unit) == (1, "items/s") and measured > 0
            assert throughput == pytest.approx(measured)
        else:
            assert measured is None and throughput == pytest.approx(bs / median)


def test_second_run_uses_the_export_cache(cache, tmp_path):
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    def run_once(sub):
        out = tmp_path / sub
        r = invoke(
            "run",
            "--backend",
            "onnxruntime",
            "--model",
            "tiny:qwen2",
            "--seq-lens",
            "12",
            "--verify-only",
            "--no-isolation",
            "--out",
            str(out),
        )
        assert r.exit_code == 0, r.output
        (path,) = out.rglob("*.parquet")
        table = pq.read_table(path)
        return contract.read_footer(path), table.filter(pc.equal(table.column("metric"), "export_s")).num_rows

    (first, first_export), (second, second_export) = run_once("a"), run_once("b")
    assert first.scenario["extra"]["export_cached"] is False and first_export == 1
    assert second.scenario["extra"]["export_cached"] is True and second_export == 0
    assert second.scenario["extra"]["route"] == first.scenario["extra"]["route"]


def test_missing_execution_provider_is_unavailable(tmp_path):
    r = invoke("run", "--backend", "onnxruntime", "--model", "tiny:bert", "--ep", "CUDA", "--out", str(tmp_path / "o"))
    assert r.exit_code == 2
    assert r.stderr.startswith("benchdb: error: execution provider CUDA is unavailable in this onnxruntime (")
    assert r.stderr.strip().endswith("install it with: pip install onnxruntime-gpu")
    assert not (tmp_path / "o").exists()
    r = invoke("run", "--backend", "openvino", "--model", "tiny:bert", "--device", "NPU", "--out", str(tmp_path / "o"))
    assert r.exit_code == 2 and "OpenVINO device NPU is unavailable here (available: CPU" in r.stderr


def test_broken_openvino_install_is_reported_not_a_crash(tmp_path):
    shadow = tmp_path / "shadow" / "openvino"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text("raise ImportError('libopenvino.so: cannot open shared object file')\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "shadow")}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchdb",
            "run",
            "--backend",
            "openvino",
            "--model",
            "tiny:bert",
            "--out",
            str(tmp_path / "o"),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        "benchdb: error: backend openvino is unavailable: importing openvino failed "
        "(libopenvino.so: cannot open shared object file); reinstall it with: "
        "pip install 'benchdb[openvino]'"
    )


def test_dynamo_exports_in_one_process_share_one_torchlib_registry():
    import torch
    from torch.onnx._internal.exporter import _registration

    cls = _registration.ONNXRegistry
    before = cls.__dict__["from_torchlib"]
    with export.one_torchlib_registry():
        first = cls.from_torchlib(opset_version=export.OPSET)
        assert cls().from_torchlib(opset_version=export.OPSET) is first  # as torch.onnx.export calls it
        assert first.opset_version == export.OPSET and first.is_registered(torch.ops.aten.addmm.default)
    assert cls.__dict__["from_torchlib"] is before  # torch's own again after the block


def test_compare_flags_disagreement():
    ref = np.array([[1.0, -2.0], [0.5, 4.0]])
    assert export.compare(ref, ref + 1e-6, "fp32")[2] is True
    abs_err, rel, ok = export.compare(ref, ref + 0.2, "fp32")
    assert ok is False and abs_err == pytest.approx(0.2) and rel == pytest.approx(0.05)
    assert export.compare(ref, ref + 0.1, "bf16")[2] is True  # within bf16 tolerance
    assert export.compare(ref, ref[:1], "fp32") == (float("inf"), float("inf"), False)


def test_the_plan_takes_the_engines_modes_and_precisions_and_one_scenario_per_quantization_method():
    """graph.plan with ONNX Runtime's engine: a mode or precision the engine lacks is refused before
    anything runs; each quantized scenario carries its method (and calibration) in its options."""
    from benchdb.backends.onnxruntime.backend import ENGINE
    from benchdb.backends.onnxruntime.options import OnnxruntimeOptions

    def options(mode, precision):
        return OnnxruntimeOptions(threads=1)

    base = RunOptions("onnxruntime", ("tiny:bert",), seq_lens=(8,), threads=1, modes=("opt-all",))
    for bad, says in (
        ({"modes": ("eager",)}, "mode 'eager' is not valid for onnxruntime; use one of opt-all,"),
        ({"precisions": ("int3",)}, "precision 'int3' is not valid for onnxruntime; use one of fp32,"),
    ):
        with pytest.raises(BenchdbError) as err:
            graph.plan(ENGINE, RunOptions(**{**vars(base), **bad}), "cpu", options)
        assert str(err.value).startswith(says)
    opts = RunOptions(**{**vars(base), "precisions": ("fp32", "int8"), "quantization": "dynamic,static"})
    ((spec, scenarios),) = graph.plan(ENGINE, opts, "cpu", options)
    assert spec == "tiny:bert"
    got = [(sc.precision, sc.options.get("quantization"), sc.options.get("calibration")) for sc in scenarios]
    assert got == [("fp32", None, None), ("int8", "dynamic", None), ("int8", "static", "seeded-inputs:8")]
    assert {sc.backend for sc in scenarios} == {"onnxruntime"} and {sc.mode for sc in scenarios} == {"opt-all"}

"""ONNX Runtime and OpenVINO runners: every key class through both, verified against PyTorch fp32."""

import os
import subprocess
import sys

import duckdb
import numpy as np
import pytest
from click.testing import CliRunner

from benchdb.cli import main
from benchdb.backends import export, models
from benchdb.schema import contract

QUICK = ["--min-time", "0.05", "--max-time", "1", "--warmup", "1", "--min-iters", "10",
         "--target-ci", "0.5", "--max-background-cpu", "100"]

#: What each key class does through both exported-graph backends on this CPU (torch 2.13).
EXPECTED = {t: "ok" for t in models.KEY_CLASSES}
EXPECTED["llava_next"] = "unsupported"


def invoke(*args, env=None):
    return CliRunner().invoke(main, list(args), env=env)


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    path = tmp_path_factory.mktemp("export-cache")
    old = os.environ.get("BENCHDB_CACHE")
    os.environ["BENCHDB_CACHE"] = str(path)
    yield path
    if old is None:
        os.environ.pop("BENCHDB_CACHE", None)
    else:
        os.environ["BENCHDB_CACHE"] = old


@pytest.fixture(scope="module")
def sweep(cache, tmp_path_factory):
    """All 13 classes through onnxruntime then openvino (verify-only), ingested."""
    tmp = tmp_path_factory.mktemp("sweep")
    out, db = tmp / "res", tmp / "w.duckdb"
    for backend in ("onnxruntime", "openvino"):
        r = invoke("run", "--backend", backend, "--model", "list:tiny", "--seq-lens", "8", "--verify-only",
                   "--no-isolation", "--out", str(out))
        assert r.exit_code == 0, r.output + repr(r.exception)
    assert invoke("ingest", str(out), "--db", str(db)).exit_code == 0
    con = duckdb.connect(str(db), read_only=True)
    yield con
    con.close()


@pytest.mark.parametrize("backend", ["onnxruntime", "openvino"])
def test_every_key_class_has_its_expected_status(sweep, backend):
    rows = sweep.execute("select model_id, status, error, extra from results where backend = ? order by 1",
                         [backend]).fetchall()
    got = {m.removeprefix("tiny:"): (status, error, extra) for m, status, error, extra in rows}
    assert {k: v[0] for k, v in got.items()} == EXPECTED
    status, error, _ = got["llava_next"]
    assert error.startswith("no exporter could convert this model: dynamo-static: ")
    assert "legacy-dynamic: " in error
    if backend == "openvino":
        assert "torch.export: " in error


@pytest.mark.parametrize("backend", ["onnxruntime", "openvino"])
def test_ok_classes_agree_with_pytorch(sweep, backend):
    rows = sweep.execute("""
        select r.model_id, m.median from results r join result_metrics m using (result_id)
        where r.backend = ? and r.status = 'ok' and m.metric = 'max_rel_err'""", [backend]).fetchall()
    assert len(rows) == 12
    for model_id, rel in rows:
        assert rel <= export.TOLERANCE["fp32"], model_id


def test_export_routes_are_recorded(sweep):
    routes = dict(sweep.execute("select model_id, json_extract_string(extra, '$.route') from results "
                                "where backend = 'onnxruntime' and status = 'ok'").fetchall())
    assert routes["tiny:bert"] == "onnx:dynamo-static"
    assert routes["tiny:whisper"] == "onnx:dynamo-static"
    assert routes["tiny:llava"] == "onnx:legacy-dynamic"        # dynamo cannot export LLaVA here
    ov = dict(sweep.execute("select model_id, json_extract_string(extra, '$.route') from results "
                            "where backend = 'openvino' and status = 'ok'").fetchall())
    assert set(ov.values()) == {"openvino:onnx"}


def test_timed_runs_and_export_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("BENCHDB_CACHE", str(tmp_path / "fresh-cache"))
    out = tmp_path / "res"
    args = ["--model", "tiny:vit", "--batch-sizes", "1,2", "--out", str(out), "--no-isolation", *QUICK]
    r = invoke("run", "--backend", "onnxruntime", "--mode", "opt-all,opt-disabled", *args)
    assert r.exit_code == 0, r.output
    r = invoke("run", "--backend", "openvino", "--precision", "fp32,bf16", "--mode", "latency,throughput", *args)
    assert r.exit_code == 0, r.output
    files = sorted(out.rglob("*.parquet"))
    assert len(files) == 12
    footers = [contract.read_footer(f) for f in files]
    assert all(f.scenario["status"] == "ok" for f in footers), [f.scenario["error"] for f in footers]
    ov = [f for f in footers if f.scenario["backend"] == "openvino"]
    assert {(f.scenario["precision"], f.scenario["extra"]["precision_used"]) for f in ov} <= {
        ("fp32", "fp32"), ("bf16", "bf16"), ("bf16", "fp32")}
    assert any(f.scenario["extra"]["precision_used"] == "fp32" for f in ov)
    # each artifact (ONNX and OpenVINO IR, per batch size: dynamo exports are static) is made once,
    # then served from the cache to the other modes and precisions
    cached = [f.scenario["extra"]["export_cached"] for f in footers]
    assert cached.count(False) == 4 and cached.count(True) == 8


def test_second_run_uses_the_export_cache(cache, tmp_path):
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    def run_once(sub):
        out = tmp_path / sub
        r = invoke("run", "--backend", "onnxruntime", "--model", "tiny:qwen2", "--seq-lens", "12", "--verify-only",
                   "--no-isolation", "--out", str(out))
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
    proc = subprocess.run([sys.executable, "-m", "benchdb", "run", "--backend", "openvino", "--model", "tiny:bert",
                           "--out", str(tmp_path / "o")], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr.strip() == ("benchdb: error: backend openvino is unavailable: importing openvino failed "
                                   "(libopenvino.so: cannot open shared object file); reinstall it with: "
                                   "pip install 'benchdb[openvino]'")


def test_compare_flags_disagreement():
    ref = np.array([[1.0, -2.0], [0.5, 4.0]])
    assert export.compare(ref, ref + 1e-6, "fp32")[2] is True
    abs_err, rel, ok = export.compare(ref, ref + 0.2, "fp32")
    assert ok is False and abs_err == pytest.approx(0.2) and rel == pytest.approx(0.05)
    assert export.compare(ref, ref + 0.1, "bf16")[2] is True          # within bf16 tolerance
    assert export.compare(ref, ref[:1], "fp32") == (float("inf"), float("inf"), False)

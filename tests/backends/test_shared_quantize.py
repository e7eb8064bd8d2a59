"""Quantized precisions as axis values: real int8 through ONNX Runtime's quantization tools
(dynamic and static), int8 and int4 through OpenVINO NNCF, PyTorch dynamic int8, each with its
agreement with the fp32 reference; unsupported combinations recorded with their reason."""

import json

import duckdb
import pytest
from click.testing import CliRunner
from conftest import need_module

from benchdb.backends.shared import quantize
from benchdb.cli import main
from benchdb.errors import BenchdbError
from benchdb.harness.scenario import RunOptions

QUICK = [
    "--min-time",
    "0.05",
    "--max-time",
    "0.5",
    "--warmup",
    "1",
    "--min-iters",
    "5",
    "--target-ci",
    "0.5",
    "--max-background-cpu",
    "100%",
    "--batch-sizes",
    "2",
    "--seq-lens",
    "16",
]


def invoke(*args):
    return CliRunner().invoke(main, list(args))


#: A quantized (or bf16) result's agreement with the PyTorch fp32 reference. Seen here (2-core x86 VM):
#: cosine similarity 0.99986 to 0.99999998, max relative error 0.0002 to 0.049 (of the reference's
#: largest magnitude), token agreement 31/32, top-1 agreement 2/2. A route that ran other weights
#: falls far below the cosine bound; a wrong scale, which cosine cannot see, exceeds the error bound.
MIN_COSINE, MAX_REL_ERR, MIN_TOKEN_AGREEMENT = 0.99, 0.2, 0.75


def _close_to_fp32(metrics: dict, rid: str) -> None:
    cosine, rel_err = metrics[(rid, "cosine_similarity")], metrics[(rid, "max_rel_err")]
    assert MIN_COSINE < cosine <= 1.0 + 1e-9, cosine
    assert 0 < rel_err < MAX_REL_ERR, rel_err


@pytest.fixture(scope="module")
def cache(export_cache):
    return export_cache


def _results(out, tmp_path):
    tmp_path.mkdir(parents=True, exist_ok=True)
    db = tmp_path / "w.duckdb"
    r = invoke("ingest", str(out), "--db", str(db))
    assert r.exit_code == 0, r.output
    con = duckdb.connect(str(db), read_only=True)
    rows = con.execute("""SELECT model_id, backend, precision, status, error, options, extra, result_id
                          FROM results ORDER BY ALL""").fetchall()
    metrics = {
        (rid, m): v
        for rid, m, v in con.execute("SELECT result_id, metric, max(value) FROM samples GROUP BY ALL").fetchall()
    }
    con.close()
    return rows, metrics


@pytest.mark.slow
def test_onnxruntime_int8_dynamic_and_static(cache, tmp_path):
    out = tmp_path / "res"
    for method in ("dynamic", "static"):
        r = invoke(
            "run",
            "--backend",
            "onnxruntime",
            "--model",
            "tiny:bert",
            "--model",
            "tiny:vit",
            "--precision",
            "fp32,int8",
            "--quant",
            method,
            *QUICK,
            "--no-isolation",
            "--out",
            str(out),
        )
        assert r.exit_code == 0, r.output + repr(r.exception)
    rows, metrics = _results(out, tmp_path)
    quantized = [r for r in rows if r[2] == "int8"]
    assert len(quantized) == 4
    seen = set()
    for model, _, _, status, error, options, extra, rid in quantized:
        options, extra = json.loads(options), json.loads(extra)
        assert status == "ok", error
        seen.add((model, options["quantization"]))
        assert options.get("calibration") == ("seeded-inputs:8" if options["quantization"] == "static" else None)
        assert "+ort-" in extra["route"] and extra["route"].endswith("-int8")
        # agreement with the PyTorch fp32 reference, as a metric and in extra
        _close_to_fp32(metrics, rid)
        assert extra["tolerance"] is None
        assert metrics[(rid, "latency_s")] > 0
    assert seen == {(m, q) for m in ("tiny:bert", "tiny:vit") for q in ("dynamic", "static")}
    # fp32 results keep their identity: no quantization options, no agreement metrics
    for _, _, precision, _, _, options, _, rid in rows:
        if precision == "fp32":
            assert "quantization" not in json.loads(options) and (rid, "cosine_similarity") not in metrics
    # quantized files are cached: a second run quantizes nothing
    r = invoke(
        "run",
        "--backend",
        "onnxruntime",
        "--model",
        "tiny:bert",
        "--precision",
        "int8",
        "--quant",
        "static",
        *QUICK,
        "--no-isolation",
        "--out",
        str(tmp_path / "again"),
    )
    assert r.exit_code == 0, r.output
    again, metrics = _results(tmp_path / "again", tmp_path / "x")
    assert json.loads(again[0][6])["export_cached"] is True
    assert (again[0][7], "quantize_s") not in metrics


@pytest.mark.slow
def test_openvino_nncf_int8_and_int4(cache, tmp_path):
    need_module("nncf", "benchdb[quant]")
    out = tmp_path / "res"
    for precision, method in (("int8", "static"), ("int4", "weights")):
        r = invoke(
            "run",
            "--backend",
            "openvino",
            "--model",
            "tiny:bert",
            "--model",
            "tiny:vit",
            "--precision",
            precision,
            "--quant",
            method,
            *QUICK,
            "--no-isolation",
            "--out",
            str(out),
        )
        assert r.exit_code == 0, r.output + repr(r.exception)
    rows, metrics = _results(out, tmp_path)
    assert {(r[0], r[2]) for r in rows} == {(m, p) for m in ("tiny:bert", "tiny:vit") for p in ("int8", "int4")}
    for model, _, precision, status, error, options, extra, rid in rows:
        assert status == "ok", (model, precision, error)
        assert json.loads(options)["quantization"] == ("static" if precision == "int8" else "weights")
        assert "+nncf-" in json.loads(extra)["route"]
        _close_to_fp32(metrics, rid)


@pytest.mark.slow
def test_pytorch_dynamic_int8_and_agreement_of_every_non_fp32_result(tmp_path):
    out = tmp_path / "res"
    r = invoke(
        "run",
        "--backend",
        "pytorch",
        "--model",
        "tiny:bert",
        "--precision",
        "fp32,bf16,int8,int4",
        *QUICK,
        "--out",
        str(out),
    )
    assert r.exit_code == 0, r.output
    rows, metrics = _results(out, tmp_path)
    by = {r[2]: r for r in rows}
    assert by["int8"][3] == "ok" and json.loads(by["int8"][5])["quantization"] == "dynamic"
    for precision in ("bf16", "int8"):
        rid = by[precision][7]
        _close_to_fp32(metrics, rid)
    assert (by["fp32"][7], "cosine_similarity") not in metrics
    # a combination no route makes: recorded with its reason, the others still measured
    assert by["int4"][3] == "unsupported"
    assert by["int4"][4] == "pytorch has no int4 route in benchdb (available with: openvino)"


@pytest.mark.core
def test_each_backend_and_precision_has_its_routes_and_their_identity():
    """The routes themselves: a method per backend and quantized precision (the first the default),
    the options each puts in a scenario's identity, and what no route makes, with why."""
    assert quantize.method_for("onnxruntime", "int8", None) == "dynamic"
    assert quantize.method_for("openvino", "int8", None) == "static"
    assert quantize.method_for("openvino", "int4", "weights") == "weights"
    with pytest.raises(
        quantize.Unsupported, match=r"^onnxruntime has no int4 route in benchdb \(available with: openvino\)$"
    ):
        quantize.method_for("onnxruntime", "int4", None)
    with pytest.raises(quantize.Unsupported, match=r"^pytorch int8 has no method 'static' \(use dynamic\)$"):
        quantize.method_for("pytorch", "int8", "static")
    assert quantize.options("onnxruntime", "fp32", "static") == {}
    assert quantize.options("onnxruntime", "int8", "static") == {
        "quantization": "static",
        "calibration": "seeded-inputs:8",
    }
    assert quantize.options("openvino", "int4", None) == {"quantization": "weights"}
    # a route that does not exist keeps the method asked for: the unsupported result has its own identity
    assert quantize.options("pytorch", "int4", None) == {"quantization": "default"}
    assert quantize.options("pytorch", "int8", "static") == {"quantization": "static"}


@pytest.mark.core
def test_quant_names_methods_once_each_and_only_backends_with_routes_take_it(tmp_path):
    assert quantize.requested_methods(None) == [None]
    assert quantize.requested_methods("static, dynamic,static") == ["static", "dynamic"]
    with pytest.raises(BenchdbError, match=r"^--quant 'gptq' is not a quantization method; use one of dynamic, st"):
        quantize.requested_methods("dynamic,gptq")
    quantize.check_applies(RunOptions("onnxruntime", (), quantization="static"))
    with pytest.raises(BenchdbError, match=r"^--sts applies to onnxruntime, openvino, pytorch, not numpy$"):
        quantize.check_applies(RunOptions("numpy", (), sts="pairs.jsonl"))


@pytest.mark.core
def test_one_plan_holds_float_precisions_once_and_quantized_ones_per_method():
    from types import SimpleNamespace

    def expand(opts):
        scenarios = [SimpleNamespace(precision=p, quantization=opts.quantization) for p in opts.precisions]
        return [("tiny:bert", scenarios)]

    opts = RunOptions("onnxruntime", ("tiny:bert",), precisions=("fp32", "int8"), quantization="dynamic,static")
    ((spec, scenarios),) = quantize.per_method(opts, expand)
    assert spec == "tiny:bert"
    assert [(s.precision, s.quantization) for s in scenarios] == [
        ("fp32", "dynamic"),
        ("int8", "dynamic"),
        ("int8", "static"),
    ]
    with pytest.raises(BenchdbError, match=r"^--sts .*none.jsonl: No such file"):
        quantize.per_method(RunOptions("onnxruntime", (), sts="/nonexistent/none.jsonl"), expand)


def test_unsupported_routes_and_bad_methods(cache, tmp_path):
    out = tmp_path / "res"
    r = invoke(
        "run",
        "--backend",
        "onnxruntime",
        "--model",
        "tiny:bert",
        "--precision",
        "int4",
        *QUICK,
        "--no-isolation",
        "--out",
        str(out),
    )
    assert r.exit_code == 3, r.output  # nothing succeeded: every file records why
    rows, _ = _results(out, tmp_path)
    assert [(r[2], r[3], r[4]) for r in rows] == [
        ("int4", "unsupported", "onnxruntime has no int4 route in benchdb (available with: openvino)")
    ]
    r = invoke(
        "run",
        "--backend",
        "onnxruntime",
        "--model",
        "tiny:bert",
        "--precision",
        "int8",
        "--quant",
        "gptq",
        *QUICK,
        "--out",
        str(tmp_path / "bad"),
    )
    assert r.exit_code == 2
    assert r.output.strip().splitlines()[-1] == (
        "benchdb: error: --quant 'gptq' is not a quantization method; use one of dynamic, static, weights"
    )
    assert not (tmp_path / "bad").exists()
    r = invoke("run", "--backend", "numpy", "--model", "matmul:8", "--quant", "dynamic", "--out", str(tmp_path / "n"))
    assert r.exit_code == 2 and r.output.strip().splitlines()[-1] == (
        "benchdb: error: --quant applies to onnxruntime, openvino, pytorch, not numpy"
    )


@pytest.mark.slow
def test_optimal_hardware_honours_max_accuracy_drop(cache, tmp_path):
    out = tmp_path / "res"
    for backend, precisions, method in (
        ("onnxruntime", "fp32,int8", "static"),
        ("onnxruntime", "int8", "dynamic"),
        ("pytorch", "fp32,bf16", None),
    ):
        r = invoke(
            "run",
            "--backend",
            backend,
            "--model",
            "tiny:bert",
            "--precision",
            precisions,
            *(["--quant", method] if method else []),
            *QUICK,
            "--no-isolation",
            "--out",
            str(out),
        )
        assert r.exit_code == 0, r.output
    db = tmp_path / "w.duckdb"
    assert invoke("ingest", str(out), "--db", str(db)).exit_code == 0
    con = duckdb.connect(str(db), read_only=True)
    drops = dict(
        con.execute(
            "SELECT l.backend || ' ' || l.precision || coalesce(' ' || json_extract_string("
            "l.options, '$.quantization'), ''), a.accuracy_drop FROM results_latest l "
            "JOIN result_accuracy a USING (result_id)"
        ).fetchall()
    )
    con.close()
    # every non-fp32 result that came out valid (quick runs on a busy machine can be noisy)
    assert drops and set(drops) <= {"onnxruntime int8 static", "onnxruntime int8 dynamic", "pytorch bf16"}
    # a limit between the smallest and the largest drop: the larger ones are named with why, the rest rank
    ordered = sorted(drops.values())
    limit = (ordered[0] + ordered[-1]) / 2
    text = f"{limit * 100:.6f}"
    limit = float(text) / 100
    r = invoke("report", "--optimal-hardware", "--max-accuracy-drop", f"{text}%", "--wide", "--db", str(db))
    assert r.exit_code == 0, r.output
    left_out = [line for line in r.output.splitlines() if "left out by --max-accuracy-drop" in line]
    assert len(left_out) == sum(1 for d in drops.values() if d > limit)
    for name, drop in drops.items():
        backend, precision, *method = name.split()
        mentioned = any(
            f"{backend} " in line and precision in line and (not method or f"({method[0]})" in line)
            for line in left_out
        )
        assert mentioned == (drop > limit), (name, drop, limit)
    assert all(line.endswith(f"more than {float(text):g} %") for line in left_out)
    # no limit: every result ranks
    assert "left out by --max-accuracy-drop" not in invoke("report", "--optimal-hardware", "--db", str(db)).output
    # speed against accuracy: each non-fp32 result beside its own backend's fp32 result
    r = invoke("report", "--speed-accuracy", "--format", "json", "--db", str(db))
    assert r.exit_code == 0, r.output
    rows = json.loads(r.output)  # one section: its rows
    got = {(x["backend"], x["precision"], x["quantization"]): x for x in rows}
    con = duckdb.connect(str(db), read_only=True)
    valid_fp32 = {b for (b,) in con.execute("SELECT backend FROM results_latest WHERE precision = 'fp32'").fetchall()}
    con.close()
    # a pair needs both results valid (the quick runs here can be noisy on a busy machine)
    assert {f"{b} {p}" + (f" {m}" if m else "") for b, p, m in got} == {k for k in drops if k.split()[0] in valid_fp32}
    assert got, "no fp32 result was valid"
    for (backend, precision, method), x in got.items():
        assert x["speedup"] == pytest.approx(x["fp32_median_s"] / x["median_s"])
        assert x["accuracy_drop"] == pytest.approx(drops[f"{backend} {precision}" + (f" {method}" if method else "")])


def test_results_without_an_agreement_are_left_out_with_why(tmp_path):
    from pathlib import Path

    db = tmp_path / "w.duckdb"  # the H200's fp16/bf16 results predate agreement metrics
    assert (
        invoke("ingest", str(Path(__file__).parents[1] / "fixtures" / "gpu" / "h200"), "--db", str(db)).exit_code == 0
    )
    r = invoke("report", "--optimal-hardware", "--max-accuracy-drop", "1%", "--wide", "--db", str(db))
    assert r.exit_code == 0, r.output
    table = [line for line in r.output.splitlines() if line.startswith("| tiny:")]
    assert table and all(" / fp32 |" in line for line in table)  # best hardware / backend / mode / precision
    assert (
        "left out by --max-accuracy-drop: tiny:vit batch 4 image=32x32: NVIDIA H200 pytorch eager bf16: no "
        "agreement with fp32 recorded"
    ) in r.output.replace("\n> ", " ")
    bad = invoke("report", "--optimal-hardware", "--max-accuracy-drop", "lots", "--db", str(db))
    assert bad.exit_code == 2 and bad.output.strip() == (
        "benchdb: error: --max-accuracy-drop 'lots' is not like 5% or 0.05"
    )


@pytest.mark.slow
def test_top1_agreement_for_classifiers_and_token_agreement_for_generation(cache, tmp_path):
    # the module's cache already holds tiny:vit exported as ViTModel (the tests above): the export
    # key includes the head, so the classifier is exported anew rather than the cached features
    out = tmp_path / "res"
    for backend, model, task in (
        ("onnxruntime", "tiny:vit", "image-classification"),
        ("pytorch", "tiny:bert", "text-classification"),
        ("onnxruntime", "tiny:llama", None),
    ):
        r = invoke(
            "run",
            "--backend",
            backend,
            "--model",
            model,
            *(["--task", task] if task else []),
            "--precision",
            "int8",
            *QUICK,
            "--no-isolation",
            "--out",
            str(out),
        )
        assert r.exit_code == 0, r.output
    rows, metrics = _results(out, tmp_path)
    by = {r[0]: r[7] for r in rows}
    for model in ("tiny:vit", "tiny:bert", "tiny:llama"):
        _close_to_fp32(metrics, by[model])
    # top-1 over the 2 items of the batch: one flip between near-tied classes of a tiny random classifier
    # is still a faithful route (the cosine and error bounds above are what tell a broken one)
    for model in ("tiny:vit", "tiny:bert"):
        assert 0.5 <= metrics[(by[model], "top1_agreement")] <= 1.0, model
    assert MIN_TOKEN_AGREEMENT <= metrics[(by["tiny:llama"], "token_agreement")] <= 1.0  # per position: 32
    assert (by["tiny:llama"], "top1_agreement") not in metrics

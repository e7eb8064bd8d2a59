"""`benchdb export --format hud-v3|optimum-benchmark`: the round trip export -> import -> ingest
gives the same medians and sample counts; `benchdb report` works on imported results mixed with
native runs."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import numpy as np
import pytest
from click.testing import CliRunner
from conftest import make_meta, make_run, write_file

from benchdb.cli import main
from benchdb.errors import BenchdbError
from benchdb.interop import export_formats
from benchdb.warehouse import Warehouse

pytestmark = pytest.mark.core

FIX = Path(__file__).parents[1] / "fixtures" / "interop"


def cli(*args):
    r = CliRunner().invoke(main, [str(a) for a in args])
    return r


def stats(db):
    con = duckdb.connect(str(db), read_only=True)
    try:
        return sorted(
            con.execute(
                "SELECT r.model_id, r.device, r.batch_size, r.input_shape, m.metric, m.n, m.median "
                "FROM result_metrics m JOIN results r USING (result_id)"
            ).fetchall()
        )
    finally:
        con.close()


@pytest.fixture
def mixed_db(tmp_path):
    """A warehouse with a native numpy run, and pytest-benchmark and transformers imports."""
    native = tmp_path / "native"
    run = make_run()
    rng = np.random.default_rng(3)
    for bs in (1, 4):
        write_file(native, make_meta(run, batch_size=bs, options={"threads": 2}), rng.normal(1e-3 * bs, 1e-5, 40))
    imported = tmp_path / "imported"
    for fmt, src in (("pytest-benchmark", FIX / "pytest_benchmark"), ("transformers", FIX / "transformers")):
        r = cli("import", fmt, src, "--out", imported)
        assert r.exit_code == 0, r.output
    db = tmp_path / "bench.duckdb"
    r = cli("ingest", native, imported, "--db", db)
    assert r.exit_code == 0, r.output
    return db


@pytest.mark.parametrize("fmt", ["hud-v3", "optimum-benchmark"])
def test_round_trip_gives_the_same_medians_and_counts(mixed_db, tmp_path, fmt):
    out = tmp_path / ("export.jsonl" if fmt == "hud-v3" else "export")
    r = cli("export", "--format", fmt, "--out", out, "--db", mixed_db)
    assert r.exit_code == 0, r.output
    again = tmp_path / "again"
    r = cli("import", fmt, out, "--out", again)
    assert r.exit_code == 0, r.output
    db2 = tmp_path / "again.duckdb"
    assert cli("ingest", again, "--db", db2).exit_code == 0
    before = stats(mixed_db)
    after = stats(db2)
    if fmt == "optimum-benchmark":  # a report holds timings (latency targets) only
        before = [row for row in before if row[4] in ("latency_s", "ttft_s", "tpot_s", "generate_s")]
    assert len(after) == len(before) > 0
    for a, b in zip(after, before, strict=True):
        assert a[:6] == b[:6]  # key, metric, sample count
        assert a[6] == pytest.approx(b[6], rel=1e-12)  # median


def test_hud_v3_export_is_one_record_per_result_and_metric(mixed_db, tmp_path):
    out = tmp_path / "hud.jsonl"
    r = cli("export", "--format", "hud-v3", "--out", out, "--db", mixed_db)
    assert r.exit_code == 0, r.output
    recs = [json.loads(line) for line in out.read_text().splitlines()]
    con = duckdb.connect(str(mixed_db), read_only=True)
    n_metrics = con.execute("SELECT count(*) FROM result_metrics").fetchall()[0][0]
    con.close()
    assert len(recs) == n_metrics
    assert f"as {n_metrics} hud-v3 record(s)" in r.output
    for rec in recs:
        assert {"benchmark", "model", "metric", "runners", "dependencies"} <= rec.keys()
        assert rec["metric"]["benchmark_values"] and rec["model"]["origins"] == ["benchdb"]
        assert rec["metric"]["extra_info"]["n"] == len(rec["metric"]["benchmark_values"])


def test_report_on_imported_and_native_results(mixed_db, tmp_path):
    out = tmp_path / "report.md"
    r = cli("report", "--all", "--format", "md", "--out", out, "--db", mixed_db)
    assert r.exit_code == 0, r.output
    text = out.read_text()
    for model in ("matmul:64", "test_bench.py::test_matmul_64", "meta-llama/Llama-3.2-1B-Instruct"):
        assert model in text, model


def test_export_errors_are_one_line(tmp_path):
    r = cli("export", "--format", "hud-v3", "--db", tmp_path / "none.duckdb")
    assert r.exit_code == 2
    assert r.output.strip().count("\n") == 0 and "no such warehouse" in r.output
    r = cli("export", "--format", "optimum-benchmark", "--db", tmp_path / "none.duckdb")
    assert r.exit_code == 2 and "give --out FOLDER" in r.output


def test_export_needs_a_format(tmp_path):
    r = cli("export", "--db", tmp_path / "none.duckdb")
    assert r.exit_code == 2 and "give --format hud-v3, optimum-benchmark, vllm-serve or llm-d" in r.output


def test_export_writes_each_results_samples_in_the_formats_own_layout(tmp_path):
    """The module's export itself: a native run of two batch sizes as HUD v3 records and as
    optimum-benchmark reports, each value the sample benchdb holds; nothing to export is refused."""
    run = make_run()
    values = {bs: list(np.random.default_rng(bs).normal(1e-3 * bs, 1e-5, 20)) for bs in (1, 4)}
    for bs, vals in values.items():
        write_file(tmp_path / "res", make_meta(run, batch_size=bs), vals)
    db = tmp_path / "w.duckdb"
    Warehouse(db).ingest([tmp_path / "res"])
    assert export_formats.export(db, "hud-v3", str(tmp_path / "hud.jsonl")) == (2, 2)
    recs = [json.loads(line) for line in (tmp_path / "hud.jsonl").read_text().splitlines()]
    by_bs = {r["benchmark"]["extra_info"]["batch_size"]: r for r in recs}
    for bs, vals in values.items():
        metric = by_bs[bs]["metric"]
        assert metric["name"] == "latency_s" and sorted(metric["benchmark_values"]) == pytest.approx(sorted(vals))
        assert by_bs[bs]["runners"][0]["gpu_count"] == 0 and by_bs[bs]["model"]["name"] == "matmul:64"
    assert export_formats.export(db, "optimum-benchmark", str(tmp_path / "ob")) == (2, 2)
    docs = [json.loads(p.read_text()) for p in sorted((tmp_path / "ob").glob("*/benchmark.json"))]
    assert sorted(d["report"]["forward"]["latency"]["count"] for d in docs) == [20, 20]
    with pytest.raises(BenchdbError, match="no results with samples to export for model\\(s\\) nosuch"):
        export_formats.export(db, "hud-v3", str(tmp_path / "none.jsonl"), ["nosuch"])
    with pytest.raises(BenchdbError, match="unknown export format 'csv'"):
        export_formats.export(db, "csv", str(tmp_path / "x"))

"""benchdb on a SparkSession (benchdb.spark.session: register, SparkConnection, report): every view and
every report query run by pyspark (local[2]) over a `benchdb export --partitioned` copy of a real
warehouse, row for row against DuckDB.

The warehouse is built by the real ingest from generated contract files: 3 hardware, 2 models,
2 backends, 2 batch sizes, 8 runs over three months (192 results, > 100k samples), with a 30 %
shift in one series (a change point), exact ties between two hardware, results too small for
p90/p99 and the CI (NULL), invalid and busy-machine results, and failed ones.
One SparkSession for the module (Java start-up is slow on one core).
"""

from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal
from pathlib import Path

import numpy as np
import pytest
from conftest import need_module

pyspark = need_module("pyspark", "benchdb[spark]")

from benchdb import sql  # noqa: E402
from benchdb.schema import contract  # noqa: E402
from benchdb.store import database  # noqa: E402
from benchdb.warehouse import Warehouse  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.usefixtures("java_needed")]  # conftest: fails under CI=true

HW = {
    "cpuA": {
        "kind": "cpu",
        "vendor": "TestVendor",
        "device_name": "Alpha CPU",
        "cpu_model": "Alpha CPU",
        "cores_physical": 4,
        "cores_logical": 8,
        "memory_bytes": 16 * 2**30,
        "arch": "x86_64",
    },
    "cpuB": {
        "kind": "cpu",
        "vendor": "TestVendor",
        "device_name": "Beta CPU",
        "cpu_model": "Beta CPU",
        "cores_physical": 8,
        "cores_logical": 16,
        "memory_bytes": 32 * 2**30,
        "arch": "x86_64",
    },
    "gpuC": {
        "kind": "cuda",
        "vendor": "NVIDIA",
        "device_name": "Gamma GPU",
        "memory_bytes": 24 * 2**30,
        "compute_capability": "8.9",
        "driver": "550.1",
    },
}
MODELS = {"bert-tiny": "embedding", "llama-tiny": "text_generation"}
BACKENDS = ("pytorch", "onnxruntime")
RUN_DAYS = [dt.datetime(2026, 10, 20, 10) + dt.timedelta(days=9 * i) for i in range(8)]  # Oct..Dec
FAILED = "RuntimeError: kernel not available"


def _values(hw: str, model: str, backend: str, bs: int, run: int) -> np.ndarray:
    base = {"cpuA": 4e-3, "cpuB": 3e-3, "gpuC": 1e-3}[hw] * (3 if model == "llama-tiny" else 1)
    base *= (0.7 if backend == "onnxruntime" else 1.0) * (1 + 0.6 * (bs - 1))
    if (hw, model, backend, bs) == ("cpuA", "bert-tiny", "pytorch", 1) and run >= 4:
        base *= 1.3  # the change point
    tie = (model, backend, bs) == ("llama-tiny", "onnxruntime", 4) and hw in ("cpuA", "cpuB")
    seed = hash((("tie", model, backend, bs) if tie else (hw, model, backend, bs), run)) % 2**32
    if tie:
        base = 5e-3
    n = 600
    if (model, bs, run) == ("llama-tiny", 4, 7):
        n = 8 if backend == "pytorch" else 3  # p90/p95/p99 NULL; with 3, the CI too
    rng = np.random.default_rng(seed)
    vals = rng.normal(base, base * 0.01, n)
    return np.round(vals, 7)  # repeated values: ties within a result


def _write(folder: Path) -> int:
    files = 0
    for i, started in enumerate(RUN_DAYS):
        for j, (hw_key, hw) in enumerate(HW.items()):  # one run per machine and round
            run = {
                "run_id": contract.new_run_id(),
                "host": hw_key,
                "benchdb_version": "0.2.0",
                "started_at": (started + dt.timedelta(minutes=j)).isoformat() + "+00:00",
                "git_commit": f"c{i}",
                "software": {},
                "config": {},
                "tags": [],
            }
            for model, family in MODELS.items():
                for backend in BACKENDS:
                    for bs in (1, 4):
                        status, validity, reasons, error = "ok", "valid", [], None
                        if (hw_key, model, backend) == ("gpuC", "llama-tiny", "pytorch") and i in (2, 7):
                            status, validity, error = "failed", "invalid", FAILED
                        elif (hw_key, backend, bs, i) == ("cpuB", "pytorch", 4, 7):
                            validity, reasons = "invalid", ["too_noisy: CI of the median 9 % > 2 %"]
                        elif (hw_key, model, backend, bs, i) == ("cpuA", "llama-tiny", "onnxruntime", 1, 7):
                            validity = "invalid"
                            reasons = ["busy_machine: other processes used 85 % CPU (limit 30 %); close them"]
                        device = "cuda:0" if hw["kind"] == "cuda" else "cpu"
                        meta = contract.build_metadata(
                            run=run,
                            hardware=hw,
                            model={"model_id": model, "family": family},
                            scenario={
                                "model_id": model,
                                "backend": backend,
                                "device": device,
                                "mode": "eager",
                                "precision": "fp32",
                                "batch_size": bs,
                                "input_shape": "seq_len=16",
                                "status": status,
                                "error": error,
                                "validity": validity,
                                "validity_reasons": reasons,
                                "primary_metric": "latency_s",
                                "timing_method": "host_clock",
                                "threads": 1,
                                "options": {"threads": 1},
                            },
                        )
                        rows = []
                        if status == "ok":
                            vals = _values(hw_key, model, backend, bs, i)
                            rows = [("latency_s", "s", k, k * 1e-3, float(v), 0) for k, v in enumerate(vals)]
                            if backend == "pytorch":
                                rows.append(("peak_rss_bytes", "bytes", 0, 0.0, float(2**20 * (100 + bs + i)), 0))
                        table = contract.samples_table(meta, rows)
                        contract.write_scenario(folder / f"{meta['scenario']['scenario_id']}.parquet", meta, table)
                        files += 1
    return files


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("spark")
    (work / "results").mkdir()
    n = _write(work / "results")
    db = work / "bench.duckdb"
    summary = Warehouse(db).ingest([work / "results"])
    assert summary.change_points >= 1, "the generated shift must be found as a change point"
    assert n == 192
    return db


@pytest.fixture(scope="module")
def exported(warehouse: Path) -> Path:
    from benchdb.spark import export_partitioned

    out = warehouse.parent / "export"
    s = export_partitioned(warehouse, str(out))
    assert s.results == 192 and s.samples > 100_000
    return out


@pytest.fixture(scope="module")
def spark(exported: Path):
    from benchdb.spark import register
    from benchdb.spark.session import session

    s = session(app="benchdb-test", master="local[2]")
    skipped: list = []
    register(s, str(exported), skipped=skipped)
    assert skipped == []  # every view, roofline included, has a Spark form
    yield s
    s.stop()


class _SharedSparkResults:
    """The Spark connection of the report tests: a query already run with the same parameters (the
    report-query test and the report builder ask many of the same) answers with the rows Spark gave
    it then, so each is computed and compared once per module; the first run goes through
    SparkConnection as a report does."""

    def __init__(self, spark):
        from benchdb.spark import SparkConnection

        self.con = SparkConnection(spark)
        self.seen: dict[tuple[str, str], object] = {}

    def execute(self, text: str, params=None):
        key = (text, repr(sorted((params or {}).items())))
        if key not in self.seen:
            self.seen[key] = self.con.execute(text, params)
        return self.seen[key]

    def close(self) -> None:
        pass


@pytest.fixture(scope="module")
def spark_con(spark) -> _SharedSparkResults:
    return _SharedSparkResults(spark)


# ------------------------------------------------------------------ comparison


def _norm(v):
    if isinstance(v, Decimal):
        return float(v)
    if isinstance(v, dict):
        return tuple(sorted((k, _norm(x)) for k, x in v.items()))
    if isinstance(v, (list, tuple)):
        return tuple(_norm(x) for x in v)
    return v


def _sort_key(row):
    def k(v):
        if v is None:
            return (0, "")
        if isinstance(v, float):
            return (1, "nan" if math.isnan(v) else f"{v:.6e}")
        return (2, repr(v))

    return tuple(k(v) for v in row)


def _same(a, b) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        if a is None or b is None:
            return a is b
        a, b = float(a), float(b)
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return a == b or abs(a - b) <= 1e-9 * max(abs(a), abs(b))
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def assert_same_rows(name, cols_d, rows_d, cols_s, rows_s, ordered=False):
    # an expression the SQL leaves unnamed (count(*)) is named by each engine its own way
    assert len(cols_s) == len(cols_d), f"{name}: columns differ"
    named = [(a, b) for a, b in zip(cols_d, cols_s, strict=True) if "(" not in a]
    assert all(a == b for a, b in named), f"{name}: columns differ"
    rd = [tuple(_norm(v) for v in r) for r in rows_d]
    rs = [tuple(_norm(v) for v in r) for r in rows_s]
    assert len(rs) == len(rd), f"{name}: {len(rs)} rows on Spark, {len(rd)} on DuckDB"
    if not ordered:
        rd, rs = sorted(rd, key=_sort_key), sorted(rs, key=_sort_key)
    for i, (x, y) in enumerate(zip(rd, rs, strict=True)):
        bad = [c for c, a, b in zip(cols_d, x, y, strict=True) if not _same(a, b)]
        assert not bad, f"{name}: row {i} differs in {bad}: DuckDB {x} vs Spark {y}"


def _duck(db: Path, text: str, params=None):
    con, _ = database.open_readonly(db)
    try:
        cur = con.execute(text, params or {})
        return [d[0] for d in cur.description], cur.fetchall()
    finally:
        con.close()


def _spark_rows(spark, text: str, args=None):
    df = spark.sql(text, args=args)
    return list(df.columns), [tuple(r) for r in df.collect()]


# ------------------------------------------------------------------ tests


def test_every_view_matches_duckdb(warehouse, spark):
    from benchdb.spark import translate

    names = [s.name for s in translate.views([])]
    assert {
        "results_latest",
        "results_current",
        "compat_matrix",
        "optimal_hardware",
        "speedup",
        "batch_scaling",
        "trends",
        "verification",
        "hardware_peaks",
    } <= set(names)
    for name in names:
        cols_d, rows_d = _duck(warehouse, f"SELECT * FROM {name}")
        cols_s, rows_s = _spark_rows(spark, f"SELECT * FROM {name}")
        assert_same_rows(name, cols_d, rows_d, cols_s, rows_s)
    # the data really holds what the comparison is meant to cover
    _, trends = _duck(warehouse, "SELECT count(*) FROM trends")
    _, opt = _duck(warehouse, "SELECT count(*) FROM optimal_hardware")
    _, cm = _duck(warehouse, "SELECT sum(invalid), sum(failed) FROM compat_matrix")
    assert trends[0][0] > 150 and opt[0][0] == 8 and cm[0][0] >= 2 and cm[0][1] >= 1


def test_every_report_query_matches_duckdb(warehouse, spark_con):
    from benchdb.reports.build import Filters
    from benchdb.spark import translate

    con_s = spark_con
    _, ids = _duck(warehouse, "SELECT result_id FROM results ORDER BY result_id LIMIT 3")
    base = {
        "ids": [r[0] for r in ids],
        "metric": None,
        "limit": 5,
        "min_points": 6,
        "objective": "throughput",
        "max_latency_s": None,
        "max_memory_bytes": None,
        "max_accuracy_drop": None,
        "price_names": [],
        "price_values": [],
        "per": "accelerator",
        "accelerator_price_names": [],
        "accelerator_price_values": [],
    }
    variants = [
        {**Filters().params(), **base},
        {
            **Filters(models=("bert-tiny",), hardware=("Alpha CPU", "Gamma GPU")).params(),
            **base,
            "objective": "cost",
            "max_latency_s": 0.01,
            "max_memory_bytes": 2e9,
            "max_accuracy_drop": 0.01,
            "price_names": ["Alpha CPU", "Gamma GPU"],
            "price_values": [1.5, 4.0],
            "per": "cost",
            "accelerator_price_names": ["Gamma GPU"],
            "accelerator_price_values": [2.0],
        },
    ]
    seen_rows = 0
    for name in translate.report_files():
        text = sql.load(name)
        bound: list[dict] = []
        for params in variants:
            used = {k: v for k, v in params.items() if f"${k}" in text}
            if used in bound:  # a query that reads none of what the variants change: one run says it
                continue
            bound.append(used)
            cols_d, rows_d = _duck(warehouse, text, used)
            cur = con_s.execute(text, used)
            assert_same_rows(f"{name} {used}", cols_d, rows_d, [d[0] for d in cur.description], cur.fetchall())
            seen_rows += len(rows_d)
    assert seen_rows > 400


def test_statistics_from_raw_samples_match(warehouse, spark):
    """The ingest statistics (median, percentiles, CI of the median: sorted lists, 1-based indexes,
    macros) recomputed by Spark from the exported raw samples."""
    from benchdb.spark import translate

    stage = "SELECT result_id AS scenario_id, metric, unit, value FROM samples"
    spark.sql(stage).createOrReplaceTempView("stage_samples")
    text = sql.metric_stats_query()
    cols_s, rows_s = _spark_rows(spark, translate.translate_query(text, "metric_stats"))
    con, _ = database.open_readonly(warehouse)
    try:
        con.execute(f"CREATE TEMP VIEW stage_samples AS {stage}")
        cur = con.execute(text)
        cols_d, rows_d = [d[0] for d in cur.description], cur.fetchall()
        n_samples = con.execute("SELECT count(*) FROM samples").fetchone()[0]
    finally:
        con.close()
    assert n_samples > 100_000
    assert_same_rows("metric_stats", cols_d, rows_d, cols_s, rows_s)
    by = {r[0]: dict(zip(cols_d, r, strict=True)) for r in rows_d if r[1] == "latency_s"}
    assert any(r["p90"] is None and r["p25"] is not None for r in by.values())
    assert any(r["median_ci_low"] is None for r in by.values())
    assert sum(r["median_ci_low"] is not None for r in by.values()) > 150


def test_report_on_spark_builds_the_same(warehouse, spark_con):
    """The whole report builder through the Spark connection: the same sections, rows (in any order:
    the report queries leave ties unordered, e.g. two speedups of 1.00), notes, empty reasons,
    summary and banner as on DuckDB; and it renders. A query the report-query test ran with the same
    parameters is not run on Spark again (spark_con)."""
    from benchdb.reports import build, render

    f = build.Filters()
    con, _ = database.open_readonly(warehouse)
    try:
        rep_d = build.build(con, "X", list(build.ALL), f)
    finally:
        con.close()
    rep_s = build.build(spark_con, "X", list(build.ALL), f)
    assert rep_d.banner is not None and rep_s.banner is not None
    assert rep_s.banner.text == rep_d.banner.text
    assert rep_s.summary == rep_d.summary
    assert any(s.name == "regressions" and s.rows for s in rep_d.sections)
    for sd, ss in zip(rep_d.sections, rep_s.sections, strict=True):
        assert (ss.name, ss.keys, ss.notes, ss.empty) == (sd.name, sd.keys, sd.notes, sd.empty)
        keys = list(sd.rows[0]) if sd.rows else []
        assert_same_rows(
            sd.name,
            keys,
            [tuple(r[k] for k in keys) for r in sd.rows],
            keys,
            [tuple(r[k] for k in keys) for r in ss.rows],
        )
    assert render.render(rep_s, "md").count("\n") == render.render(rep_d, "md").count("\n")


def test_report_cli_engine_spark(warehouse, exported, spark):
    """`benchdb report --engine spark --data DIR` (in-process: the module's SparkSession is reused,
    so no second JVM, and so is its registration of the same export): the same JSON sections as
    the DuckDB command, numbers within 1e-9."""
    import json

    from click.testing import CliRunner

    from benchdb.cli import main as cli
    from benchdb.spark.session import registered

    assert registered(spark, str(exported))

    args = ["report", "--optimal-hardware", "--matrix", "--format", "json"]
    d = CliRunner().invoke(cli, [*args, "--db", str(warehouse)])
    s = CliRunner().invoke(cli, [*args, "--engine", "spark", "--data", str(exported)])
    assert d.exit_code == 0, d.output
    assert s.exit_code == 0, s.output[-2000:]
    jd, js = json.loads(d.stdout), json.loads(s.stdout)
    assert list(js) == list(jd) == ["optimal_hardware", "compat_matrix"]
    for name in jd:
        keys = list(jd[name][0])
        assert_same_rows(
            name,
            keys,
            [tuple(r[k] for k in keys) for r in jd[name]],
            list(js[name][0]),
            [tuple(r[k] for k in keys) for r in js[name]],
        )
    bad = CliRunner().invoke(cli, ["report", "--matrix", "--engine", "spark"])
    assert bad.exit_code != 0 and "--engine spark needs --data" in bad.output


def test_an_export_from_before_the_source_tables_still_registers(exported, spark, tmp_path):
    """An export written before result_sources / source_statistics / source_definitions were
    exported: they are registered empty, so serving_points (which joins result_sources) runs."""
    import json
    import shutil

    from benchdb.spark import partitioned_export, register

    old = tmp_path / "old-export"
    shutil.copytree(exported, old)
    manifest = json.loads((old / partitioned_export.MANIFEST).read_text())
    for table in partitioned_export.LATER_TABLES:
        manifest["tables"].pop(table)
        shutil.rmtree(old / table, ignore_errors=True)
    (old / partitioned_export.MANIFEST).write_text(json.dumps(manifest))
    from benchdb.spark.session import registered

    names = register(spark, str(old))
    assert set(partitioned_export.LATER_TABLES) <= set(names) and "serving_points" in names
    # report() reuses a session's registration only of the export it was asked for, as it is now
    assert registered(spark, str(old)) and not registered(spark, str(exported))
    assert spark.sql("SELECT count(*) AS n FROM result_sources").collect()[0]["n"] == 0
    spark.sql("SELECT * FROM serving_points").collect()
    (old / partitioned_export.MANIFEST).write_text(json.dumps({**manifest, "batches": []}))  # exported since
    assert not registered(spark, str(old))

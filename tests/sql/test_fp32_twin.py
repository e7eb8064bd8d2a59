"""fp32_twin gives each result that is not fp32 one fp32 twin, also where two fp32 series of the same
scenario differ only in their options: the accuracy drop, the speed-accuracy report and the optimal
table then count each result once."""

import json

import duckdb
import numpy as np
import pytest
from click.testing import CliRunner
from conftest import make_meta, make_run

from benchdb.cli import main
from benchdb.schema import contract

pytestmark = pytest.mark.core


def _file(folder, run, name, precision, options, median, sts):
    meta = make_meta(
        run,
        model_id="tiny:bert",
        backend="pytorch",
        precision=precision,
        input_shape="seq_len=16",
        options={"threads": 1, **options},
    )
    values = np.random.default_rng(len(name)).normal(median, median / 1000, 40)
    rows = [("latency_s", "s", i, i * 1e-3, float(v), 0) for i, v in enumerate(values)]
    rows.append(("sts_spearman", "ratio", 0, 0.0, sts))
    return contract.write_scenario(folder / f"{name}.parquet", meta, contract.samples_table(meta, rows))


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    """Run 1: fp32 and int8; run 2: fp32 with another kernel mapping (an option), and fp16 with it.
    Both fp32 series are latest and valid, and every result has an STS score."""
    tmp = tmp_path_factory.mktemp("twins")
    first, second = make_run(started_at="2026-11-01T10:00:00+00:00"), make_run(started_at="2026-11-02T10:00:00+00:00")
    for sub, run, files in (
        (
            "r1",
            first,
            [("fp32_a", "fp32", {}, 0.010, 0.80), ("int8", "int8", {"quantization": "dynamic"}, 0.006, 0.76)],
        ),
        (
            "r2",
            second,
            [("fp32_b", "fp32", {"kernels": "k"}, 0.012, 0.90), ("fp16", "fp16", {"kernels": "k"}, 0.004, 0.81)],
        ),
    ):
        (tmp / sub).mkdir()
        for name, precision, options, median, sts in files:
            _file(tmp / sub, run, name, precision, options, median, sts)
    path = tmp / "w.duckdb"
    for sub in ("r1", "r2"):
        r = CliRunner().invoke(main, ["ingest", str(tmp / sub), "--db", str(path)])
        assert r.exit_code == 0, r.output
    return path


def _rows(db, sql):
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_each_result_has_one_twin_same_options_first_then_same_run(db):
    rows = _rows(
        db,
        """SELECT r.precision, b.median FROM fp32_twin t
           JOIN results r ON r.result_id = t.result_id JOIN results b ON b.result_id = t.fp32_result_id
           ORDER BY r.precision""",
    )
    # fp16 shares run 2's options; int8's options differ from both (quantization): run 1's twin
    assert [(p, round(m, 3)) for p, m in rows] == [("fp16", 0.012), ("int8", 0.010)]


def test_the_accuracy_drop_and_the_speed_accuracy_report_count_each_result_once(db):
    drops = _rows(
        db,
        """SELECT r.precision, a.sts_drop FROM result_accuracy a JOIN results r USING (result_id)
           ORDER BY r.precision""",
    )
    assert [(p, round(d, 4)) for p, d in drops] == [("fp16", round(1 - 0.81 / 0.90, 4)), ("int8", 0.05)]
    out = CliRunner().invoke(main, ["report", "--speed-accuracy", "--db", str(db), "--format", "json"])
    assert out.exit_code == 0, out.output
    assert sorted(row["precision"] for row in json.loads(out.output)) == ["fp16", "int8"]


def test_the_optimal_table_under_an_accuracy_limit_counts_each_candidate_once(db):
    out = CliRunner().invoke(
        main, ["report", "--optimal-hardware", "--max-accuracy-drop", "20%", "--db", str(db), "--format", "json"]
    )
    assert out.exit_code == 0, out.output
    [row] = json.loads(out.output)
    assert (row["candidates"], row["best_precision"], row["runner_up_precision"]) == (4, "fp16", "int8")

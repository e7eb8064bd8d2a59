"""Each view against a small fixture warehouse: the exact rows it must return."""

import duckdb
import pytest
import sqlglot

from benchdb import sql
from fixtures_views import build


@pytest.fixture(scope="module")
def con(tmp_path_factory):
    path = tmp_path_factory.mktemp("views") / "v.duckdb"
    build(path)
    c = duckdb.connect(str(path), read_only=True)
    yield c
    c.close()


def q(con, text, params=None):
    return con.execute(text, params or []).fetchall()


def approx_rows(rows):
    return [tuple(pytest.approx(v) if isinstance(v, float) else v for v in r) for r in rows]


def test_every_view_file_parses_with_sqlglot():
    for name in ["macros.sql", *sql.view_files()]:
        statements = sqlglot.parse(sql.load(name), read="duckdb")
        assert statements and all(s is not None for s in statements), name
        assert all(type(s).__name__ == "Create" for s in statements), name


def test_results_latest(con):
    assert q(con, "select result_id, run_started_at::varchar, git_commit, hardware_name from results_latest "
                  "order by result_id") == [
        ("2", "2026-11-02 10:00:00", "c2", "Test CPU"), ("3", "2026-11-02 10:00:00", "c2", "Test GPU"),
        ("4", "2026-11-02 10:00:00", "c2", "Test CPU"), ("5", "2026-11-02 10:00:00", "c2", "Test CPU"),
        ("6", "2026-11-02 10:00:00", "c2", "Test GPU"), ("8", "2026-11-02 10:00:00", "c2", "Test CPU")]
    assert q(con, "select result_id, peak_memory_bytes, power_w, energy_per_item_j from results_latest "
                  "where peak_memory_bytes is not null order by 1") == approx_rows([
        ("2", 300 * 2**20, None, None), ("3", 900 * 2**20, 200.0, 0.4), ("4", 200 * 2**20, None, None)])


def test_results_current_keeps_failures_and_newest(con):
    assert [r[0] for r in q(con, "select result_id from results_current order by 1")] == \
        ["3", "4", "5", "6", "7", "8", "9"]


def test_compat_matrix(con):
    rows = q(con, """select family, model_type, hardware_name, backend, results, ok, failed, oom, timeout,
                            unsupported, mismatch, skipped, relative_throughput, rating, rating_label, top_error
                     from compat_matrix order by 1, 2, 3, 4""")
    assert rows == approx_rows([
        ("embedding", "bert", "Test CPU", "onnxruntime", 1, 1, 0, 0, 0, 0, 0, 0, 0.4, 2, "good", None),
        ("embedding", "bert", "Test CPU", "pytorch", 2, 2, 0, 0, 0, 0, 0, 0, 0.21, 1, "slow", None),
        ("embedding", "bert", "Test GPU", "pytorch", 2, 2, 0, 0, 0, 0, 0, 0, 1.0, 3, "best", None),
        ("text_generation", "llama", "Test CPU", "pytorch", 1, 1, 0, 0, 0, 0, 0, 0, 1.0, 3, "best", None),
        ("text_generation", "llama", "Test GPU", "pytorch", 1, 0, 0, 1, 0, 0, 0, 0, None, 0, "broken",
         "OutOfMemoryError: CUDA out of memory"),
    ])
    # no pair is invented: llama was never tried with onnxruntime
    assert q(con, "select count(*) from compat_matrix where model_type = 'llama' and backend = 'onnxruntime'") == [(0,)]


OPT_COLS = ("model_id, batch_size, objective, candidates, best_hardware, best_backend, best_value, "
            "runner_up_hardware, runner_up_backend, runner_up_value, margin")


def test_optimal_hardware_view(con):
    rows = q(con, f"select {OPT_COLS} from optimal_hardware order by objective, model_id, batch_size")
    assert rows == approx_rows([
        ("bert", 1, "latency", 3, "Test GPU", "pytorch", 0.002, "Test CPU", "onnxruntime", 0.005, 1.5),
        ("bert", 4, "latency", 2, "Test GPU", "pytorch", 0.004, "Test CPU", "pytorch", 0.020, 4.0),
        ("llama", 1, "latency", 1, "Test CPU", "pytorch", 0.1, None, None, None, None),
        ("bert", 1, "throughput", 3, "Test GPU", "pytorch", 500.0, "Test CPU", "onnxruntime", 200.0, 1.5),
        ("bert", 4, "throughput", 2, "Test GPU", "pytorch", 1000.0, "Test CPU", "pytorch", 200.0, 4.0),
        ("llama", 1, "throughput", 1, "Test CPU", "pytorch", 10.0, None, None, None, None),
    ])


def _optimal(con, objective, max_latency=None, max_memory=None, prices=None, models=None, hardware=None):
    prices = prices or {}
    return q(con, f"select {OPT_COLS} from bdb_optimal($1, $2, $3, MAP($4::VARCHAR[], $5::DOUBLE[]), $6, $7) "
                  "order by model_id, batch_size",
             [objective, max_latency, max_memory, list(prices), list(prices.values()), models, hardware])


def test_optimal_under_constraints(con):
    assert _optimal(con, "throughput", max_latency=0.003) == approx_rows([
        ("bert", 1, "throughput", 1, "Test GPU", "pytorch", 500.0, None, None, None, None)])
    assert _optimal(con, "throughput", max_memory=250 * 2**20) == approx_rows([
        ("bert", 1, "throughput", 1, "Test CPU", "onnxruntime", 200.0, None, None, None, None)])
    assert _optimal(con, "cost", prices={"Test GPU": 3.6, "Test CPU": 0.36}, models=["bert"]) == approx_rows([
        ("bert", 1, "cost", 3, "Test CPU", "onnxruntime", 0.5, "Test CPU", "pytorch", 0.8, 0.6),
        ("bert", 4, "cost", 2, "Test CPU", "pytorch", 0.5, "Test GPU", "pytorch", 1.0, 1.0)])
    assert _optimal(con, "energy") == approx_rows([
        ("bert", 1, "energy", 1, "Test GPU", "pytorch", 0.4, None, None, None, None)])
    assert _optimal(con, "latency", hardware=["Test CPU"]) == approx_rows([
        ("bert", 1, "latency", 2, "Test CPU", "onnxruntime", 0.005, "Test CPU", "pytorch", 0.008, 0.6),
        ("bert", 4, "latency", 1, "Test CPU", "pytorch", 0.020, None, None, None, None),
        ("llama", 1, "latency", 1, "Test CPU", "pytorch", 0.1, None, None, None, None)])


def test_speedup(con):
    rows = q(con, """select model_id, batch_size, hardware_name, backend, median_s, baseline_hardware,
                            baseline_median_s, speedup from speedup order by model_id, batch_size, speedup""")
    assert rows == approx_rows([
        ("bert", 1, "Test CPU", "pytorch", 0.008, "Test CPU", 0.008, 1.0),
        ("bert", 1, "Test CPU", "onnxruntime", 0.005, "Test CPU", 0.008, 1.6),
        ("bert", 1, "Test GPU", "pytorch", 0.002, "Test CPU", 0.008, 4.0),
        ("bert", 4, "Test CPU", "pytorch", 0.020, "Test CPU", 0.020, 1.0),
        ("bert", 4, "Test GPU", "pytorch", 0.004, "Test CPU", 0.020, 5.0),
        ("llama", 1, "Test CPU", "pytorch", 0.1, "Test CPU", 0.1, 1.0),
    ])


def test_batch_scaling(con):
    rows = q(con, """select model_id, hardware_name, backend, batch_size, latency_s, throughput,
                            latency_vs_smallest_batch, scaling_efficiency
                     from batch_scaling order by model_id, hardware_name, backend, batch_size""")
    assert rows == approx_rows([
        ("bert", "Test CPU", "onnxruntime", 1, 0.005, 200.0, 1.0, 1.0),
        ("bert", "Test CPU", "pytorch", 1, 0.008, 125.0, 1.0, 1.0),
        ("bert", "Test CPU", "pytorch", 4, 0.020, 200.0, 2.5, 0.4),
        ("bert", "Test GPU", "pytorch", 1, 0.002, 500.0, 1.0, 1.0),
        ("bert", "Test GPU", "pytorch", 4, 0.004, 1000.0, 2.0, 0.5),
        ("llama", "Test CPU", "pytorch", 1, 0.1, 10.0, 1.0, 1.0),
    ])


def test_trends(con):
    rows = q(con, """select result_id, git_commit, median, change_vs_previous from trends
                     where model_id = 'bert' and backend = 'pytorch' and hardware_name = 'Test CPU'
                       and batch_size = 1 order by run_started_at""")
    assert rows == approx_rows([("1", "c1", 0.010, None), ("2", "c2", 0.008, -0.2)])
    assert q(con, "select count(*), count(distinct series_id) from trends") == [(7, 6)]

"""Each view against a small fixture warehouse: the exact rows it must return."""

import duckdb
import pytest
import sqlglot
from support.fixtures_views import build

from benchdb import sql

pytestmark = pytest.mark.core


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
    assert q(
        con,
        "select result_id, run_started_at::varchar, git_commit, hardware_name from results_latest "
        "order by result_id::int",
    ) == [
        ("2", "2026-11-02 10:00:00", "c2", "Test CPU"),
        ("3", "2026-11-02 10:00:00", "c2", "Test GPU"),
        ("4", "2026-11-02 10:00:00", "c2", "Test CPU"),
        ("5", "2026-11-02 10:00:00", "c2", "Test CPU"),
        ("6", "2026-11-02 10:00:00", "c2", "Test GPU"),
        ("8", "2026-11-02 10:00:00", "c2", "Test CPU"),
        ("10", "2026-11-03 10:00:00", "c3", "Test GPU"),
    ]
    assert q(
        con,
        "select result_id, peak_memory_bytes, power_w, energy_per_item_j from results_latest "
        "where peak_memory_bytes is not null order by 1",
    ) == approx_rows([("2", 300 * 2**20, None, None), ("3", 900 * 2**20, 200.0, 0.4), ("4", 200 * 2**20, None, None)])


def test_results_current_keeps_failures_and_newest(con):
    # 9 (invalid) and 11 (invalid) are the newest timing attempts of their series; the --verify-only
    # checks 12 and 13 are not timing attempts (the verification view has them)
    assert [r[0] for r in q(con, "select result_id from results_current order by result_id::int")] == [
        "3",
        "4",
        "5",
        "6",
        "7",
        "8",
        "9",
        "10",
        "11",
    ]


def test_verify_only_results_are_never_a_latency(con):
    """A --verify-only check (primary metric max_rel_err, a ratio) newer than the timed result of its
    series: the latest valid result stays the timing, nothing ranks 3e-07 as a latency, and trends
    never show -99.99 % then +3,000,000 %."""
    series = q(con, "select series_id from results where result_id = '12'")[0][0]
    assert q(con, "select series_id from results where result_id = '4'")[0][0] == series
    assert q(
        con, "select result_id, metric, unit, median from results_latest where series_id = ?", [series]
    ) == approx_rows([("4", "latency_s", "s", 0.005)])
    assert q(con, "select result_id, median from trends where series_id = ?", [series]) == approx_rows([("4", 0.005)])
    assert q(con, "select count(*) from results_latest where metric <> 'latency_s' or unit <> 's'") == [(0,)]
    assert q(con, "select count(*) from trends where result_id in ('12', '13')") == [(0,)]
    assert q(
        con,
        "select min(best_value) from bdb_optimal('latency', NULL, NULL, MAP {}::MAP(VARCHAR, DOUBLE), "
        "NULL::VARCHAR[], NULL::VARCHAR[])",
    ) == approx_rows([(0.002,)])
    assert q(con, "select count(*) from results_current where result_id in ('12', '13')") == [(0,)]
    assert q(
        con, "select count(*) from speedup where result_id in ('12', '13') or baseline_result_id in ('12', '13')"
    ) == [(0,)]
    assert q(con, "select count(*) from batch_scaling where latency_s < 1e-5") == [(0,)]


def test_verification_view(con):
    rows = q(
        con,
        """select result_id, model_id, backend, batch_size, hardware_name, git_commit, status, verify_only,
                            max_abs_err, max_rel_err, tolerance, agrees, error
                     from verification order by result_id""",
    )
    assert rows == approx_rows(
        [
            # the latest check of result 4's series is the --verify-only one (12), not the timed run's own check
            ("12", "bert", "onnxruntime", 1, "Test CPU", "c3", "ok", True, 2e-6, 3e-7, 1e-3, True, None),
            (
                "13",
                "bert",
                "openvino",
                4,
                "Test CPU",
                "c3",
                "mismatch",
                True,
                0.4,
                0.05,
                1e-3,
                False,
                "outputs differ from PyTorch fp32: max rel error 0.05 > 0.001",
            ),
        ]
    )
    # one row per series; the timed run's check counts when nothing newer checked that series
    assert q(con, "select count(*), count(distinct series_id) from verification") == [(2, 2)]
    assert (
        q(
            con,
            """select result_id, verify_only, agrees from verification v
                     where run_started_at < '2026-11-03'""",
        )
        == []
    )


def test_compat_matrix(con):
    rows = q(
        con,
        """select family, model_type, hardware_name, backend, results, ok, invalid, failed, oom, timeout,
                            unsupported, mismatch, skipped, relative_throughput, rating, rating_label, top_error
                     from compat_matrix order by 1, 2, 3, 4""",
    )
    assert rows == approx_rows(
        [
            ("embedding", "bert", "Test CPU", "onnxruntime", 1, 1, 0, 0, 0, 0, 0, 0, 0, 0.4, 2, "good", None),
            # 11 is the fastest bert bs=1 result but invalid: counted, never rated, never the denominator
            ("embedding", "bert", "Test CPU", "openvino", 1, 1, 1, 0, 0, 0, 0, 0, 0, None, 0, "unrated", None),
            # 9 (invalid, current for bs=1) is counted as invalid; only bs=4 (200 / 1000) is rated
            ("embedding", "bert", "Test CPU", "pytorch", 2, 2, 1, 0, 0, 0, 0, 0, 0, 0.2, 1, "slow", None),
            # 0.76x the fastest is good, not a second "best" in the bert row
            ("embedding", "bert", "Test GPU", "onnxruntime", 1, 1, 0, 0, 0, 0, 0, 0, 0, 0.76, 2, "good", None),
            ("embedding", "bert", "Test GPU", "pytorch", 2, 2, 0, 0, 0, 0, 0, 0, 0, 1.0, 3, "best", None),
            ("text_generation", "llama", "Test CPU", "pytorch", 1, 1, 0, 0, 0, 0, 0, 0, 0, 1.0, 3, "best", None),
            (
                "text_generation",
                "llama",
                "Test GPU",
                "pytorch",
                1,
                0,
                0,
                0,
                1,
                0,
                0,
                0,
                0,
                None,
                0,
                "broken",
                "OutOfMemoryError: CUDA out of memory",
            ),
        ]
    )
    # no pair is invented: llama was never tried with onnxruntime
    assert q(con, "select count(*) from compat_matrix where model_type = 'llama' and backend = 'onnxruntime'") == [(0,)]


def test_compat_matrix_best_is_only_the_fastest(con):
    # at most one "best" per family/model type row of the heat map, and it is exactly 1.0
    assert q(
        con,
        """select family, model_type, count(*) filter (where rating_label = 'best') from compat_matrix
                     group by all order by all""",
    ) == [("embedding", "bert", 1), ("text_generation", "llama", 1)]
    assert q(con, "select distinct relative_throughput from compat_matrix where rating = 3") == [(1.0,)]
    assert q(con, "select count(*) from compat_matrix where rating < 3 and relative_throughput >= 1") == [(0,)]


OPT_COLS = (
    "model_id, batch_size, objective, candidates, best_hardware, best_backend, best_value, "
    "runner_up_hardware, runner_up_backend, runner_up_value, margin"
)


def test_optimal_hardware_view(con):
    rows = q(con, f"select {OPT_COLS} from optimal_hardware order by objective, model_id, batch_size")
    assert rows == approx_rows(
        [
            ("bert", 1, "latency", 3, "Test GPU", "pytorch", 0.002, "Test CPU", "onnxruntime", 0.005, 1.5),
            ("bert", 4, "latency", 3, "Test GPU", "pytorch", 0.004, "Test GPU", "onnxruntime", 4 / 760, 0.24 / 0.76),
            ("llama", 1, "latency", 1, "Test CPU", "pytorch", 0.1, None, None, None, None),
            ("bert", 1, "throughput", 3, "Test GPU", "pytorch", 500.0, "Test CPU", "onnxruntime", 200.0, 1.5),
            ("bert", 4, "throughput", 3, "Test GPU", "pytorch", 1000.0, "Test GPU", "onnxruntime", 760.0, 0.24 / 0.76),
            ("llama", 1, "throughput", 1, "Test CPU", "pytorch", 10.0, None, None, None, None),
        ]
    )


def _optimal(con, objective, max_latency=None, max_memory=None, prices=None, models=None, hardware=None):
    prices = prices or {}
    return q(
        con,
        f"select {OPT_COLS} from bdb_optimal($1, $2, $3, MAP($4::VARCHAR[], $5::DOUBLE[]), $6, $7) "
        "order by model_id, batch_size",
        [objective, max_latency, max_memory, list(prices), list(prices.values()), models, hardware],
    )


def test_optimal_under_constraints(con):
    assert _optimal(con, "throughput", max_latency=0.003) == approx_rows(
        [("bert", 1, "throughput", 1, "Test GPU", "pytorch", 500.0, None, None, None, None)]
    )
    assert _optimal(con, "throughput", max_memory=250 * 2**20) == approx_rows(
        [("bert", 1, "throughput", 1, "Test CPU", "onnxruntime", 200.0, None, None, None, None)]
    )
    assert _optimal(con, "cost", prices={"Test GPU": 3.6, "Test CPU": 0.36}, models=["bert"]) == approx_rows(
        [
            ("bert", 1, "cost", 3, "Test CPU", "onnxruntime", 0.5, "Test CPU", "pytorch", 0.8, 0.6),
            ("bert", 4, "cost", 3, "Test CPU", "pytorch", 0.5, "Test GPU", "pytorch", 1.0, 1.0),
        ]
    )
    assert _optimal(con, "energy") == approx_rows(
        [("bert", 1, "energy", 1, "Test GPU", "pytorch", 0.4, None, None, None, None)]
    )
    assert _optimal(con, "latency", hardware=["Test CPU"]) == approx_rows(
        [
            ("bert", 1, "latency", 2, "Test CPU", "onnxruntime", 0.005, "Test CPU", "pytorch", 0.008, 0.6),
            ("bert", 4, "latency", 1, "Test CPU", "pytorch", 0.020, None, None, None, None),
            ("llama", 1, "latency", 1, "Test CPU", "pytorch", 0.1, None, None, None, None),
        ]
    )


def test_speedup(con):
    rows = q(
        con,
        """select model_id, batch_size, hardware_name, backend, median_s, baseline_hardware,
                            baseline_median_s, speedup from speedup order by model_id, batch_size, speedup""",
    )
    assert rows == approx_rows(
        [
            ("bert", 1, "Test CPU", "pytorch", 0.008, "Test CPU", 0.008, 1.0),
            ("bert", 1, "Test CPU", "onnxruntime", 0.005, "Test CPU", 0.008, 1.6),
            ("bert", 1, "Test GPU", "pytorch", 0.002, "Test CPU", 0.008, 4.0),
            ("bert", 4, "Test CPU", "pytorch", 0.020, "Test CPU", 0.020, 1.0),
            ("bert", 4, "Test GPU", "onnxruntime", 4 / 760, "Test CPU", 0.020, 3.8),
            ("bert", 4, "Test GPU", "pytorch", 0.004, "Test CPU", 0.020, 5.0),
            ("llama", 1, "Test CPU", "pytorch", 0.1, "Test CPU", 0.1, 1.0),
        ]
    )


def test_batch_scaling(con):
    rows = q(
        con,
        """select model_id, hardware_name, backend, batch_size, latency_s, throughput,
                            latency_vs_smallest_batch, scaling_efficiency
                     from batch_scaling order by model_id, hardware_name, backend, batch_size""",
    )
    assert rows == approx_rows(
        [
            ("bert", "Test CPU", "onnxruntime", 1, 0.005, 200.0, 1.0, 1.0),
            ("bert", "Test CPU", "pytorch", 1, 0.008, 125.0, 1.0, 1.0),
            ("bert", "Test CPU", "pytorch", 4, 0.020, 200.0, 2.5, 0.4),
            ("bert", "Test GPU", "onnxruntime", 4, 4 / 760, 760.0, 1.0, 1.0),
            ("bert", "Test GPU", "pytorch", 1, 0.002, 500.0, 1.0, 1.0),
            ("bert", "Test GPU", "pytorch", 4, 0.004, 1000.0, 2.0, 0.5),
            ("llama", "Test CPU", "pytorch", 1, 0.1, 10.0, 1.0, 1.0),
        ]
    )


def test_trends(con):
    rows = q(
        con,
        """select result_id, git_commit, median, change_vs_previous from trends
                     where model_id = 'bert' and backend = 'pytorch' and hardware_name = 'Test CPU'
                       and batch_size = 1 order by run_started_at""",
    )
    assert rows == approx_rows([("1", "c1", 0.010, None), ("2", "c2", 0.008, -0.2)])
    assert q(con, "select count(*), count(distinct series_id) from trends") == [(8, 7)]

"""Repeats as a level in the data: K processes per scenario, interleaved in randomised rounds,
kept apart in the warehouse, and intervals that see process-to-process variance."""

from __future__ import annotations

from pathlib import Path

import duckdb
import numpy as np
import pyarrow.parquet as pq
import pytest

from benchdb.analysis import hierarchy
from benchdb.analysis.stats import BOOTSTRAP, MAX_BOOTSTRAP_N, bootstrap_median_ratios, bootstrap_medians
from benchdb.harness.scenario import RunOptions
from benchdb.harness.timing import StopRule
from benchdb.plan.driver import run_plan
from benchdb.plan.planning import build_plan
from benchdb.schema import contract
from benchdb.warehouse import Warehouse

RULE = StopRule(warmup_iters=1, min_iters=5, min_time_s=0.01, max_time_s=0.05)


def test_hierarchical_bootstrap_known_answer():
    """No noise inside processes, process values 1, 2, 3: the resampled pooled median is the median
    of 3 draws from {1, 2, 3}: P(1) = P(3) = 7/27, P(2) = 13/27, and the 95 % interval is [1, 3]."""
    groups = [np.full(50, 1.0), np.full(50, 2.0), np.full(50, 3.0)]
    meds = hierarchy.resampled_medians(groups, resamples=20000, seed=1)
    freq = {v: float(np.mean(meds == v)) for v in (1.0, 2.0, 3.0)}
    assert freq[1.0] == pytest.approx(7 / 27, abs=0.01) and freq[3.0] == pytest.approx(7 / 27, abs=0.01)
    assert freq[2.0] == pytest.approx(13 / 27, abs=0.01)
    assert hierarchy.hierarchical_median_ci(groups) == (1.0, 3.0)
    # A within-process interval would have called this 2.0 +- nothing.
    assert hierarchy.hierarchical_median_ci([np.full(50, 2.0)]) is None


def test_hierarchical_interval_widens_with_between_process_spread():
    rng = np.random.default_rng(0)
    tight = [rng.normal(1.0, 0.01, 300) for _ in range(4)]
    spread = [rng.normal(m, 0.01, 300) for m in (0.8, 1.0, 1.1, 1.3)]
    lo_t, hi_t = hierarchy.hierarchical_median_ci(tight)
    lo_s, hi_s = hierarchy.hierarchical_median_ci(spread)
    assert hi_s - lo_s > 10 * (hi_t - lo_t)
    point, lo, hi = hierarchy.ratio_ci(tight, [g * 1.2 for g in tight])
    assert point == pytest.approx(0.2, abs=0.01) and lo < 0.2 < hi and lo > 0.15


def test_repeats_are_interleaved_in_randomised_rounds(tmp_path):
    opts = RunOptions(
        "numpy", ("matmul:8", "matmul:16"), batch_sizes=(1, 2), threads=1, rule=RULE, out=tmp_path, repeats=3
    )
    order = []
    run_plan(
        build_plan([opts]),
        config={},
        out=str(tmp_path),
        seed=7,
        progress=lambda o, done, total: order.append(o.scenario.label()),
    )
    scenarios = sorted(set(order))
    assert len(scenarios) == 4 and len(order) == 12
    rounds = [order[i : i + 4] for i in range(0, 12, 4)]
    assert all(sorted(r) == scenarios for r in rounds)  # every round runs each scenario once
    again = []
    run_plan(
        build_plan([opts]),
        config={},
        out=str(tmp_path),
        seed=7,
        progress=lambda o, done, total: again.append(o.scenario.label()),
    )
    assert again == order  # the seed fixes the order
    other = []
    run_plan(
        build_plan([opts]),
        config={},
        out=str(tmp_path),
        seed=8,
        progress=lambda o, done, total: other.append(o.scenario.label()),
    )
    assert other != order


def test_repeats_reach_the_warehouse_as_a_level(tmp_path):
    out, db = tmp_path / "res", tmp_path / "w.duckdb"
    opts = RunOptions(
        "numpy", ("matmul:16",), batch_sizes=(1,), threads=1, rule=RULE, out=out, repeats=3, max_background_cpu=100
    )
    report = run_plan(build_plan([opts]), config={}, out=str(out))
    (path,) = report.files
    footer = contract.read_footer(path)
    assert footer.scenario["repeats"] == 3
    assert sorted(set(pq.read_table(path, columns=["repeat"]).column("repeat").to_pylist())) == [0, 1, 2]
    Warehouse(db).ingest([out])
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT repeats, ci_method FROM results").fetchall() == [(3, "hierarchical_bootstrap")]
    assert con.execute("SELECT count(DISTINCT repeat) FROM samples WHERE metric = 'latency_s'").fetchall() == [(3,)]
    lo, med, hi = con.execute("SELECT median_ci_low, median, median_ci_high FROM results").fetchone()
    assert lo <= med <= hi
    con.close()


def test_repeats_need_separate_processes(tmp_path):
    from benchdb.errors import BenchdbError

    opts = RunOptions("numpy", ("matmul:8",), threads=1, rule=RULE, out=tmp_path, repeats=2, isolate=False)
    with pytest.raises(BenchdbError, match="--repeats needs separate processes"):
        run_plan(build_plan([opts]), config={}, out=str(tmp_path))


def test_contract_v1_files_without_a_repeat_column_still_ingest(tmp_path):
    fixtures = Path(__file__).parents[1] / "fixtures" / "contract_v1"
    s = Warehouse(tmp_path / "w.duckdb").ingest([fixtures])
    assert s.new == 8 and not s.rejected
    con = duckdb.connect(str(tmp_path / "w.duckdb"), read_only=True)
    assert con.execute("SELECT DISTINCT repeat FROM samples").fetchall() == [(0,)]
    assert con.execute("SELECT DISTINCT repeats, ci_method FROM results").fetchall() == [(1, "order_statistics")]


def _procs(shifts, n=400, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.lognormal(np.log(0.01 * (1 + s)), 0.01, n) for s in shifts]


def test_outlier_processes_known_answers():
    """One process of five sat on a bad moment of the host (+50 %): it is set aside. A faster one
    is not (a shared machine only slows), nor any when every process moved (a real change),
    nor with three processes; two slow ones in five: only the slowest (one per 4 processes)."""
    assert hierarchy.outlier_processes(_procs([0, 0.01, 0.5, -0.01, 0])) == [2]
    assert hierarchy.outlier_processes(_procs([0, 0.01, -0.4, -0.01, 0])) == []
    assert hierarchy.outlier_processes(_procs([0, 0.01, -0.4, -0.01, 0]), slow_is_higher=False) == [2]
    assert hierarchy.outlier_processes(_procs([0.3, 0.31, 0.29, 0.3, 0.3])) == []
    assert hierarchy.outlier_processes(_procs([0, 0.9, 0])) == []
    assert hierarchy.outlier_processes(_procs([0.2, 0, 0.6, 0.01, 0])) == [2]
    assert hierarchy.outlier_processes(_procs([0, 0.03, 0, 0.01, 0])) == []  # within the 5 % floor
    assert hierarchy.outlier_processes(_procs([0] * 8 + [0.4, 0.5])) == [8, 9]  # 10 processes: 2


def test_the_gate_sets_an_outlier_process_aside_and_says_so():
    from benchdb.analysis import gate
    from benchdb.analysis.verdict import judge

    def verdict(base, cand):
        return judge(
            {},
            gate.SideSamples("ok", "valid", unit="s", values=np.concatenate(base), processes=base),
            gate.SideSamples("ok", "valid", unit="s", values=np.concatenate(cand), processes=cand),
            threshold=0.05,
            interleaved=True,
        )

    aa = verdict(_procs([0, 0.01, 0.7, -0.01, 0], seed=1), _procs([0, 0, 0.01, -0.01, 0], seed=2))
    assert aa.verdict == "unchanged" and aa.reason.endswith("; set aside as outlier processes: baseline +70%")
    assert aa.n_base == 1600 and "(1 + 0 outlier process(es) set aside)" in aa.interval
    slower = verdict(_procs([0, 0.01, 0, -0.01, 0.6], seed=3), _procs([0.1, 0.11, 0.1, 0.09, 0.8], seed=4))
    assert slower.verdict == "regressed" and slower.change == pytest.approx(0.10, abs=0.01)


def test_a_side_is_its_typical_process_where_processes_fall_into_modes():
    """15 processes a side, some ~10 % slower throughout (processes that fall into modes, as numpy
    matmul's at n=96 did on this VM). The base has 6 slow processes, the A/A candidate 8: the pooled median jumps from
    the fast mode to the slow one (+10 %), the typical process (geometric mean of the process
    medians) moves by 1.1 ** (2/15) - 1 = +1.3 % with a 90 % interval inside +-5 %. Through the
    gate, a slow minority (3 and 5 of 15) is unchanged, and every process 10 % slower is regressed
    at +10 %."""
    from benchdb.analysis import gate
    from benchdb.analysis.verdict import judge

    rng = np.random.default_rng(5)

    def side(slow: int, shift: float = 1.0):
        return [rng.normal(shift * (1.1 if i < slow else 1.0), 0.003, 400) for i in range(15)]

    base, cand = side(6), side(8)
    assert hierarchy.typical(base) == pytest.approx(1.1 ** (6 / 15), rel=2e-3)
    assert np.median(np.concatenate(cand)) / np.median(np.concatenate(base)) - 1 > 0.09
    point, lo, hi = hierarchy.ratio_ci(base, cand, level=0.90)
    assert point == pytest.approx(1.1 ** (2 / 15) - 1, abs=2e-3) and -0.05 < lo < point < hi < 0.05

    def verdict(b, c):
        return judge(
            {},
            gate.SideSamples("ok", "valid", unit="s", values=np.concatenate(b), processes=b),
            gate.SideSamples("ok", "valid", unit="s", values=np.concatenate(c), processes=c),
            threshold=0.05,
            interleaved=True,
        )

    aa = verdict(side(3), side(5))
    assert aa.verdict == "unchanged" and aa.change == pytest.approx(aa.cand_median / aa.base_median - 1)
    slower = verdict(side(5), side(5, shift=1.1))
    assert slower.verdict == "regressed" and slower.change == pytest.approx(0.10, abs=0.02)


def test_intervals_at_several_levels_come_from_one_set_of_resamples():
    # the gate asks for its 95 % and its equivalence interval at once: whatever the order of the
    # levels, each is the same interval (no level consumes the others' random draws), and they nest
    rng = np.random.default_rng(11)
    base = [rng.lognormal(0, 0.05, 300) for _ in range(4)]
    cand = [rng.lognormal(0.03, 0.05, 300) for _ in range(5)]
    levels = (0.95, 0.90, 0.5)
    both = hierarchy.ratio_cis(base, cand, levels, seed=7)
    assert both == hierarchy.ratio_cis(base, cand, levels[::-1], seed=7)[::-1]
    assert both[0][1] < both[1][1] < both[2][1] < both[2][2] < both[1][2] < both[0][2]
    assert hierarchy.ratio_cis([np.array([])], cand, levels) is None
    # one process's iterations, the larger side thinned to MAX_BOOTSTRAP_N: the interval is the
    # percentile interval of the seeded resampled medians' ratio
    vb, vc = rng.lognormal(0, 0.05, 12_000), np.concatenate(cand)
    draws = np.random.default_rng(3)
    thinned = np.sort(vb)[np.linspace(0, len(vb) - 1, MAX_BOOTSTRAP_N).astype(int)]
    base_medians = bootstrap_medians(thinned, BOOTSTRAP, draws)
    ratios = bootstrap_medians(vc, BOOTSTRAP, draws) / base_medians - 1
    point = np.median(vc) / np.median(thinned) - 1
    want = [v for lv in (0.95, 0.5) for v in (point, *np.quantile(ratios, [(1 - lv) / 2, (1 + lv) / 2]))]
    got = bootstrap_median_ratios(vb, vc, (0.95, 0.5), seed=3)
    assert [v for interval in got for v in interval] == pytest.approx(want, rel=1e-12)


def test_student_t_quantiles_match_the_tables():
    from benchdb.analysis.stats import t_two_sided

    table = {(1, 0.95): 12.7062, (2, 0.95): 4.3027, (2, 0.90): 2.9200, (3, 0.90): 2.3534, (4, 0.95): 2.7764}
    table |= {(5, 0.99): 4.0321, (9, 0.95): 2.2622, (14, 0.90): 1.7613, (30, 0.95): 2.0423}
    for (df, level), want in table.items():
        assert t_two_sided(level, df) == pytest.approx(want, abs=1e-4), (df, level)
    assert hierarchy.small_sample_factor(1, 0.95) == 1.0
    assert hierarchy.small_sample_factor(3, 0.95) == pytest.approx(2.689, abs=1e-3)
    with pytest.raises(ValueError):
        t_two_sided(1.0, 3)


def test_few_processes_that_differ_widely_give_few_false_alarms():
    """A/A pairs whose processes differ by 20 % (log sd; a loaded CI machine, where a 3-process
    `--ab` A/A run came out regressed), 3 processes a side: the 95 % interval lies beyond a 5 %
    threshold in at most 5 % of pairs. Resampling the 3 processes alone gave 35 of 300 (11.7 %)."""
    rng = np.random.default_rng(1)
    alarms = 0
    for trial in range(300):
        b, c = ([np.exp(rng.normal(0, 0.2)) * np.exp(rng.normal(0, 0.01, 50)) for _ in range(3)] for _ in range(2))
        ((_, lo, hi),) = hierarchy.ratio_cis(b, c, (0.95,), seed=trial)
        alarms += lo > 0.05 or hi < -0.05
    assert alarms <= 15, alarms

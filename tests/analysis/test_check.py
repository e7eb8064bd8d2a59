"""The gate made faster (each side sorted once, medians read off the sorted samples, the
table's scale made once) answers as the gate before it: on the same warehouses -- A/A pairs, clear
regressions and improvements, noisy series, sides of thousands of samples (thinned), one process
against several, interleaved A/B processes -- every series gets the same verdict, medians, change
and intervals, bit for bit, as the computation it replaced (tests/support/gate_reference.py), which
reads each result's raw samples on its own."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import make_meta, make_run, write_file
from support.gate_reference import judge as reference_judge
from support.gate_reference import processes

from benchdb.analysis import check
from benchdb.store import database
from benchdb.warehouse import Warehouse

#: model -> (samples a side, spread (lognormal sigma), candidate's change, baseline's and candidate's
#: processes): each a case the gate must judge as it did.
SERIES = {
    "matmul:1": (60, 0.01, 0.0, 1, 1),  # A/A
    "matmul:2": (61, 0.01, 0.30, 1, 1),  # clear regression
    "matmul:3": (60, 0.01, -0.30, 1, 1),  # clear improvement
    "matmul:4": (40, 0.30, 0.05, 1, 1),  # noisy: straddles the threshold
    "matmul:5": (6001, 0.05, 0.0, 1, 1),  # thinned (odd n)
    "matmul:6": (8000, 0.05, 0.10, 1, 1),  # thinned (even n), a change
    "matmul:7": (90, 0.02, 0.08, 1, 3),  # one process against three
    "matmul:8": (90, 0.02, 0.0, 3, 3),  # processes on both sides
    "matmul:9": (5, 0.01, 0.0, 1, 1),  # too few samples
}
HISTORY = 9


def _values(rng, n: int, sigma: float, change: float = 0.0) -> np.ndarray:
    return rng.lognormal(np.log(1e-3 * (1 + change)), sigma, n)


def _warehouse(tmp_path, seed: int, *, with_history: bool, interleaved: bool = False):
    """A warehouse of SERIES: (with_history) HISTORY earlier nights of each series, then a baseline
    and a candidate run (``interleaved``: the two sides of one --ab run)."""
    rng = np.random.default_rng(seed)
    res = tmp_path / f"res{seed}"
    if with_history:
        for night in range(HISTORY):
            run = make_run(started_at=f"2026-09-{1 + night:02d}T10:00:00+00:00")
            for model, (n, sigma, _, _, _) in SERIES.items():
                meta = make_meta(run, model_id=model)
                write_file(
                    res, meta, _values(rng, n, sigma) * rng.lognormal(0, 0.005), name=f"h{night}-{model}.parquet"
                )
    tags = (["ab-0a1b2c3d", "ab-0a1b2c3d-base"], ["ab-0a1b2c3d", "ab-0a1b2c3d-cand"]) if interleaved else ([], [])
    base = make_run(started_at="2026-10-01T10:00:00+00:00", tags=["base", *tags[0]])
    cand = make_run(started_at="2026-10-01T10:00:01+00:00", tags=["cand", *tags[1]])
    for model, (n, sigma, change, kb, kc) in SERIES.items():
        write_file(res, make_meta(base, model_id=model), _values(rng, n, sigma), name=f"b-{model}.parquet", repeats=kb)
        write_file(
            res, make_meta(cand, model_id=model), _values(rng, n, sigma, change), name=f"c-{model}.parquet", repeats=kc
        )
    db = tmp_path / f"w{seed}.duckdb"
    Warehouse(db).ingest([res])
    return db


@pytest.mark.parametrize(
    ("seed", "with_history", "interleaved"), [(1, True, False), (2, True, False), (3, False, True), (4, False, False)]
)
def test_the_faster_gate_answers_as_the_raw_sample_computation_it_replaced(tmp_path, seed, with_history, interleaved):
    db = _warehouse(tmp_path, seed, with_history=with_history, interleaved=interleaved)
    con, _ = database.open_readonly(db)
    try:
        got = check.compare(con, "tag:base", "tag:cand")
        assert len(got.comparisons) == len(SERIES)
        for c in got.comparisons:
            metric = c.metric or "latency_s"
            gb = processes(con, c.scenario["base_result_id"], metric)
            gc = processes(con, c.scenario["cand_result_id"], metric)
            want = reference_judge(
                gb, gc, threshold=c.threshold or 0.05, noise_known=c.noise is not None, interleaved=interleaved
            )
            model = c.scenario["model_id"]
            assert c.processes is None or c.processes == (len(gb), len(gc)), model
            assert (c.verdict, c.base_median, c.cand_median) == (want.verdict, want.base_median, want.cand_median), (
                model
            )
            if want.change is None:
                assert c.change is None, model
                continue
            assert (c.change, (c.ci_low, c.ci_high), (c.eq_low, c.eq_high)) == (want.change, want.ci, want.eq), model
    finally:
        con.close()
    verdicts = {c.scenario["model_id"]: c.verdict for c in got.comparisons}
    assert verdicts["matmul:9"] == "inconclusive"
    if with_history:  # the cases decide as their names say
        assert verdicts["matmul:1"] == verdicts["matmul:5"] == "unchanged"
        assert verdicts["matmul:2"] == "regressed" and verdicts["matmul:3"] == "improved"

"""The gate's raw samples (benchdb.analysis.gate_samples): each result's samples of a metric, in
measurement order, read from flat columns."""

import numpy as np


def test_measured_samples_come_back_in_measurement_order_even_from_rows_stored_out_of_order():
    """The gate reads flat columns and relies on no ORDER BY: rows of a result stored shuffled and
    interleaved with another's are grouped and sorted by (repeat, iteration) all the same."""
    import duckdb

    from benchdb.analysis import gate_samples

    con = duckdb.connect()
    rows = [
        (rid, "latency_s", "s", i, 0.0, float(100 * k + 10 * rep + i), rep)
        for k, rid in enumerate(("a", "b"))
        for rep in (0, 1)
        for i in range(5)
    ]
    rows = [rows[i] for i in np.random.default_rng(0).permutation(len(rows))]
    con.execute(
        "CREATE TABLE samples (result_id VARCHAR, metric VARCHAR, unit VARCHAR, iteration INTEGER, "
        "t_offset_s DOUBLE, value DOUBLE, repeat INTEGER)"
    )
    con.executemany("INSERT INTO samples VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
    got = {r: v.tolist() for r, v in gate_samples.measured_samples(con, ["b", "a", "missing"], "latency_s").items()}
    assert got == {
        "a": [0.0, 1, 2, 3, 4, 10, 11, 12, 13, 14],
        "b": [100.0, 101, 102, 103, 104, 110, 111, 112, 113, 114],
    }

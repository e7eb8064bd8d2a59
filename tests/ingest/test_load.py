"""One batch, one transaction (benchdb.ingest.load): a mixed batch loads its good files and rejects
each bad one with the reason the footer check gives it alone; rows that claim another file's scenario,
break a row rule or change after they were read never reach the samples; samples come back in
measurement order. Real contract files, a real DuckDB warehouse."""

from __future__ import annotations

from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import make_meta, make_run, write_file
from support.contract_files import read_alone, variety, write_raw
from support.contract_files import verdict as footer_verdict

from benchdb.ingest import ingest
from benchdb.schema import contract

pytestmark = pytest.mark.core


def test_ingest_of_a_mixed_batch_loads_the_good_files(tmp_path):
    folder = tmp_path / "results"
    folder.mkdir()
    files = variety(folder)
    expected = {str(f.resolve()): footer_verdict(read_alone(f)) for f in files}
    s = ingest([folder], tmp_path / "w.duckdb")
    rejected = dict(s.rejected)
    for path, verdict in expected.items():
        if verdict[0] == "error":
            assert rejected[path] == verdict[1]
    # batch sizes 1-5, one of the four good files of batch size 6 and one of src / by_duckdb (the
    # others claim a scenario already loaded)
    assert s.new == 7 and len(rejected) == len(files) - 7
    assert sum("is already loaded from" in r for r in rejected.values()) == 4


def test_a_file_whose_rows_claim_another_scenario_never_mixes_into_its_statistics(tmp_path):
    """Ingest takes its row checks and its statistics in one pass over a batch, grouped by file:
    a file whose rows carry another file's scenario id is rejected, and the statistics of the
    file it imitates come from that file's own rows only."""
    folder = tmp_path / "results"
    folder.mkdir()
    run = make_run()
    good_values = np.linspace(1e-3, 2e-3, 51)
    good = write_file(folder, make_meta(run, batch_size=1), good_values)
    sid = contract.read_footer(good).scenario["scenario_id"]
    meta = make_meta(run, batch_size=2)
    rows = [("latency_s", "s", i, i * 1e-3, 5.0, 0) for i in range(200)]  # far from good's values
    table = contract.samples_table(meta, rows)
    table = table.set_column(
        table.schema.get_field_index("scenario_id"), "scenario_id", pa.array([sid] * table.num_rows)
    )
    bad = write_raw(folder / "imitator.parquet", table, meta)
    s = ingest([folder], tmp_path / "w.duckdb")
    assert s.new == 1
    assert dict(s.rejected)[str(bad.resolve())].startswith("scenario key columns: scenario_id")
    con = duckdb.connect(str(tmp_path / "w.duckdb"), read_only=True)
    try:
        n, median, high = con.execute("SELECT n, median, max FROM results WHERE result_id = ?", [sid]).fetchone()
        kept = con.execute("SELECT count(*) FROM samples").fetchone()[0]
    finally:
        con.close()
    assert (n, kept) == (51, 51)
    assert median == pytest.approx(float(np.median(good_values)), rel=1e-12) and high == pytest.approx(2e-3)


def test_samples_come_back_in_measurement_order(tmp_path):
    """Ingest loads rows in parallel, in no particular order; what reads them back for statistics
    (the gate, the bootstrap) gets them per process in iteration order whatever the file's order."""
    from benchdb.analysis import gate_samples

    folder = tmp_path / "results"
    folder.mkdir()
    meta = make_meta(make_run())
    meta = {**meta, "scenario": {**meta["scenario"], "repeats": 2}}
    rows = [("latency_s", "s", i, i * 1e-3, 1e-3 + r * 1e-4 + i * 1e-6, r) for r in (0, 1) for i in range(3000)]
    rows.reverse()  # written last iteration first
    path = contract.write_scenario(folder / "rev.parquet", meta, contract.samples_table(meta, rows))
    ingest([folder], tmp_path / "w.duckdb")
    sid = contract.read_footer(path).scenario["scenario_id"]
    con = duckdb.connect(str(tmp_path / "w.duckdb"), read_only=True)
    try:
        vals = gate_samples.measured_samples(con, [sid], "latency_s")[sid].tolist()
        per = dict(
            (rep, v)
            for _r, rep, v in con.execute(
                "SELECT result_id, repeat, list(value ORDER BY iteration) FROM samples GROUP BY ALL"
            ).fetchall()
        )
    finally:
        con.close()
    expected = [1e-3 + r * 1e-4 + i * 1e-6 for r in (0, 1) for i in range(3000)]
    assert vals == expected
    assert per[0] == expected[:3000] and per[1] == expected[3000:]


def _results_and_samples(db):
    con = duckdb.connect(str(db), read_only=True)
    try:
        stats = con.execute(
            "SELECT result_id, metric, n, mean, median, min, max, stddev, p25, p75, p90, p95, p99,"
            " median_ci_low, median_ci_high FROM result_metrics ORDER BY ALL"
        ).fetchall()
        samples = con.execute(
            "SELECT result_id, metric, unit, iteration, t_offset_s, value, repeat FROM samples ORDER BY ALL"
        ).fetchall()
    finally:
        con.close()
    return stats, samples


def test_a_batch_is_written_again_without_the_file_that_breaks_a_rule(tmp_path):
    """A batch's rows are written as parts before its row checks read them back: a file that
    breaks a row rule is rejected, and the batch is written again without it. The warehouse then
    holds exactly what it holds without that file, and its samples folder nothing of it."""
    run = make_run()
    rng = np.random.default_rng(3)
    good = [make_meta(run, batch_size=b) for b in (1, 2, 3)]
    values = [rng.normal(1e-3 * b, 1e-5, 700) for b in (1, 2, 3)]
    alone, mixed = tmp_path / "alone", tmp_path / "mixed"
    for folder in (alone, mixed):
        folder.mkdir()
        for meta, vals in zip(good, values, strict=True):
            write_file(folder, meta, vals)
    bad_values = rng.normal(1e-3, 1e-5, 700)
    bad_values[350] = float("nan")
    bad = write_file(mixed, make_meta(run, batch_size=4), bad_values)
    s = ingest([mixed], tmp_path / "mixed.duckdb")
    assert s.new == 3 and dict(s.rejected)[str(bad.resolve())].startswith("value: 1 non-finite")
    assert ingest([alone], tmp_path / "alone.duckdb").new == 3
    assert _results_and_samples(tmp_path / "mixed.duckdb") == _results_and_samples(tmp_path / "alone.duckdb")
    written = pq.read_table(sorted((tmp_path / "mixed.duckdb.samples").rglob("*.parquet")))
    assert written.num_rows == 3 * 700
    assert contract.read_footer(bad).scenario["scenario_id"] not in set(written.column("result_id").to_pylist())


def test_a_file_without_parquet_statistics_loads_as_one_with_them(tmp_path):
    """Ownership and row rules are checked from the rows, never from Parquet statistics: a file
    written without any loads exactly as the same file with them."""
    run = make_run()
    rng = np.random.default_rng(5)
    metas = [make_meta(run, batch_size=b) for b in (1, 2, 3)]
    values = [rng.lognormal(-7, 0.3, 400) for _ in metas]
    with_stats, no_stats = tmp_path / "with_stats", tmp_path / "no_stats"
    for folder in (with_stats, no_stats):
        folder.mkdir()
        for meta, vals in zip(metas, values, strict=True):
            write_file(folder, meta, vals)
    # the same rows and metadata, written without Parquet statistics
    plain = no_stats / f"{metas[0]['scenario']['scenario_id'][:12]}.parquet"
    table = pq.read_table(plain)
    pq.write_table(table, plain, write_statistics=False)
    assert pq.read_metadata(plain).row_group(0).column(0).statistics is None
    for folder in (with_stats, no_stats):
        assert ingest([folder], tmp_path / f"{folder.name}.duckdb").new == 3
    a_stats, a_samples = _results_and_samples(tmp_path / "with_stats.duckdb")
    b_stats, b_samples = _results_and_samples(tmp_path / "no_stats.duckdb")
    assert a_samples == b_samples and len(a_samples) == 1200
    assert len(a_stats) == 3
    for a, b in zip(a_stats, b_stats, strict=True):
        assert a[:3] == b[:3] and a[3:] == pytest.approx(b[3:], rel=1e-12)


def _view_and_count(db):
    con = duckdb.connect(str(db), read_only=True)
    try:
        view = con.execute("SELECT sql FROM duckdb_views() WHERE view_name = 'samples'").fetchone()[0]
        return view, con.execute("SELECT count(*) FROM samples").fetchone()[0]
    finally:
        con.close()


def test_a_batch_whose_every_file_is_rejected_leaves_the_samples_as_published(tmp_path):
    """A batch's rows are written before its checks: when every file of it is rejected, nothing of
    the write stays, in the samples folder or in the catalog's view of it, in a new warehouse and
    in one that holds data."""
    run = make_run()
    nan = np.full(60, 1e-3)
    nan[7] = float("nan")
    (tmp_path / "bad").mkdir()
    bad = write_file(tmp_path / "bad", make_meta(run, batch_size=9), nan)
    new = tmp_path / "new.duckdb"
    s = ingest([tmp_path / "bad"], new)
    assert s.new == 0 and dict(s.rejected)[str(bad.resolve())].startswith("value: 1 non-finite")
    assert _view_and_count(new)[1] == 0
    assert not list(tmp_path.glob("new.duckdb.samples/**/*.parquet"))

    (tmp_path / "good").mkdir()
    write_file(tmp_path / "good", make_meta(run, batch_size=1))
    held = tmp_path / "held.duckdb"
    assert ingest([tmp_path / "good"], held).new == 1
    before = _view_and_count(held), sorted(p.name for p in tmp_path.glob("held.duckdb.samples/**/*"))
    assert before[0][1] == 50
    assert ingest([tmp_path / "bad"], held).new == 0
    assert (_view_and_count(held), sorted(p.name for p in tmp_path.glob("held.duckdb.samples/**/*"))) == before


def test_ctrl_c_while_a_batch_is_written_is_an_interrupt_not_a_rejection(tmp_path, monkeypatch):
    """Ctrl-C while ingest builds a batch's file rows, its write running in the background (the
    interrupt lands once the write's first part exists): the write is stopped and the interrupt
    goes on as itself, never as the stopped write's error (which would reject the file as
    unloadable); nothing is kept, and the next ingest loads the file."""
    import time

    from benchdb.ingest import rows

    meta = make_meta(make_run(), batch_size=1)
    n = 3_000_000
    it = np.arange(n, dtype=np.int32)
    table = contract.columns_table(
        meta,
        {
            "metric": ["latency_s"] * n,
            "unit": ["s"] * n,
            "iteration": it,
            "t_offset_s": it * 1e-3,
            "value": np.full(n, 1e-3),
        },
    )
    (tmp_path / "r").mkdir()
    contract.write_scenario(tmp_path / "r" / "big.parquet", meta, table)
    db = tmp_path / "w.duckdb"
    real = rows.batch_row

    def interrupted(*args, **kwargs):
        deadline = time.monotonic() + 30
        while not list(tmp_path.glob("w.duckdb.samples/*/*.parquet")) and time.monotonic() < deadline:
            time.sleep(0.001)
        raise KeyboardInterrupt

    monkeypatch.setattr(rows, "batch_row", interrupted)
    with pytest.raises(KeyboardInterrupt):
        ingest([tmp_path / "r"], db)
    assert not db.exists() and not (tmp_path / "w.duckdb.samples").exists()
    monkeypatch.setattr(rows, "batch_row", real)
    s = ingest([tmp_path / "r"], db)
    assert (s.new, s.rejected, s.rejected_before, s.samples) == (1, [], [], n)


def test_an_iteration_past_integer_rejects_its_file_by_the_row_rule(tmp_path):
    """The warehouse keeps iterations as INTEGER: a file whose int64 iteration is negative or past
    2147483647 is rejected with the iteration rule's reason (not as a file that cannot be
    loaded), and a good file in the same batch loads; 2147483647 itself is an iteration."""
    folder = tmp_path / "r"
    folder.mkdir()
    run = make_run()
    for batch_size, last in ((1, -3_000_000_000), (2, 3_000_000_000), (3, 2_147_483_647)):
        meta = make_meta(run, batch_size=batch_size)
        t = contract.samples_table(meta, [("latency_s", "s", i, i * 1e-3, 1e-3) for i in range(20)])
        col = t.schema.get_field_index("iteration")
        t = t.set_column(col, "iteration", pa.array([*range(19), last], pa.int64()))
        write_raw(folder / f"b{batch_size}.parquet", t, meta)
    s = ingest([folder], tmp_path / "w.duckdb")
    rejected = dict(s.rejected)
    assert s.new == 1 and sorted(rejected) == sorted(str((folder / f"b{b}.parquet").resolve()) for b in (1, 2))
    assert all(r == "iteration: 1 missing, negative or above 2147483647 value(s)" for r in rejected.values())
    con = duckdb.connect(str(tmp_path / "w.duckdb"), read_only=True)
    try:
        assert con.execute("SELECT max(iteration), count(*) FROM samples").fetchone() == (2_147_483_647, 20)
    finally:
        con.close()


def test_a_batch_rewritten_without_a_bad_file_keeps_the_rows_it_checked(tmp_path, monkeypatch):
    """When a file of a batch is rejected, the batch is written again from the parts it checked,
    never from its source files: a file changed after the batch read it (here: every value made
    NaN once the first write is done) still loads exactly the rows that were checked and counted."""
    from benchdb.ingest import load

    folder = tmp_path / "r"
    folder.mkdir()
    run = make_run()
    values = np.random.default_rng(9).normal(1e-3, 1e-5, 500)
    good = write_file(folder, make_meta(run, batch_size=1), values)
    nan = np.full(60, 1e-3)
    nan[5] = float("nan")
    write_file(folder, make_meta(run, batch_size=2), nan)
    changed = pq.read_table(good)
    changed = changed.set_column(changed.schema.get_field_index("value"), "value", pa.array([float("nan")] * 500))
    original_write = load.Loader._write

    def write_then_change(self, batch):
        parts = original_write(self, batch)
        pq.write_table(changed, good)  # the same footer metadata, every value now NaN
        return parts

    monkeypatch.setattr(load.Loader, "_write", write_then_change)
    s = ingest([folder], tmp_path / "w.duckdb")
    assert s.new == 1 and len(s.rejected) == 1
    con = duckdb.connect(str(tmp_path / "w.duckdb"), read_only=True)
    try:
        kept = [v for (v,) in con.execute("SELECT value FROM samples ORDER BY iteration").fetchall()]
    finally:
        con.close()
    assert kept == values.tolist()


def test_a_v1_files_own_repeat_column_and_a_v2_files_recorded_as_change_nothing(tmp_path):
    """A v1 file measured in one process: a `repeat` column it carries is not read (repeat 0).
    `recorded_as` is what v1 upgrades set; a v2 file that states one (or a malformed one) is
    checked against its own key, and a malformed one is never an internal error."""
    import shutil

    v1 = sorted(Path(__file__).parents[1].glob("fixtures/contract_v1/*/matmul-32__*bs1*.parquet"))[0]
    folder = tmp_path / "r"
    folder.mkdir()
    t = pq.read_table(v1)
    with_repeat = t.append_column("repeat", pa.array([7] * t.num_rows, pa.int32()))
    pq.write_table(with_repeat.replace_schema_metadata(t.schema.metadata), folder / "v1.parquet")
    run = make_run()
    for i, recorded in enumerate(("x", [1], {"device": "cuda:9"})):
        meta = make_meta(run, batch_size=10 + i)
        meta["scenario"]["recorded_as"] = recorded
        write_file(folder, meta)
    s = ingest([folder], tmp_path / "w.duckdb")
    assert s.new == 4 and not s.rejected, s.rejected
    con = duckdb.connect(str(tmp_path / "w.duckdb"), read_only=True)
    try:
        assert con.execute("SELECT DISTINCT repeat FROM samples").fetchall() == [(0,)]
    finally:
        con.close()
    shutil.rmtree(folder)

import json
import os
import shutil
import signal
import subprocess
import sys

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from conftest import child, make_meta, make_run, write_file, write_suite

from benchdb.errors import BenchdbError
from benchdb.ingest import ingest
from benchdb.schema import contract

pytestmark = pytest.mark.core


def _counts(db_path):
    con = duckdb.connect(str(db_path), read_only=True)
    try:
        return {
            t: con.execute(f"select count(*) from {t}").fetchall()[0][0]
            for t in ("results", "samples", "runs", "hardware", "architectures", "result_metrics")
        }
    finally:
        con.close()


def test_ingest_loads_files_and_computes_statistics_in_sql(results_dir, db_path):
    values = np.arange(1, 101, dtype=float) / 1000.0  # 1..100 ms
    meta = make_meta(make_run(), batch_size=2)
    write_file(results_dir, meta, values)
    s = ingest([results_dir], db_path)
    assert (s.new, s.skipped, s.rejected, s.samples) == (1, 0, [], 100)
    con = duckdb.connect(str(db_path), read_only=True)
    row = con.execute(
        "select n, mean, median, min, max, p25, p75, p90, p99, median_ci_low, median_ci_high, "
        "throughput, status, validity from results"
    ).fetchall()[0]
    con.close()
    n, mean, median, mn, mx, p25, p75, p90, p99, lo, hi, tput, status, validity = row
    assert n == 100
    assert mean == pytest.approx(np.mean(values))
    assert median == pytest.approx(np.median(values))
    assert (mn, mx) == (0.001, 0.1)
    assert p25 == pytest.approx(np.percentile(values, 25))
    assert p90 == pytest.approx(np.percentile(values, 90))
    assert p99 == pytest.approx(np.percentile(values, 99))
    # order-statistic CI of the median for n=100: ranks 40 and 61 (1-based)
    assert (lo, hi) == (0.040, 0.061)
    assert tput == pytest.approx(2 / np.median(values))
    assert (status, validity) == ("ok", "valid")


def test_percentiles_are_null_without_enough_samples(results_dir, db_path):
    write_file(results_dir, make_meta(make_run()), [0.001, 0.002, 0.003, 0.004, 0.005])
    ingest([results_dir], db_path)
    con = duckdb.connect(str(db_path), read_only=True)
    row = con.execute("select n, median, p25, p75, p90, p95, p99, median_ci_low from results").fetchall()[0]
    con.close()
    assert row == (5, 0.003, 0.002, 0.004, None, None, None, None)


def test_ingest_is_idempotent(results_dir, db_path):
    write_suite(results_dir, n_files=4)
    first = ingest([results_dir], db_path)
    before = _counts(db_path)
    second = ingest([results_dir], db_path)
    assert (first.new, second.new, second.skipped) == (4, 0, 4)
    assert (
        _counts(db_path)
        == before
        == {"results": 4, "samples": 200, "runs": 1, "hardware": 1, "architectures": 1, "result_metrics": 4}
    )


def test_copied_file_is_a_duplicate_not_a_second_load(results_dir, db_path, tmp_path):
    (f,) = write_suite(results_dir, n_files=1)
    ingest([results_dir], db_path)
    other = tmp_path / "copy"
    other.mkdir()
    shutil.copy(f, other / "same.parquet")
    s = ingest([other], db_path)
    assert (s.new, s.duplicates) == (0, 1)
    assert _counts(db_path)["samples"] == 50
    # recognised on the next call without hashing again
    s = ingest([other], db_path)
    assert (s.new, s.skipped, s.duplicates) == (0, 1, 0)


def test_rewritten_file_with_same_scenario_is_rejected(results_dir, db_path):
    meta = make_meta(make_run())
    write_file(results_dir, meta, [0.001] * 20, name="a.parquet")
    ingest([results_dir], db_path)
    write_file(results_dir, meta, [0.002] * 20, name="a.parquet")  # same scenario, new content
    s = ingest([results_dir], db_path)
    assert s.new == 0 and len(s.rejected) == 1
    assert "metadata.scenario.scenario_id: scenario" in s.rejected[0][1]
    assert _counts(db_path)["samples"] == 20


def _bad_files(folder):
    """One file per rejection rule, each with the reason ingest must give."""
    run = make_run()
    out = {}
    # corrupt / truncated
    p = write_file(folder, make_meta(run, batch_size=11), name="truncated.parquet")
    p.write_bytes(p.read_bytes()[:200])
    out[p] = "file: not a readable Parquet file"
    # not even Parquet
    p = folder / "notes.parquet"
    p.write_text("this is not parquet")
    out[p] = "file: not a readable Parquet file"
    # wrong schema
    meta = make_meta(run, batch_size=12)
    t = contract.samples_table(meta, [("latency_s", "s", 0, 0.0, 0.001)]).drop_columns(["iteration"])
    p = folder / "wrong_schema.parquet"
    pq.write_table(t.replace_schema_metadata({contract.METADATA_KEY: json.dumps(meta).encode()}), p)
    out[p] = "iteration: missing column"
    # unknown contract version
    meta = make_meta(run, batch_size=13)
    t = contract.samples_table(meta, [("latency_s", "s", 0, 0.0, 0.001)])
    p = folder / "future.parquet"
    pq.write_table(
        t.replace_schema_metadata({contract.METADATA_KEY: json.dumps({**meta, "contract_version": 99}).encode()}), p
    )
    out[p] = "metadata.contract_version: unknown contract version 99"
    # NaN timing
    p = write_file(folder, make_meta(run, batch_size=14), [0.001, float("nan"), 0.001], name="nan.parquet")
    out[p] = "value: 1 non-finite or missing value(s) in metric latency_s"
    # infinite timing
    p = write_file(folder, make_meta(run, batch_size=15), [0.001, float("inf")], name="inf.parquet")
    out[p] = "value: 1 non-finite or missing value(s) in metric latency_s"
    # negative timing
    p = write_file(folder, make_meta(run, batch_size=16), [0.001, -0.5, -0.1], name="negative.parquet")
    out[p] = "value: 2 negative value(s) in metric latency_s"
    # rows that claim another scenario than the metadata
    meta = make_meta(run, batch_size=17)
    t = contract.samples_table(meta, [("latency_s", "s", 0, 0.0, 0.001)])
    t = t.set_column(t.schema.get_field_index("batch_size"), "batch_size", pa.array([99], pa.int32()))
    p = contract.write_scenario(folder / "mismatch.parquet", meta, t)
    out[p] = "scenario key columns: batch_size differ from metadata.scenario in 1 row(s)"
    # the same, from a writer that leaves no column statistics (rows are checked, never statistics)
    meta = make_meta(run, batch_size=19)
    t = contract.samples_table(meta, [("latency_s", "s", i, 0.0, 0.001) for i in range(3)])
    t = t.set_column(t.schema.get_field_index("model_id"), "model_id", pa.array(["a", "b", "matmul:64"]))
    p = folder / "no_stats.parquet"
    pq.write_table(
        t.replace_schema_metadata({contract.METADATA_KEY: json.dumps(meta).encode()}), p, write_statistics=False
    )
    out[p] = "scenario key columns: model_id differ from metadata.scenario in 2 row(s)"
    # status ok with no primary samples
    p = write_file(folder, make_meta(run, batch_size=18), [], name="empty_ok.parquet")
    out[p] = "metadata.scenario.status: ok, but the file has no latency_s samples"
    return out


def test_bad_files_are_rejected_with_reasons_while_good_files_load(results_dir, db_path):
    good = write_suite(results_dir, n_files=3)
    bad = _bad_files(results_dir)
    before = {p: p.read_bytes() for p in list(bad) + good}
    s = ingest([results_dir], db_path)
    assert s.new == 3
    got = dict(s.rejected)
    assert set(got) == {str(p) for p in bad}
    for p, reason in bad.items():
        assert got[str(p)].startswith(reason), (p.name, got[str(p)])
    assert _counts(db_path)["results"] == 3
    # user files are never moved, changed or deleted
    assert {p: p.read_bytes() for p in before} == before
    con = duckdb.connect(str(db_path), read_only=True)
    recorded = con.execute("select count(*) from ingested_files where status = 'rejected'").fetchall()[0][0]
    con.close()
    assert recorded == len(bad)
    # the next call skips them as rejected before (with the reason then), and reports them; nothing duplicated
    s2 = ingest([results_dir], db_path)
    assert s2.rejected == [] and s2.new == 0
    assert dict(s2.rejected_before) == got
    con = duckdb.connect(str(db_path), read_only=True)
    assert con.execute("select count(*) from ingested_files where status = 'rejected'").fetchall()[0][0] == len(bad)
    con.close()


def test_file_without_statistics_but_right_keys_loads(results_dir, db_path):
    meta = make_meta(make_run())
    t = contract.samples_table(meta, [("latency_s", "s", i, 0.0, 0.001) for i in range(3)])
    pq.write_table(
        t.replace_schema_metadata({contract.METADATA_KEY: json.dumps(meta).encode()}),
        results_dir / "plain.parquet",
        write_statistics=False,
    )
    s = ingest([results_dir], db_path)
    assert (s.new, s.rejected) == (1, [])


def test_failed_scenario_file_loads_as_a_result_without_statistics(results_dir, db_path):
    meta = make_meta(make_run(), status="oom", validity="invalid", error="OutOfMemoryError: 2 GiB")
    write_file(results_dir, meta, [])
    s = ingest([results_dir], db_path)
    assert s.new == 1 and not s.rejected
    con = duckdb.connect(str(db_path), read_only=True)
    assert con.execute("select status, error, n, median from results").fetchall() == [
        ("oom", "OutOfMemoryError: 2 GiB", 0, None)
    ]
    assert con.execute("select count(*) from results_latest").fetchall() == [(0,)]
    con.close()


def test_html_in_model_name_is_stored_verbatim(results_dir, db_path):
    name = "<script>alert('x')</script>/model"
    meta = make_meta(make_run(), model_id=name)
    write_file(results_dir, meta, name="hostile.parquet")
    assert ingest([results_dir], db_path).new == 1
    con = duckdb.connect(str(db_path), read_only=True)
    assert con.execute("select model_id from results where model_id = $1", [name]).fetchall() == [(name,)]
    con.close()


def test_ingest_never_moves_changes_or_deletes_the_input_files(results_dir, db_path):
    """Good files, a copy of one (a duplicate) and a file that is not Parquet (rejected): after an
    ingest and its rerun every input is where it was, with its bytes, mode and modification time,
    and nothing was added beside them."""
    write_suite(results_dir / "run", n_files=3)
    shutil.copy(next((results_dir / "run").glob("*.parquet")), results_dir / "copy.parquet")
    (results_dir / "broken.parquet").write_bytes(b"not parquet")

    def seen() -> dict:
        return {
            p.relative_to(results_dir): (p.is_dir() or p.read_bytes(), p.stat().st_mode, p.stat().st_mtime_ns)
            for p in results_dir.rglob("*")
        }

    before = seen()
    first = ingest([results_dir], db_path)
    assert (first.new, len(first.rejected)) == (3, 1) and seen() == before
    ingest([results_dir], db_path)  # the rerun skips them all
    assert seen() == before
    assert _counts(db_path)["results"] == 3


def test_hidden_temp_files_are_ignored(results_dir, db_path):
    write_suite(results_dir, n_files=1)
    (results_dir / ".half-written.parquet.123.tmp").write_bytes(b"PAR1 partial")
    (results_dir / ".x.parquet").write_bytes(b"PAR1 partial")
    s = ingest([results_dir], db_path)
    assert (s.found, s.new, s.rejected) == (1, 1, [])


def test_missing_path_and_empty_folder_are_clear_errors(tmp_path, db_path):
    with pytest.raises(BenchdbError, match=r"^path .*nowhere does not exist; give a results folder"):
        ingest([tmp_path / "nowhere"], db_path)
    (tmp_path / "empty").mkdir()
    with pytest.raises(BenchdbError, match=r"^no \.parquet files found under .*empty"):
        ingest([tmp_path / "empty"], db_path)
    assert not db_path.exists()


def test_many_runs_and_hardware_dimensions(results_dir, db_path):
    hw2 = {
        "kind": "cuda",
        "vendor": "NVIDIA",
        "device_name": "NVIDIA H100",
        "memory_bytes": 80 * 2**30,
        "driver": "550.54",
        "compute_capability": "9.0",
    }
    r1, r2 = make_run(), make_run(started_at="2026-11-02T10:00:00+00:00")
    write_file(results_dir, make_meta(r1), name="a.parquet")
    write_file(results_dir, make_meta(r2), name="b.parquet")
    write_file(results_dir, make_meta(r2, hardware=hw2, device="cuda:0"), name="c.parquet")
    ingest([results_dir], db_path, batch_rows=60)  # several transactions
    c = _counts(db_path)
    assert (c["runs"], c["hardware"], c["results"]) == (2, 2, 3)
    con = duckdb.connect(str(db_path), read_only=True)
    # the latest run wins per scenario and hardware
    rows = con.execute("select run_id, hardware_kind, driver from results_latest order by hardware_kind").fetchall()
    con.close()
    assert rows == [(r2["run_id"], "cpu", None), (r2["run_id"], "cuda", "550.54")]


def _ingest_proc(results_dir, db_path, *extra):
    """`benchdb ingest` in a process of its own, for a ``with`` block (:func:`conftest.child`)."""
    return child(
        [sys.executable, "-m", "benchdb", "ingest", str(results_dir), "--db", str(db_path), *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_ingest_killed_midway_then_rerun_has_no_duplicates(results_dir, db_path):
    n_files, n_values = 60, 2000
    write_suite(results_dir, n_files=n_files, n_values=n_values)
    with _ingest_proc(results_dir, db_path, "--batch-rows", str(n_values)) as proc:  # one file per transaction
        # wait until at least one batch committed, then kill it hard
        line = proc.stderr.readline()
        assert "loaded" in line, line
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    # A write session is published whole or not at all: the killed one left nothing behind.
    assert not db_path.exists()
    s = ingest([results_dir], db_path)
    assert s.new + s.skipped == n_files
    c = _counts(db_path)
    assert (c["results"], c["samples"]) == (n_files, n_files * n_values)
    assert not list(db_path.parent.glob(f".{db_path.name}.*.writing"))  # the killed copy was discarded
    con = duckdb.connect(str(db_path), read_only=True)
    assert con.execute(
        "select count(*) from (select result_id from results group by 1 having count(*) > 1)"
    ).fetchall() == [(0,)]
    con.close()


def _as_seen(db_path) -> tuple[str, dict]:
    """The warehouse file's bytes (hashed) and what a reader counts in it."""
    import hashlib

    return hashlib.sha256(db_path.read_bytes()).hexdigest(), _counts(db_path)


def _kill_when(proc: subprocess.Popen, point: str, db_path) -> None:
    """SIGKILL ``proc`` (an ingest with one file per batch) at ``point``: "copy" once its private copy
    of the catalog exists, "batch N" once N batches are committed to that copy."""
    import time

    if point == "copy":
        deadline = time.monotonic() + 60
        while not list(db_path.parent.glob(f".{db_path.name}.*.writing")) and time.monotonic() < deadline:
            time.sleep(0.001)
    else:
        want = int(point.split()[1])
        loaded = 0
        while loaded < want:
            line = proc.stderr.readline()
            assert line, f"ingest ended before {point}"
            loaded += "loaded" in line
    proc.send_signal(signal.SIGKILL)
    proc.wait()


def test_ingest_killed_at_several_points_into_an_existing_warehouse_leaves_it_as_it_was(tmp_path, db_path):
    """kill -9 of an ingest into a warehouse that already holds data: at its copy of the catalog,
    after its first batch, midway, and after its last batch (where it may already have published):
    the warehouse is byte for byte as it was (or, at the last point, whole with the new files), and
    the rerun loads every file exactly once."""
    n_files, n_values = 30, 2000
    write_suite(tmp_path / "old", n_files=3, n_values=100)
    ingest([tmp_path / "old"], db_path)
    before = _as_seen(db_path)
    write_suite(tmp_path / "new", n_files=n_files, n_values=n_values, run=make_run())
    for point in ("copy", "batch 1", f"batch {n_files // 2}", f"batch {n_files}"):
        with _ingest_proc(tmp_path / "new", db_path, "--batch-rows", str(n_values)) as proc:  # a file a batch
            _kill_when(proc, point, db_path)
        now = _as_seen(db_path)
        if point == f"batch {n_files}" and now != before:  # it published before the kill landed
            assert now[1]["results"] == 3 + n_files and now[1]["samples"] == 300 + n_files * n_values
            break
        assert now == before, point
    s = ingest([tmp_path / "new"], db_path)
    assert s.new + s.skipped == n_files
    c = _counts(db_path)
    assert (c["results"], c["samples"]) == (3 + n_files, 300 + n_files * n_values)
    assert not list(db_path.parent.glob(f".{db_path.name}.*.writing"))  # the killed copies were discarded
    con = duckdb.connect(str(db_path), read_only=True)
    assert con.execute(
        "select count(*) from (select result_id from results group by 1 having count(*) > 1)"
    ).fetchall() == [(0,)]
    con.close()


def _samples_seen(db_path) -> list[tuple[str, int]]:
    folder = db_path.parent / f"{db_path.name}.samples"
    return sorted((str(p.relative_to(folder)), p.stat().st_size) for p in folder.rglob("*") if p.is_file())


def test_ctrl_c_during_an_ingest_ends_it_in_one_line_and_keeps_nothing(tmp_path, db_path):
    """Ctrl-C (SIGINT) of an ingest into a warehouse that holds data, at its copy of the catalog and
    after its first and second batches (DuckDB's queries then in flight, some in ingest's background
    thread): exit 130 and the one line that says nothing half-written was kept, never an internal
    error; the warehouse and its samples folder are as they were, and a new warehouse is not made."""
    import time

    write_suite(tmp_path / "old", n_files=3, n_values=100)
    ingest([tmp_path / "old"], db_path)
    before, parts_before = _as_seen(db_path), _samples_seen(db_path)
    n_files, n_values = 24, 20000
    write_suite(tmp_path / "new", n_files=n_files, n_values=n_values, run=make_run())
    fresh = tmp_path / "fresh.duckdb"
    interrupted = 0
    for target, point in ((db_path, "copy"), (db_path, "batch 1"), (db_path, "batch 2"), (fresh, "batch 1")):
        with _ingest_proc(tmp_path / "new", target, "--batch-rows", str(4 * n_values)) as proc:
            if point == "copy":
                deadline = time.monotonic() + 60
                while not list(target.parent.glob(f".{target.name}.*.writing")) and time.monotonic() < deadline:
                    time.sleep(0.001)
            else:
                for _ in range(int(point.split()[1])):
                    while "loaded" not in (line := proc.stderr.readline()):
                        assert line, f"ingest ended before {point}"
            proc.send_signal(signal.SIGINT)
            _, err = proc.communicate(timeout=120)
        if proc.returncode == 0:  # it finished before the signal landed: nothing to judge
            continue
        assert proc.returncode == 130, (point, err)
        interrupted += 1
        assert err.strip().splitlines()[-1].startswith("benchdb: interrupted; nothing half-written was kept"), err
        assert "internal error" not in err and "Traceback" not in err, err
        assert (_as_seen(db_path), _samples_seen(db_path)) == (before, parts_before), point
        assert not fresh.exists() and not (tmp_path / "fresh.duckdb.samples").exists(), point
    assert interrupted >= 3, "the ingests ended before the signal: nothing was tested"
    s = ingest([tmp_path / "new"], db_path)
    assert (s.new, _counts(db_path)["samples"]) == (n_files, 300 + n_files * n_values)


def test_two_concurrent_ingests_serialise(results_dir, db_path):
    write_suite(results_dir, n_files=30, n_values=2000)
    with (
        _ingest_proc(results_dir, db_path, "--batch-rows", "2000") as a,
        _ingest_proc(results_dir, db_path, "--batch-rows", "2000") as b,
    ):
        outs = [p.communicate(timeout=120) for p in (a, b)]
    assert a.returncode == 0 and b.returncode == 0, outs
    c = _counts(db_path)
    assert (c["results"], c["samples"]) == (30, 60000)
    news = sorted(int(o[0].split("ingested ")[1].split(" new")[0]) for o in outs)
    assert news == [0, 30]  # one loaded everything, the other waited and found nothing new


#: A real benchdb writer that holds the warehouse's write session until its standard input ends.
HOLD = """import sys
from benchdb.warehouse import Warehouse
with Warehouse(sys.argv[1]).writing():
    print("holding", flush=True)
    sys.stdin.readline()
"""


def test_concurrent_ingest_with_no_wait_fails_clearly(results_dir, db_path):
    """While another benchdb process is writing the warehouse -- held open by the test, so there is no
    race to lose -- `ingest --wait 0` fails at once, in one line naming that process; once the other
    lets go, the same command loads everything."""
    write_suite(results_dir, n_files=3)
    with child(
        [sys.executable, "-c", HOLD, str(db_path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    ) as holder:
        assert holder.stdout.readline() == "holding\n"
        with _ingest_proc(results_dir, db_path, "--wait", "0") as b:
            out, err = b.communicate(timeout=60)
        assert holder.poll() is None  # still held while b ran
        holder.stdin.close()
        holder.wait(timeout=60)
    assert holder.returncode == 0
    assert b.returncode == 2, (out, err)
    assert err == (
        f"benchdb: error: database {os.path.realpath(db_path)} is in use by another process "
        f"(PID {holder.pid}); wait for it to finish and try again, or raise --wait\n"
    )
    assert "Traceback" not in err
    with _ingest_proc(results_dir, db_path, "--wait", "0") as b:
        out, err = b.communicate(timeout=60)
    assert b.returncode == 0, err
    assert _counts(db_path)["results"] == 3

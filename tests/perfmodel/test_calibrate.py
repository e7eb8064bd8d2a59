"""`benchdb calibrate` on this machine (real numpy, small sizes): peaks with CIs stored on the
hardware record, recalibrating adds rows, the roofline view puts a real numpy result against them."""

import duckdb
import pytest
from click.testing import CliRunner
from conftest import need_module

from benchdb.cli import main

QUICK = [
    "--backend",
    "numpy",
    "--threads",
    "1",
    "--trials",
    "8",
    "--trial-time",
    "0.01",
    "--matmul-n",
    "128",
    "--stream-mb",
    "4",
]


def invoke(*args):
    return CliRunner().invoke(main, list(args))


def test_calibrate_stores_peaks_and_recalibrating_adds_rows(tmp_path):
    db = tmp_path / "w.duckdb"
    r = invoke("calibrate", *QUICK, "--db", str(db))
    assert r.exit_code == 0, r.output
    lines = r.stdout.splitlines()
    assert lines[0].split() == ["backend", "kind", "precision", "median", "95%", "CI"]
    assert [line.split()[:3] for line in lines[1:5]] == [
        ["numpy", "matmul", "fp32"],
        ["numpy", "matmul", "fp64"],
        ["numpy", "copy", "fp64"],
        ["numpy", "triad", "fp64"],
    ]
    assert lines[-1].startswith("calibration ") and "threads=1" in lines[-1]
    assert invoke("calibrate", *QUICK, "--db", str(db)).exit_code == 0
    con = duckdb.connect(str(db), read_only=True)
    rows = con.execute(
        "select calibration_id, kind, precision, value, ci_low, ci_high, unit, trials, threads "
        "from hardware_calibration"
    ).fetchall()
    assert len(rows) == 8 and len({r[0] for r in rows}) == 2  # two calibrations, both kept
    for _, kind, _, value, low, high, unit, trials, threads in rows:
        assert low <= value <= high and trials == 8 and threads == 1
        assert unit == ("flop/s" if kind == "matmul" else "bytes/s")
    hw = con.execute("select count(*), any_value(kind) from hardware").fetchone()
    assert hw == (1, "cpu")
    latest = con.execute("select max(calibration_id) from hardware_calibration").fetchone()[0]
    assert {r[0] for r in con.execute("select calibration_id from hardware_peaks").fetchall()} == {latest}
    con.close()
    listed = invoke("calibrate", "--list", "--db", str(db))
    assert listed.exit_code == 0 and len(listed.stdout.splitlines()) == 8


def test_roofline_puts_a_real_result_against_the_peaks(tmp_path):
    db, out = tmp_path / "w.duckdb", tmp_path / "res"
    r = invoke(
        "run",
        "--backend",
        "numpy",
        "--model",
        "matmul:128",
        "--threads",
        "1",
        "--out",
        str(out),
        "--max-background-cpu",
        "100%",
        "--min-time",
        "0.05",
        "--max-time",
        "1",
        "--min-iters",
        "5",
    )
    assert r.exit_code == 0, r.output
    assert invoke("ingest", str(out), "--db", str(db)).exit_code == 0
    assert invoke("calibrate", *QUICK, "--db", str(db)).exit_code == 0
    con = duckdb.connect(str(db), read_only=True)
    row = con.execute(
        "select flops, flops_method, bytes, bytes_method, arithmetic_intensity, peak_flops, "
        "peak_bandwidth, pct_of_peak, roofline_s, latency_s, bound, hardware_config "
        "from roofline"
    ).fetchone()
    flops, method, nbytes, bmethod, ai, peak, bw, pct, roof, lat, bound, config = row
    assert flops == 2 * 128**3 and method == "model"
    assert nbytes == 3 * 128 * 128 * 4 and bmethod == "parameters + input and output"
    assert ai == pytest.approx(flops / nbytes)
    assert peak > 0 and bw > 0 and pct == pytest.approx(flops / lat / peak)  # quick peaks: no bound on pct
    assert roof == pytest.approx(max(flops / peak, nbytes / bw)) and bound in ("compute", "memory")
    assert config.endswith(" x1 threads")


def test_bad_backend_is_one_line_and_writes_nothing(tmp_path):
    db = tmp_path / "w.duckdb"
    r = invoke("calibrate", "--backend", "cuda-magic", "--db", str(db))
    assert r.exit_code == 2
    assert r.output == "benchdb: error: calibrate has no backend 'cuda-magic'; use numpy or pytorch\n"
    assert not db.exists()


def test_a_device_this_machine_lacks_is_one_line(tmp_path):
    torch = need_module("torch", "the README's pinned torch")
    if torch.cuda.is_available():
        pytest.skip("this machine has a CUDA device")
    db = tmp_path / "w.duckdb"
    r = invoke("calibrate", "--device", "cuda:0", "--db", str(db))
    assert r.exit_code == 2, r.output
    # numpy does not pretend to measure the GPU, and PyTorch's "not compiled with CUDA" assertion
    # is not an internal error
    assert r.output.splitlines()[0] == "numpy skipped: it measures the cpu, not cuda:0"
    assert r.output.splitlines()[-1].startswith("benchdb: error: device cuda:0 is not available on this machine")
    assert "Traceback" not in r.output and not db.exists()

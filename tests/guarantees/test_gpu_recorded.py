"""benchdb's CUDA paths against what a real GPU gave (benchmarks/gpu/verify.sh on an
NVIDIA H200). No GPU is needed here:

- NVML traces recorded on the H200 are replayed through NvmlSource (a stand-in for pynvml that
  returns the recorded readings at the recorded times);
- the calibration loops run against a simulated accelerator whose products finish faster than the
  host can launch and wait for them (the cause of the H200's 29 Tflop/s bf16 figure);
- the contract files the H200 wrote are ingested and reported: the report's GPU rows.
"""

import json
import statistics
import sys
from pathlib import Path
from types import SimpleNamespace

import duckdb
import pytest
from click.testing import CliRunner

from benchdb.cli import main
from benchdb.harness.monitors import NvmlSource
from benchdb.perfmodel import calibrate

pytestmark = pytest.mark.core

FIXTURES = Path(__file__).parents[1] / "fixtures" / "gpu"
TRACES = json.loads((FIXTURES / "nvml_trace_h200.json").read_text())["traces"]


class ReplayedNvml:
    """pynvml's calls that NvmlSource makes, answered from one recorded sample at a time."""

    NVML_CLOCK_SM = 1
    NVML_TEMPERATURE_GPU = 0

    def __init__(self, samples):
        self.samples = samples
        self.i = 0

    @property
    def now(self):
        return self.samples[self.i]

    def nvmlInit(self):
        pass

    def nvmlShutdown(self):
        pass

    def nvmlDeviceGetHandleByIndex(self, index):
        return index

    def nvmlDeviceGetTotalEnergyConsumption(self, handle):
        return self.now[1]

    def nvmlDeviceGetPowerUsage(self, handle):
        return self.now[2]

    def nvmlDeviceGetUtilizationRates(self, handle):
        return SimpleNamespace(gpu=self.now[3], memory=0)

    def nvmlDeviceGetClockInfo(self, handle, kind):
        return self.now[4]

    def nvmlDeviceGetTemperature(self, handle, kind):
        return self.now[5]

    def nvmlDeviceGetMemoryInfo(self, handle):
        return SimpleNamespace(used=self.now[6])

    def nvmlDeviceGetCurrentClocksEventReasons(self, handle):
        return self.now[7]


def replay(monkeypatch, samples):
    """(the source, one {metric: value} per sample) after sampling every recorded reading."""
    nvml = ReplayedNvml(samples)
    monkeypatch.setitem(sys.modules, "pynvml", nvml)
    src = NvmlSource(0, clock=lambda: nvml.now[0])
    out = []
    for i in range(len(samples)):
        nvml.i = i
        out.append({metric: value for metric, _, value in src.sample()})
    src.close()
    return src, out


@pytest.mark.parametrize("name", sorted(TRACES))
def test_energy_and_power_come_from_the_energy_counter(monkeypatch, name):
    samples = TRACES[name]
    _, rows = replay(monkeypatch, samples)
    t = [s[0] for s in samples]
    mj = [s[1] for s in samples]
    # energy counts from the monitor's first sample, not from when the source was made (on the
    # H200 that was 24.6 J earlier: the model's cast and inputs were counted as the timed loop's)
    assert rows[0]["energy_j"] == 0.0
    assert rows[-1]["energy_j"] == pytest.approx((mj[-1] - mj[0]) / 1000)
    # power_w only where the counter moved (every ~100 ms on the H200; samples are 20 ms apart),
    # each the mean over the span since the last move: together they are the counter's energy
    moves = [i for i in range(1, len(mj)) if mj[i] != mj[i - 1]]
    assert [i for i, r in enumerate(rows) if "power_w" in r] == moves
    spans = list(zip([0] + moves[:-1], moves, strict=True))
    joules = sum(rows[b]["power_w"] * (t[b] - t[a]) for a, b in spans)
    assert joules == pytest.approx((mj[moves[-1]] - mj[0]) / 1000, rel=1e-9)
    # NVML's own reading is kept beside it, unchanged
    assert [r["nvml_power_w"] for r in rows] == [s[2] / 1000 for s in samples]


def test_power_at_the_limit_is_the_limit_and_is_not_throttling(monkeypatch):
    samples = TRACES["fp16_batch64_seq512"]  # 82 of 100 samples held at the 700 W limit
    src, rows = replay(monkeypatch, samples)
    power = statistics.median(r["power_w"] for r in rows if "power_w" in r)
    assert 690 < power < 710  # NVML's 1 s-averaged reading: 675 W
    assert src.throttled == set()
    assert src.power_capped_pct == pytest.approx(82.0)
    hot = [s[:7] + [s[7] | 0x40] if 40 <= i < 45 else s for i, s in enumerate(samples)]
    src, _ = replay(monkeypatch, hot)
    assert src.throttled == {"hw_thermal_slowdown"}


class SimulatedAccelerator:
    """An asynchronous device on a simulated clock: each launch costs the host ``launch_s``, work
    runs on the device at ``flops`` (or ``bandwidth``) after whatever is queued, and a
    synchronisation waits for the queue plus ``sync_s``. Roughly an H200 driven from Python."""

    def __init__(self, flops=790e12, bandwidth=4.3e12, launch_s=6e-6, sync_s=10e-6):
        self.flops, self.bandwidth = flops, bandwidth
        self.launch_s, self.sync_s = launch_s, sync_s
        self.host = 0.0
        self.device_free = 0.0

    def clock(self):
        return self.host

    def launch(self, seconds):
        self.host += self.launch_s
        self.device_free = max(self.device_free, self.host) + seconds

    def sync(self):
        self.host = max(self.host, self.device_free) + self.sync_s

    def product(self, n):
        return lambda: self.launch(2.0 * n**3 / self.flops)

    def copy(self, nbytes):
        return lambda: self.launch(nbytes / self.bandwidth)


def test_calibration_reaches_a_fast_accelerators_peak(monkeypatch):
    gpu = SimulatedAccelerator()
    monkeypatch.setattr(calibrate, "_clock", gpu.clock)
    s = calibrate.Settings(trials=4, trial_time=0.2)
    n = calibrate._order(gpu.product, s, gpu.sync)
    # one synchronised 1024^3 product takes 19 us here, 2.7 us of it work: the order grows until a
    # product outlasts its launch (the H200 gave 29 Tflop/s of ~790 at the old fixed order)
    assert n >= 8192
    rates = calibrate._trials(gpu.product(n), 2.0 * n**3, s, gpu.sync)
    assert statistics.median(rates) > 0.97 * gpu.flops
    # a 128 MiB copy takes 62 us on the device: enqueued in blocks between synchronisations, the
    # bandwidth is the device's, not the launch-and-wait loop's (the H200 gave 3.34 of 4.1 TB/s)
    nbytes = 2 * 128 * 2**20
    rates = calibrate._trials(gpu.copy(nbytes), nbytes, s, gpu.sync)
    assert statistics.median(rates) > 0.97 * gpu.bandwidth


def test_calibration_order_still_shrinks_for_a_slow_device(monkeypatch):
    cpu = SimulatedAccelerator(flops=5e9, launch_s=0.0, sync_s=0.0)  # bf16 without bf16 units
    monkeypatch.setattr(calibrate, "_clock", cpu.clock)
    s = calibrate.Settings(trials=2, trial_time=0.2)
    n = calibrate._order(cpu.product, s, cpu.sync)
    assert 2.0 * n**3 / cpu.flops <= s.trial_time / 4 and n < s.matmul_n


def test_the_h200_runs_ingest_and_report_as_gpu_rows(tmp_path):
    db = tmp_path / "w.duckdb"
    runner = CliRunner()
    r = runner.invoke(main, ["ingest", str(FIXTURES / "h200"), "--db", str(db)])
    assert r.exit_code == 0, r.output
    assert "ingested 24 new file(s)" in r.output
    con = duckdb.connect(str(db), read_only=True)
    hw = con.execute("SELECT kind, vendor, device_name, compute_capability, memory_bytes FROM hardware").fetchall()
    assert hw == [("cuda", "NVIDIA", "NVIDIA H200", "9.0", 150109880320)]
    rows = con.execute("""SELECT mode, precision, count(*), min(validity), any_value(timing_method),
                                 bool_and(peak_memory_bytes > 0), bool_and(power_w > 0)
                          FROM results_latest GROUP BY ALL ORDER BY ALL""").fetchall()
    assert rows == [
        ("compile", "bf16", 1, "valid", "cuda_events", True, True),
        ("compile", "fp16", 1, "valid", "cuda_events", True, True),
        ("compile", "fp32", 1, "valid", "cuda_events", True, True),
        ("eager", "bf16", 6, "valid", "cuda_events", True, True),
        ("eager", "fp16", 8, "valid", "cuda_events", True, True),
        ("eager", "fp32", 7, "valid", "cuda_events", True, True),
    ]
    # the BERT-base-shaped model at batch 64 ran at the power limit: valid, with the share recorded
    big = con.execute("""SELECT median, power_w, json_extract(extra, '$.power_capped_pct')::DOUBLE,
                                peak_memory_bytes FROM results_latest WHERE batch_size = 64""").fetchone()
    assert big[0] == pytest.approx(0.0157575, rel=1e-3) and 690 < big[1] < 710 and big[2] > 50
    assert big[3] == 815261184  # torch.cuda.max_memory_allocated in a bare process on the H200: the same
    con.close()
    r = runner.invoke(main, ["report", "--optimal-hardware", "--db", str(db)])
    assert r.exit_code == 0, r.output
    table = [line.split("|")[1:-1] for line in r.output.splitlines() if line.startswith("| tiny:bert | 4 ")]
    # the answer first: model, batch, best; the input after the verdict
    assert [c.strip() for c in table[0][:3]] == ["tiny:bert", "4", "compile/fp16"]
    assert "seq_len=32" in [c.strip() for c in table[0]]
    r = runner.invoke(main, ["report", "--all", "--out", str(tmp_path / "r.html"), "--db", str(db)])
    assert r.exit_code == 0, r.output
    assert "NVIDIA H200" in (tmp_path / "r.html").read_text()

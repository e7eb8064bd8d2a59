"""A small warehouse written row by row, so every view's output can be checked exactly.

Timing results have primary metric latency_s (unit s). Results 10-13 (run r3) are there to catch views
that say "fine" by mistake: 10 runs at 0.76x the fastest (good, never a second "best"), 11 is the
fastest but invalid (counted as invalid, never rated, never the denominator), 12 is a --verify-only
check of result 4's series (primary metric max_rel_err, a ratio: never a median latency), 13 a
--verify-only check that disagrees, on a series with no timing at all.
"""

import json

from benchdb.schema import identity
from benchdb.store import database

HW = {"cpuA": ("cpu", "Test CPU"), "gpuB": ("cuda", "Test GPU")}
ARCH = {"bert": ("embedding", "bert"), "llama": ("text_generation", "llama")}
RUNS = {"r1": ("2026-11-01 10:00:00", "c1"), "r2": ("2026-11-02 10:00:00", "c2"), "r3": ("2026-11-03 10:00:00", "c3")}

#: id, run, model, backend, device, hardware, bs, shape, status, validity, median, throughput, error
RESULTS = [
    ("1", "r1", "bert", "pytorch", "cpu", "cpuA", 1, "seq_len=16", "ok", "valid", 0.010, 100.0, None),
    ("2", "r2", "bert", "pytorch", "cpu", "cpuA", 1, "seq_len=16", "ok", "valid", 0.008, 125.0, None),
    ("3", "r2", "bert", "pytorch", "cuda", "gpuB", 1, "seq_len=16", "ok", "valid", 0.002, 500.0, None),
    ("4", "r2", "bert", "onnxruntime", "cpu", "cpuA", 1, "seq_len=16", "ok", "valid", 0.005, 200.0, None),
    ("5", "r2", "bert", "pytorch", "cpu", "cpuA", 4, "seq_len=16", "ok", "valid", 0.020, 200.0, None),
    ("6", "r2", "bert", "pytorch", "cuda", "gpuB", 4, "seq_len=16", "ok", "valid", 0.004, 1000.0, None),
    (
        "7",
        "r2",
        "llama",
        "pytorch",
        "cuda",
        "gpuB",
        1,
        "seq_len=16",
        "oom",
        "invalid",
        None,
        None,
        "OutOfMemoryError: CUDA out of memory",
    ),
    ("8", "r2", "llama", "pytorch", "cpu", "cpuA", 1, "seq_len=16", "ok", "valid", 0.100, 10.0, None),
    ("9", "r3", "bert", "pytorch", "cpu", "cpuA", 1, "seq_len=16", "ok", "invalid", 1 / 110, 110.0, None),
    ("10", "r3", "bert", "onnxruntime", "cuda", "gpuB", 4, "seq_len=16", "ok", "valid", 4 / 760, 760.0, None),
    ("11", "r3", "bert", "openvino", "cpu", "cpuA", 1, "seq_len=16", "ok", "invalid", 0.001, 1000.0, None),
]
#: --verify-only checks: id, run, model, backend, device, hardware, bs, shape, status, max_abs_err, max_rel_err
VERIFY_ONLY = [
    ("12", "r3", "bert", "onnxruntime", "cpu", "cpuA", 1, "seq_len=16", "ok", 2e-6, 3e-7),
    ("13", "r3", "bert", "openvino", "cpu", "cpuA", 4, "seq_len=16", "mismatch", 0.4, 0.05),
]
TOLERANCE = 1e-3
#: result id -> (metric, median/max value)
METRICS = {
    "2": [("peak_rss_bytes", 300 * 2**20)],
    "3": [("peak_device_allocated_bytes", 900 * 2**20), ("power_w", 200.0)],
    "4": [("peak_rss_bytes", 200 * 2**20), ("max_abs_err", 1e-6), ("max_rel_err", 2e-7)],
}


def build(path):
    con, _ = database.open_writable(path)
    for hid, (kind, name) in HW.items():
        con.execute("insert into hardware (hardware_id, kind, device_name) values (?, ?, ?)", [hid, kind, name])
    for aid, (family, mt) in ARCH.items():
        con.execute(
            "insert into architectures (arch_id, model_id, model_type, family) values (?, ?, ?, ?)",
            [aid, aid, mt, family],
        )
    for rid, (ts, commit) in RUNS.items():
        con.execute("insert into runs (run_id, started_at, git_commit) values (?, ?::timestamp, ?)", [rid, ts, commit])
    for rid, run, model, backend, device, hw, bs, shape, status, validity, median, tput, error in RESULTS:
        _insert(
            con,
            rid,
            run,
            model,
            backend,
            device,
            hw,
            bs,
            shape,
            status,
            validity,
            error,
            metric="latency_s",
            unit="s" if median is not None else None,
            median=median,
            throughput=tput,
            timing_method="host_clock",
            extra={"tolerance": TOLERANCE} if rid == "4" else {},
        )
    for rid, run, model, backend, device, hw, bs, shape, status, abs_err, rel_err in VERIFY_ONLY:
        error = None if status == "ok" else f"outputs differ from PyTorch fp32: max rel error {rel_err:.3g} > 0.001"
        _insert(
            con,
            rid,
            run,
            model,
            backend,
            device,
            hw,
            bs,
            shape,
            status,
            "valid" if status == "ok" else "invalid",
            error,
            metric="max_rel_err",
            unit="ratio",
            median=rel_err,
            throughput=None,
            timing_method="none",
            extra={"verify_only": True, "tolerance": TOLERANCE, "max_abs_err": abs_err, "max_rel_err": rel_err},
        )
        for metric, value in (("max_abs_err", abs_err), ("max_rel_err", rel_err)):
            con.execute(
                "insert into result_metrics (result_id, metric, n, median, max) values (?, ?, 1, ?, ?)",
                [rid, metric, value, value],
            )
    for rid, rows in METRICS.items():
        for metric, value in rows:
            con.execute(
                "insert into result_metrics (result_id, metric, n, median, max) values (?, ?, 1, ?, ?)",
                [rid, metric, value, value],
            )
    con.close()


def _insert(
    con,
    rid,
    run,
    model,
    backend,
    device,
    hw,
    bs,
    shape,
    status,
    validity,
    error,
    *,
    metric,
    unit,
    median,
    throughput,
    timing_method,
    extra,
):
    key = {
        "model_id": model,
        "backend": backend,
        "device": device,
        "mode": "eager",
        "precision": "fp32",
        "batch_size": bs,
        "input_shape": shape,
        "options": {"threads": 1},
    }
    con.execute(
        """insert into results (result_id, run_id, file_id, hardware_id, arch_id, model_id, backend,
                   device, mode, precision, batch_size, input_shape, status, validity, error, timing_method,
                   metric, unit, median, throughput, n, extra, options, options_id, series_id)
                   values (?, ?, 0, ?, ?, ?, ?, ?, 'eager', 'fp32', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)""",
        [
            rid,
            run,
            hw,
            model,
            model,
            backend,
            device,
            bs,
            shape,
            status,
            validity,
            error,
            timing_method,
            metric,
            unit,
            median,
            throughput,
            10 if metric == "latency_s" else 1,
            json.dumps(extra),
            '{"threads": 1}',
            identity.options_id(key["options"]),
            identity.series_id(key, hw),
        ],
    )

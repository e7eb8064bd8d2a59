"""The fixed warehouse of the golden files (tests/reports/test_terminal_golden.py) and the report's
first screen (tests/reports/test_report_screen.py): contract files with fixed run ids, timestamps and
seeded samples, so every machine builds the same one."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from conftest import cli, make_meta, make_run, write_file

RUN_A = "01a30000-0000-7000-8000-00000000000a"
RUN_B = "01a30000-0000-7000-8000-00000000000b"
#: Reasons as the harness writes them (benchdb.harness.timing / verdict): they hold < and >.
TOO_FEW = "too_few_samples: 9 < min_iters 10"
NOISY = "noisy: CI of the median +-9747.7% > 5 x target +-1.0%"
BUSY = (
    "busy_machine: other processes used 85% CPU before the scenario (limit 50%); "
    "CI of the median +-9747.7% did not converge to the target +-1.0%"
)


def lat(seed: int, median: float, n: int = 60, spread: float = 0.01) -> np.ndarray:
    """``n`` seeded latencies around ``median``, ``spread`` its relative standard deviation."""
    return np.random.default_rng(seed).normal(median, median * spread, n)


def _meta(run: dict, busy: bool = False, reasons: list[str] | None = None, **kw) -> dict:
    meta = make_meta(run, **kw)
    sc = meta["scenario"]
    if reasons:
        sc["validity"], sc["validity_reasons"] = "invalid", reasons
    if busy:
        sc["settings"] = {**(sc.get("settings") or {}), "background_cpu_pct": 85.0}
    return meta


def build_warehouse(folder: Path) -> Path:
    """Two runs (a baseline and a candidate) of a few models: two input shapes of one model, two
    batch sizes, a win, invalid results with the same reasons, results on a busy machine and a
    precision only the candidate has."""
    res = folder / "results"
    runs = {
        RUN_A: make_run(RUN_A, started_at="2026-11-01T10:00:00+00:00", git_commit="a" * 40),
        RUN_B: make_run(RUN_B, started_at="2026-11-02T10:00:00+00:00", git_commit="b" * 40),
    }
    seed = 0
    bert = dict(model_id="tiny:bert", input_shape="seq_len=32")
    for k, (rid, run) in enumerate(runs.items()):
        slower = 1.0 + 0.3 * k  # the candidate's bert on openvino got slower
        files = [
            (dict(model_id="matmul:256", input_shape="n=256"), 2.6e-4),
            (dict(model_id="matmul:256", input_shape="n=512"), 1.9e-3),
            (dict(model_id="matmul:256", input_shape="n=256", batch_size=8), 2.1e-3),
            (dict(model_id="tiny:bert", backend="onnxruntime", mode="opt-all", input_shape="seq_len=32"), 2.7e-4),
            (dict(model_id="tiny:bert", backend="openvino", mode="latency", input_shape="seq_len=32"), 4.6e-4 * slower),
            (dict(bert, backend="onnxruntime", mode="opt-all", batch_size=4), 4.0e-4),
            (dict(bert, backend="openvino", mode="latency", batch_size=4), 6.2e-4),
            (dict(model_id="tiny:vit", backend="onnxruntime", mode="opt-all", input_shape="image=32x32"), 2.0e-4),
            (dict(model_id="tiny:vit", backend="openvino", mode="latency", input_shape="image=32x32"), 3.7e-4),
        ]
        for kw, median in files:
            seed += 1
            write_file(res / rid, _meta(run, busy=k == 1, **kw), lat(seed, median), name=f"f{seed:03d}.parquet")
        for bs in (1, 4, 8):  # the same reasons on three results: grouped, not repeated
            seed += 1
            write_file(
                res / rid,
                _meta(
                    run,
                    reasons=[TOO_FEW, NOISY] + ([BUSY] if k == 1 else []),
                    busy=k == 1,
                    model_id="tiny:llama",
                    backend="pytorch",
                    input_shape="seq_len=32,new_tokens=8",
                    batch_size=bs,
                ),
                np.abs(lat(seed, 3e-3, n=9, spread=0.3)),
                name=f"f{seed:03d}.parquet",
            )
        if k == 1:  # precisions only in the candidate: entries that differ only in precision or batch
            for precision, bs in (("fp16", 1), ("int8", 1), ("fp16", 4)):
                seed += 1
                kw = dict(model_id="tiny:bert", backend="openvino", mode="latency", input_shape="seq_len=32")
                write_file(
                    res / rid,
                    _meta(run, precision=precision, batch_size=bs, **kw),
                    lat(seed, 3e-4),
                    name=f"f{seed:03d}.parquet",
                )
    db = folder / "golden.duckdb"
    r = cli("ingest", res, "--db", db)
    assert r.exit_code == 0, r.output
    return db

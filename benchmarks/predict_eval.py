"""How well does `benchdb predict` predict this machine? Builds a warehouse here and prints
`benchdb predict --evaluate` (grouped cross-validation against the roofline-alone and the
nearest-neighbour baselines).

The warehouse: the 13 `tiny:` classes (PyTorch eager, ONNX Runtime, OpenVINO) and `matmul:N`
(numpy), at several batch sizes and sequence lengths, each at several thread counts. A machine has
one CPU, so **distinct thread counts stand in as the 2nd and 3rd "hardware"** (the hardware
configuration "<CPU> xT threads", calibrated at T threads with `benchdb calibrate --threads T`):
leave-one-hardware-out predicts a thread count from the others. That is easier than a real
different machine (same caches, same ISA), and the table says it is this.

    python benchmarks/predict_eval.py                       # full: about 10 minutes on a quiet 2-core machine
    python benchmarks/predict_eval.py --quick               # 3 models, 2 backends, 1-2 threads: about 2 minutes
    python benchmarks/predict_eval.py --small               # 3 numpy models, 1-2 threads: seconds
    python benchmarks/predict_eval.py --work DIR --reuse    # evaluate an earlier run's warehouse again
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TINY = (
    "bert",
    "llama",
    "qwen2",
    "t5",
    "vit",
    "detr",
    "wav2vec2",
    "whisper",
    "clip",
    "xclip",
    "clap",
    "llava",
    "llava_next",
)


def sh(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "benchdb", *args]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if check and proc.returncode not in (0, 3):
        sys.exit(f"failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stderr[-2000:]}")
    return proc


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--quick", action="store_true", help="tiny:bert, tiny:vit, matmul:128; pytorch + onnxruntime; threads 1,2"
    )
    ap.add_argument("--models", default=",".join(f"tiny:{t}" for t in TINY))
    ap.add_argument("--matmul", default="matmul:128,matmul:384", help="numpy models")
    ap.add_argument("--backends", default="pytorch,onnxruntime,openvino")
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    ap.add_argument(
        "--threads",
        default=",".join(str(t) for t in (1, 2, 4) if t <= usable) or "1",
        help="thread counts: the stand-in hardware configurations (default: 1,2,4 as far as the machine has CPUs)",
    )
    ap.add_argument("--batch-sizes", default="1,4")
    ap.add_argument("--seq-lens", default="16")
    ap.add_argument("--min-time", default="0.1")
    ap.add_argument("--max-time", default="0.5", help="per scenario")
    ap.add_argument("--work", default=None, help="folder for results and the warehouse (default: a temporary one)")
    ap.add_argument("--reuse", action="store_true", help="only evaluate the warehouse in --work")
    ap.add_argument(
        "--small",
        action="store_true",
        help="matmul:64,128,256 (numpy alone, in the run's process; calibrated with numpy), threads 1,2, short loops: "
        "checks that the script works",
    )
    a = ap.parse_args()
    calibrate = ["--trials", "8", "--trial-time", "0.1", "--matmul-n", "512", "--stream-mb", "64"]
    target = "0.05"
    if a.quick:
        a.models, a.matmul, a.backends, a.threads = "tiny:bert,tiny:vit", "matmul:128", "pytorch,onnxruntime", "1,2"
        a.batch_sizes, a.seq_lens = "1,2", "16,32"
    if a.small:
        a.models, a.matmul, a.backends, a.threads = "", "matmul:64,matmul:128,matmul:256", "", "1,2"
        a.batch_sizes, a.seq_lens, a.min_time, a.max_time = "1,2", "16", "0.02", "0.1"
        calibrate = ["--trials", "2", "--trial-time", "0.05", "--matmul-n", "128", "--stream-mb", "8"]
        calibrate += ["--backend", "numpy"]  # numpy's peaks alone: the default adds PyTorch's, a torch import
        target = "0.2"  # loops this short on a busy machine: at +-5 % some would be invalid, left out
    # --small measures numpy alone: its scenarios share the run's process (a fresh one each costs more
    # than the scenario)
    isolation = ["--no-isolation"] if a.small else []
    work = Path(a.work or tempfile.mkdtemp(prefix="predict_eval_"))
    db = work / "w.duckdb"
    t0 = time.perf_counter()
    if not a.reuse:
        for threads in a.threads.split(","):
            out = work / f"results-t{threads}"
            common = [
                "--threads",
                threads,
                "--batch-size",
                a.batch_sizes,
                "--min-time",
                a.min_time,
                "--max-time",
                a.max_time,
                "--target-ci",
                target,
                "--min-iters",
                "5",
                "--warmup",
                "1",
                "--max-background-cpu",
                "100%",
                "--out",
                str(out),
                *isolation,
            ]
            for backend in filter(None, a.backends.split(",")):
                models = [m for spec in a.models.split(",") for m in ("--model", spec)]
                sh("run", "--backend", backend, *models, "--seq-len", a.seq_lens, *common)
                print(f"[{time.perf_counter() - t0:6.0f} s] threads={threads} {backend} done", file=sys.stderr)
            if a.matmul:
                models = [m for spec in a.matmul.split(",") for m in ("--model", spec)]
                sh("run", "--backend", "numpy", *models, *common)
            sh("ingest", str(out), "--db", str(db))
            sh("calibrate", "--threads", threads, *calibrate, "--db", str(db))
            print(f"[{time.perf_counter() - t0:6.0f} s] threads={threads} ingested and calibrated", file=sys.stderr)
    proc = sh("predict", "--evaluate", "--db", str(db), check=False)
    print(proc.stdout, end="")
    if proc.returncode:
        print(proc.stderr, end="", file=sys.stderr)
    print(
        f"(this machine; the 'hardware' are thread counts {a.threads} of one CPU, labelled 'xT threads'; "
        f"measured, {time.perf_counter() - t0:.0f} s in all; warehouse {db})"
    )
    sys.exit(proc.returncode)


if __name__ == "__main__":
    main()

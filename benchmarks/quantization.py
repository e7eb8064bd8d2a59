"""int8/int4 against fp32 on a BERT-base-shaped model, per backend and route, in one run.

    python benchmarks/quantization.py [--model FOLDER] [--batch 1] [--seq 128] [--repeats 3] [--small]

Builds a BERT-base-shaped model (random weights, save_pretrained) unless --model names a folder,
then measures with `benchdb run` in this order: ONNX Runtime fp32, int8 dynamic, int8 static;
OpenVINO fp32, int8 static (NNCF), int4 weights (NNCF); PyTorch eager fp32, int8 dynamic. Each
backend's precisions are one run with --repeats processes interleaved, so each speedup over fp32
gets a 95 % interval from process-to-process variance. Prints `benchdb report --speed-accuracy`
as a table: speedup [CI] and the agreement with fp32 of each route. Quantized files go to a fresh
$BENCHDB_CACHE, so quantization times are included (quantize_s). --small checks that the script
works: a 2-layer BERT of width 32, seq 16, 1 process per precision, 0.02-0.5 s, a +-20 % target
and no limit on other processes' CPU use (a loop that short on a busy machine would be invalid at
+-2 % or beside another run, and the report leaves an invalid result out: its row would vanish).
A loop stops once 10 calls meet the +-20 % target (well under 0.1 s on a quiet machine); the 0.5 s
are for a machine so busy that a call takes tens of ms, where a loop stopped at 0.1 s had fewer than
10 calls and was invalid (too few samples).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROUTES = (
    ("onnxruntime", ("fp32", None), ("int8", "dynamic"), ("int8", "static")),
    ("openvino", ("fp32", None), ("int8", "static"), ("int4", "weights")),
    ("pytorch", ("fp32", None), ("int8", "dynamic")),
)


def benchdb(*args: str, env: dict) -> str:
    r = subprocess.run([sys.executable, "-m", "benchdb", *args], capture_output=True, text=True, env=env)
    if r.returncode not in (0, 3):
        sys.exit(f"benchdb {' '.join(args)} failed ({r.returncode}):\n{r.stderr[-2000:]}")
    return r.stdout


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", help="a save_pretrained folder (default: a BERT-base-shaped one, random weights)")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--min-time", default="1")
    ap.add_argument("--max-time", default="4")
    ap.add_argument(
        "--small",
        action="store_true",
        help="a 2-layer BERT of width 32, seq 16, 1 process, 0.02-0.5 s: checks that the script works",
    )
    args = ap.parse_args()
    target = []
    if args.small:
        args.seq, args.repeats, args.min_time, args.max_time = 16, 1, "0.02", "0.5"
        target = ["--target-ci", "0.2", "--max-background-cpu", "100%"]

    work = Path(tempfile.mkdtemp(prefix="benchdb-quant-"))
    env = {**os.environ, "BENCHDB_CACHE": str(work / "cache")}
    model = args.model
    if model is None:
        import torch
        import transformers as T

        torch.manual_seed(0)
        model = str(work / ("bert-small" if args.small else "bert-base"))
        config = (
            T.BertConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=37)
            if args.small
            else T.BertConfig()
        )
        T.BertModel(config).save_pretrained(model)
    out, db = work / "results", work / "w.duckdb"
    common = [
        "--model",
        model,
        "--batch-size",
        str(args.batch),
        "--seq-len",
        str(args.seq),
        "--threads",
        str(args.threads),
        "--repeats",
        str(args.repeats),
        "--min-time",
        args.min_time,
        "--max-time",
        args.max_time,
        *target,
        "--out",
        str(out),
    ]
    for backend, *routes in ROUTES:
        # one run per backend: fp32 and every route interleaved, so each speedup has its interval
        precisions = ",".join(dict.fromkeys(p for p, _ in routes))
        methods = ",".join(dict.fromkeys(m for _, m in routes if m))
        print(f"measuring {backend}: {precisions}, --quant {methods} ...", flush=True)
        out_text = benchdb("run", "--backend", backend, "--precision", precisions, "--quant", methods, *common, env=env)
        print("\n".join(line for line in out_text.splitlines() if " unsupported " in line))
    benchdb("ingest", str(out), "--db", str(db), env=env)
    rows = json.loads(benchdb("report", "--speed-accuracy", "--format", "json", "--db", str(db), env=env))
    print(
        f"\n{Path(model).name}: batch {args.batch}, seq {args.seq}, {args.threads} threads, {args.repeats} "
        "processes each (speedup: fp32 median / its median; agreement with PyTorch fp32 on the same inputs)\n"
    )
    print(
        f"{'backend':12} {'precision':9} {'method':8} {'median ms':>10} {'fp32 ms':>9} {'speedup [95% CI]':>22} "
        f"{'cosine':>9} {'drop':>8}"
    )
    for r in rows:
        ci = (
            f"[{r['speedup_ci_low']:.2f}, {r['speedup_ci_high']:.2f}]"
            if r["speedup_ci_low"] is not None
            else "[noise unknown]"
        )
        agree = f"{r['agreement'] * 100:.3f}%" if r["agreement"] is not None else "-"
        drop = f"{r['accuracy_drop'] * 100:.3f}%" if r["accuracy_drop"] is not None else "-"
        print(
            f"{r['backend']:12} {r['precision']:9} {r['quantization'] or '':8} {r['median_s'] * 1e3:10.3f} "
            f"{r['fp32_median_s'] * 1e3:9.3f} {r['speedup']:8.2f} {ci:>13} {agree:>9} {drop:>8}"
        )
    print(f"\nwarehouse: {db}")


if __name__ == "__main__":
    main()

"""onnxruntime-web (WASM, in headless Chromium) against native ONNX Runtime, same models, one run.

    python benchmarks/ortweb.py [--models list:tiny] [--threads 2] [--min-time 1.0] [--rounds 1] [--small]

Every tiny class (random weights, no download) is measured at batch size 1 by

- ``benchdb run --backend ort-web --device wasm`` (the page times the same ONNX export benchdb
  caches for the onnxruntime backend, outputs verified against PyTorch fp32), and
- ``benchdb run --backend onnxruntime`` (CPU execution provider, same thread count),

one backend after the other, the order flipping every round so drift hits both. The results go
into one warehouse; printed per class: the median latency of each backend (the median of the
rounds' medians), their ratio WASM / native, and the statuses of classes that did not run (an
export that fails fails for both). The load average is printed: other processes slow both.

--small checks that the script works: tiny:bert, 0.1-0.3 s, 1 round, no limit on other processes'
CPU use (a busy machine is not what it checks); without Chromium or the onnxruntime-web files here,
the WASM side is skipped with a line saying why (nothing is fetched). A side that did not run has
its whole error printed on stderr (the table keeps its start).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

QUERY = """
SELECT model_id, backend, status, median, error, validity
FROM results
WHERE run_id = ? AND batch_size = 1
ORDER BY model_id
"""


def run(backend: list[str], args, out: Path) -> float:
    cmd = [
        sys.executable,
        "-m",
        "benchdb",
        "run",
        *backend,
        "--model",
        args.models,
        "--batch-size",
        "1",
        "--threads",
        str(args.threads),
        "--min-time",
        str(args.min_time),
        "--max-time",
        str(args.max_time),
        "--out",
        str(out),
        *args.extra,
    ]
    t0 = time.perf_counter()
    subprocess.run(cmd, check=False, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--models", default="list:tiny")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--min-time", type=float, default=1.0)
    p.add_argument("--max-time", type=float, default=5.0)
    p.add_argument("--rounds", type=int, default=1)
    p.add_argument("--work", help="keep the results here (default: a temporary folder)")
    p.add_argument(
        "--small",
        action="store_true",
        help="tiny:bert, 0.1-0.3 s, 1 round; the WASM side skipped "
        "when ort-web is unavailable: checks that the script works",
    )
    args = p.parse_args()
    args.extra = []
    if args.small:
        args.models, args.min_time, args.max_time, args.rounds = "tiny:bert", 0.1, 0.3, 1
        args.extra = ["--max-background-cpu", "100%"]

    import duckdb

    from benchdb.backends import registry
    from benchdb.harness import hardware

    work = Path(args.work or tempfile.mkdtemp(prefix="benchdb-ortweb-"))
    sides = {"wasm": ["--backend", "ort-web", "--device", "wasm"], "native": ["--backend", "onnxruntime"]}
    # (without --small, `benchdb run` fetches onnxruntime-web's files itself when they are missing)
    web = hardware.availability(registry.info("ort-web"))
    if args.small and web["status"] != "available":
        print(f"ort-web: skipped ({web.get('reason') or 'unavailable'}; {web['hint']})")
        del sides["wasm"]
    medians: dict[tuple[str, str], list[float]] = {}
    statuses: dict[tuple[str, str], str] = {}
    invalid: set[tuple[str, str]] = set()
    for rnd in range(args.rounds):
        order = list(sides) if rnd % 2 == 0 else list(reversed(sides))
        for side in order:
            out = work / f"round{rnd}-{side}"
            wall = run(sides[side], args, out)
            db = work / f"round{rnd}-{side}.duckdb"
            subprocess.run(
                [sys.executable, "-m", "benchdb", "ingest", str(out), "--db", str(db)],
                check=True,
                stdout=subprocess.DEVNULL,
            )
            con = duckdb.connect(str(db), read_only=True)
            run_id = con.execute("SELECT max(run_id) FROM runs").fetchone()[0]
            for model, _backend, status, median, error, validity in con.execute(QUERY, [run_id]).fetchall():
                key = (model, side)
                if validity == "invalid":
                    invalid.add(key)
                statuses[key] = status if status == "ok" else f"{status}: {(error or '')[:70]}"
                if status != "ok":
                    print(f"round {rnd + 1} {side} {model}: {status}: {error}", file=sys.stderr)
                if status == "ok" and median is not None:
                    medians.setdefault(key, []).append(median)
            con.close()
            print(f"round {rnd + 1} {side}: {wall:.0f} s", file=sys.stderr)

    load = os.getloadavg()
    print(
        f"# ort-web WASM (Chromium, onnxruntime-web) vs native ONNX Runtime CPU EP, batch 1, "
        f"{args.threads} threads, {args.rounds} round(s); load average {load[0]:.2f} {load[1]:.2f}"
    )
    print(f"{'class':<22}{'WASM median':>14}{'native median':>16}{'WASM/native':>13}")
    models = sorted({m for m, _ in statuses})
    for m in models:
        w, n = medians.get((m, "wasm")), medians.get((m, "native"))
        if w and n:
            wm, nm = statistics.median(w), statistics.median(n)
            flag = "".join(
                f"  ({side} invalid in a round: see validity_reasons)"
                for side in ("wasm", "native")
                if (m, side) in invalid
            )
            print(f"{m:<22}{wm * 1e3:>11.3f} ms{nm * 1e3:>13.3f} ms{wm / nm:>12.2f}x{flag}")
        else:
            print(f"{m:<22}  wasm: {statuses.get((m, 'wasm'), '-')}; native: {statuses.get((m, 'native'), '-')}")
    print(f"results: {work}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

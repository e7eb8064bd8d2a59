"""How well the regression checks work: recall and false alarms on generated series, and the
gate on real A/A runs of one scenario on this machine.

    python benchmarks/regressions_eval.py [--series 300] [--aa-runs 6] [--small]

1. Change points: series of 30 per-run medians with heavy-tailed noise (Student t, 3 dof, 1 %),
   steps of 2-20 %, single spikes (+30 %), slow drift, or nothing; prints recall per step size
   and the false-alarm rate of each no-step kind. Then the same on long series (400 runs) the way
   an ingest sees them (changepoints.scan: only the last WINDOW runs are examined), with the step
   in the range that ingest re-examines, and the whole history tiled in windows (600 runs).
2. Gate, synthetic: A/A pairs of heavy-tailed samples (should almost never be flagged) and
   pairs shifted by 3-10 %.
3. Gate, real: --aa-runs consecutive numpy runs of one scenario; every consecutive pair is
   compared (same code, same machine: a flag is a false alarm; separate invocations without the
   series' history are inconclusive by rule, with the reason naming --ab).

--small checks that the script works: 10 series per kind (1 of the long ones), 2 real runs of
0.02-0.1 s with --repeats 2.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np
from click.testing import CliRunner

from benchdb.analysis import changepoints, gate
from benchdb.analysis.stats import e_divisive
from benchdb.analysis.verdict import judge
from benchdb.cli import main as cli


def series(rng, n=30, step=0.0, at=15, spike=False, drift=0.0, noise=0.01):
    x = (1 + noise * rng.standard_t(3, n)) * (1 + drift * np.arange(n) / n)
    x[at:] *= 1 + step
    if spike:
        x[rng.integers(3, n - 3)] *= 1.3
    return x


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--series", type=int, default=300)
    ap.add_argument("--aa-runs", type=int, default=6)
    ap.add_argument(
        "--small",
        action="store_true",
        help="10 series per kind (1 long one), 2 real runs of 0.02-0.1 s, --repeats 2: checks that the script works",
    )
    args = ap.parse_args()
    timing, repeats = ["--min-time", "1", "--max-time", "5"], "3"
    if args.small:
        args.series, args.aa_runs, timing = 10, 2, ["--min-time", "0.02", "--max-time", "0.1"]
        repeats = "2"  # each repeat is a process of its own; 2 still give the gate an interval between processes
    rng = np.random.default_rng(2026)
    per = max(args.series // 10, 10)
    print(f"change points ({per} series per kind, n=30 runs, t(3) noise 1 %):")
    for step in (0.02, 0.03, 0.05, 0.10, 0.20):
        hits = 0
        for _ in range(per):
            at = int(rng.integers(8, 22))
            hits += any(abs(c.index - at) <= 1 for c in e_divisive(series(rng, step=step, at=at)))
        print(f"  step {step:4.0%}: recall {hits / per:5.1%}")
    for name, kw in (("no change", {}), ("single spike", {"spike": True}), ("drift 2 %", {"drift": 0.02})):
        fa = sum(bool(e_divisive(series(rng, **kw))) for _ in range(per))
        print(f"  {name:<12}: false alarms {fa / per:5.1%}")

    window = changepoints.WINDOW
    per_long = 1 if args.small else per  # a long series takes ~0.1 s to scan
    wrng = np.random.default_rng(2027)  # its own stream: the gate's numbers below stay comparable
    print(
        f"change points, windowed ({per_long} series per kind, window {window}): after an ingest of run 400 "
        f"(step in the last {window - window // 4} runs) | the whole history of 600 runs tiled:"
    )
    for step in (0.03, 0.05, 0.10, 0.20):
        hits = tiled = 0
        for _ in range(per_long):
            at = int(wrng.integers(400 - (window - window // 4) + 3, 400 - 5))
            x = series(wrng, n=400, step=step, at=at)
            hits += any(abs(c.index - at) <= 1 for c in changepoints.scan(x, 399)[0])
            at = int(wrng.integers(10, 590))
            x = series(wrng, n=600, step=step, at=at)
            tiled += any(abs(c.index - at) <= 1 for c in changepoints.scan(x, 0)[0])
        print(f"  step {step:4.0%}: recall {hits / per_long:5.1%} | {tiled / per_long:5.1%}")
    for name, kw in (("no change", {}), ("single spike", {"spike": True}), ("drift 2 %", {"drift": 0.02})):
        fa = sum(bool(changepoints.scan(series(wrng, n=400, **kw), 399)[0]) for _ in range(per_long))
        fa_tiled = sum(bool(changepoints.scan(series(wrng, n=600, **kw), 0)[0]) for _ in range(per_long))
        print(f"  {name:<12}: false alarms {fa / per_long:5.1%} | {fa_tiled / per_long:5.1%}")

    def verdict(shift):
        b = rng.lognormal(np.log(0.01), 0.05, 200) + rng.exponential(0.0005, 200)
        c = (rng.lognormal(np.log(0.01), 0.05, 200) + rng.exponential(0.0005, 200)) * (1 + shift)
        return judge(
            {},
            gate.SideSamples("ok", "valid", unit="s", values=list(b), processes=np.array_split(b, 3)),
            gate.SideSamples("ok", "valid", unit="s", values=list(c), processes=np.array_split(c, 3)),
            threshold=0.05,
            interleaved=True,
        ).verdict

    # the two sides as one interleaved --ab run: separate invocations without history are inconclusive
    # by rule (run-to-run noise unknown), whatever their samples
    print("gate, synthetic (200 samples a side in 3 processes, one --ab run, threshold 5 %):")
    for shift in (0.0, 0.03, 0.06, 0.10):
        v = [verdict(shift) for _ in range(per * 2)]
        print(
            f"  shift {shift:4.0%}: regressed {v.count('regressed') / len(v):5.1%}, improved "
            f"{v.count('improved') / len(v):5.1%}, unchanged {v.count('unchanged') / len(v):5.1%}, "
            f"inconclusive {v.count('inconclusive') / len(v):5.1%}"
        )

    work = Path(tempfile.mkdtemp(prefix="benchdb-aa-"))
    runner = CliRunner()
    for _ in range(args.aa_runs):
        r = runner.invoke(
            cli,
            [
                "run",
                "--backend",
                "numpy",
                "--model",
                "matmul:256",
                "--threads",
                "1",
                *timing,
                "--out",
                str(work / "res"),
                "--repeats",
                repeats,
            ],
        )
        assert r.exit_code == 0, r.output
    runner.invoke(cli, ["ingest", str(work / "res"), "--db", str(work / "w.duckdb")])
    print(
        f"gate, real A/A: {args.aa_runs} runs of numpy matmul:256 bs=1, 1 thread, --repeats {repeats}, "
        "consecutive pairs:"
    )
    for i in range(args.aa_runs - 1, 0, -1):
        r = runner.invoke(
            cli,
            [
                "check",
                "--baseline",
                f"latest~{i}",
                "--candidate",
                f"latest~{i - 1}",
                "--db",
                str(work / "w.duckdb"),
                "--format",
                "json",
            ],
        )
        (c,) = json.loads(r.stdout)["comparisons"]
        if c["change"] is None:  # no interval (an invalid or broken side): the reason says why
            print(f"  pair {args.aa_runs - i}: {c['verdict']} ({c['reason']}) (exit {r.exit_code})")
            continue
        print(
            f"  pair {args.aa_runs - i}: change {c['change']:+.2%} CI [{c['ci_low']:+.2%}, {c['ci_high']:+.2%}] "
            f"n={c['n_base']}/{c['n_cand']} -> {c['verdict']} (exit {r.exit_code})"
        )


if __name__ == "__main__":
    sys.exit(main())

"""The gate's bootstrap of a median: exact draws (benchdb.analysis.stats.bootstrap_medians) against
resampling every value, on the same data, in one run.

    python benchmarks/bootstrap.py [--n 20000] [--resamples 2000] [--rounds 5] [--small]

For a lognormal sample of n latencies thinned as the gate thins it (stats.MAX_BOOTSTRAP_N order
statistics), both ways draw `resamples` bootstrap medians, alternating over rounds. It prints the
median time of each, their ratio, and the 95 % interval each gives (they estimate the same law, so
the intervals agree up to Monte Carlo error).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from benchdb.analysis import stats


def resampled(x: np.ndarray, count: int, rng: np.random.Generator) -> np.ndarray:
    """The brute-force bootstrap the exact draws replaced."""
    return np.median(x[rng.integers(0, len(x), (count, len(x)))], axis=1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=20_000)
    ap.add_argument("--resamples", type=int, default=stats.BOOTSTRAP)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument(
        "--small", action="store_true", help="n = 2,000, 200 resamples, 2 rounds: checks that the script works"
    )
    args = ap.parse_args()
    if args.small:
        args.n, args.resamples, args.rounds = 2_000, 200, 2
    values = np.random.default_rng(0).lognormal(-7, 0.05, args.n)
    x = np.sort(values)
    if len(x) > stats.MAX_BOOTSTRAP_N:
        x = x[np.linspace(0, len(x) - 1, stats.MAX_BOOTSTRAP_N).astype(int)]
    times: dict[str, list[float]] = {"exact": [], "resampled": []}
    meds: dict[str, np.ndarray] = {}
    for r in range(args.rounds):
        for name, fn in (("exact", stats.bootstrap_medians), ("resampled", resampled))[:: 1 if r % 2 else -1]:
            t = time.perf_counter()
            meds[name] = fn(x, args.resamples, np.random.default_rng(r))
            times[name].append(time.perf_counter() - t)
    base, new = statistics.median(times["resampled"]), statistics.median(times["exact"])
    print(f"{args.resamples} bootstrap medians of {len(x)} values (from n = {args.n}), median of {args.rounds} rounds:")
    print(f"  resampled  {base * 1e3:9.2f} ms")
    print(f"  exact      {new * 1e3:9.2f} ms   ratio exact/resampled {new / base:.5f}")
    for name, m in meds.items():
        lo, hi = np.quantile(m, [0.025, 0.975])
        print(f"  95 % interval of the median, {name:<9} [{lo:.6e}, {hi:.6e}]")


if __name__ == "__main__":
    main()

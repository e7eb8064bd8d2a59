"""Parallel runs and duet A/B on this machine, each against its serial counterpart in one run.

    python benchmarks/parallel.py [--rounds 2] [--comparisons 20] [--min-time 0.5] [--small]

1. A suite of 8 single-thread user-bench scenarios (pure-Python work of 8 sizes, --repeats 3
   processes each, so a median's CI spans process-to-process variation), measured serially
   (`benchdb run --bench ... --threads 1`), serially pinned to one core (`--parallel 1`) and with
   `--parallel 2`, alternating, --rounds times each: the wall-time ratio of parallel to serial (goal
   <= 0.6x) and, per scenario, whether the parallel median agrees with the pinned serial one and
   with the unpinned one (within the parallel result's 95 % CI, or 3 %): pinning alone moves
   timings, so the pinned serial run is the like-for-like baseline.
2. --comparisons real A/A comparisons (both sides this interpreter and the same code), each done as
   an interleaved A/B and as a duet A/B (`--duet`), alternating, both `--repeats 5 --ab-max-trials 15
   --threads 1`, judged by `benchdb check` on the two runs: how many say `unchanged`, and the wall
   time (goal: duet at least as many `unchanged`, in <= 0.6x the time).
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SIZES = (3000, 6000, 9000, 12000, 15000, 18000, 21000, 24000)


def bench_source(sizes: tuple[int, ...]) -> str:
    return (
        "\n\n".join(
            f"def bench_work_{i}():\n    return lambda: sum(j * j for j in range({n}))" for i, n in enumerate(sizes)
        )
        + "\n"
    )


def benchdb(*args: str) -> tuple[float, subprocess.CompletedProcess]:
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "benchdb", *args], capture_output=True, text=True)
    took = time.perf_counter() - t
    if proc.returncode not in (0, 1, 3):
        raise SystemExit(f"benchdb {' '.join(args)} failed ({proc.returncode}): {proc.stderr[-500:]}")
    return took, proc


def medians(db: Path, folder: Path) -> dict[str, tuple[float, float, float]]:
    """model -> (median, ci low, ci high) of the one run under ``folder``."""
    from benchdb.warehouse import Warehouse

    wh = Warehouse(db)
    summary = wh.ingest([folder])
    with wh.reading() as con:
        rows = con.execute(
            "SELECT model_id, median, median_ci_low, median_ci_high FROM results WHERE list_contains($runs, run_id)",
            {"runs": sorted(summary.run_ids)},
        ).fetchall()
    return {m: (med, lo, hi) for m, med, lo, hi in rows}


def suite(work: Path, rounds: int, min_time: str, repeats: int, sizes: tuple[int, ...]) -> None:
    bench = work / "bench_suite.py"
    bench.write_text(bench_source(sizes))
    configs = {"serial": (), "serial pinned": ("--parallel", "1"), "parallel 2": ("--parallel", "2")}
    walls: dict[str, list[float]] = {name: [] for name in configs}
    got: dict[str, list[dict]] = {name: [] for name in configs}
    for r in range(rounds):
        for name, extra in configs.items():
            out = work / f"suite-{r}-{name.replace(' ', '')}"
            took, _ = benchdb(
                "run",
                "--bench",
                str(bench),
                "--threads",
                "1",
                "--min-time",
                min_time,
                "--repeats",
                str(repeats),
                "--out",
                str(out),
                *extra,
            )
            walls[name].append(took)
            got[name].append(medians(work / "suite.duckdb", out))
            print(f"round {r + 1} {name:<13}: {took:6.1f} s", flush=True)
    ratio = statistics.median(walls["parallel 2"]) / statistics.median(walls["serial"])
    print(
        f"\n{len(sizes)} single-thread scenarios: serial median {statistics.median(walls['serial']):.1f} s, "
        f"--parallel 2 {statistics.median(walls['parallel 2']):.1f} s: {ratio:.2f}x (goal <= 0.6x)"
    )
    print(
        f"{'scenario':<28} {'serial ms':>10} {'pinned ms':>10} {'parallel ms':>12} {'[CI]':>20} "
        f"{'vs pinned':>10} {'vs serial':>10}"
    )
    agree = {"serial pinned": 0, "serial": 0}
    for model in sorted(got["serial"][0]):
        ref = {k: statistics.median(g[model][0] for g in got[k]) for k in agree}
        p, lo, hi = got["parallel 2"][-1][model]
        cells = []
        for k, s in ref.items():
            ok = (lo is not None and lo <= s <= hi) or abs(p / s - 1) <= 0.03
            agree[k] += ok
            cells.append(f"{p / s - 1:+6.1%} {'ok' if ok else 'NO'}")
        print(
            f"{model:<28} {ref['serial'] * 1e3:10.3f} {ref['serial pinned'] * 1e3:10.3f} {p * 1e3:12.3f} "
            f"[{lo * 1e3:8.3f}, {hi * 1e3:8.3f}] {cells[0]:>10} {cells[1]:>10}"
        )
    n = len(got["serial"][0])
    print(
        f"parallel medians agree with the pinned serial run: {agree['serial pinned']}/{n}, with the unpinned "
        f"serial run: {agree['serial']}/{n} (goal: all, within the CI or 3 %)"
    )
    if rounds > 1:  # the noise floor: the same serial run twice, judged the same way
        same = 0
        for model in got["serial"][0]:
            a, (b, lo, hi) = got["serial"][0][model][0], got["serial"][-1][model]
            same += (lo <= a <= hi) or abs(b / a - 1) <= 0.03
        print(f"noise floor: the last serial run agrees with the first on {same}/{n} scenarios the same way")


def comparisons(work: Path, n: int, min_time: str, sizes: tuple[int, ...], repeats: int, max_trials: int) -> None:
    from benchdb.warehouse import Warehouse

    bench = work / "bench_aa.py"
    bench.write_text(bench_source(sizes))
    verdicts: dict[str, list[str]] = {"interleaved": [], "duet": []}
    walls: dict[str, list[float]] = {"interleaved": [], "duet": []}
    db = work / "aa.duckdb"
    for i in range(n):
        fn = f"bench_work_{i % len(sizes)}"
        for name, extra in (("interleaved", ()), ("duet", ("--duet",))):
            out = work / f"aa-{i}-{name}"
            took, proc = benchdb(
                "run",
                "--bench",
                f"{bench}::{fn}",
                "--ab",
                sys.executable,
                sys.executable,
                "--repeats",
                str(repeats),
                "--ab-max-trials",
                str(max_trials),
                "--threads",
                "1",
                "--min-time",
                min_time,
                "--out",
                str(out),
                *extra,
            )
            ab = re.search(r"tag:(ab-[0-9a-f]+)-base", proc.stdout)
            if ab is None:
                raise SystemExit(f"no A/B tags in: {proc.stdout[-400:]} {proc.stderr[-400:]}")
            wh = Warehouse(db)
            wh.ingest([out])
            gate = wh.check(f"tag:{ab.group(1)}-base", f"tag:{ab.group(1)}-cand")
            verdict, change = gate.comparisons[0].verdict, gate.comparisons[0].change
            verdicts[name].append(verdict)
            walls[name].append(took)
            print(
                # no change where a side gave no interval (an invalid or broken side: too noisy on a busy machine)
                f"A/A {i + 1:>2} {fn} {name:<11}: {verdict:<12} "
                f"{'-' if change is None else format(change, '+6.1%'):>6} in {took:5.1f} s",
                flush=True,
            )
    print(f"\n{'method':<12} {'unchanged':>10} {'other verdicts':<30} {'total s':>8}")
    for name in verdicts:
        others = [v for v in verdicts[name] if v != "unchanged"]
        print(
            f"{name:<12} {verdicts[name].count('unchanged'):>6}/{n:<3} {', '.join(others) or '-':<30} "
            f"{sum(walls[name]):8.0f}"
        )
    print(
        f"duet time / interleaved time: {sum(walls['duet']) / sum(walls['interleaved']):.2f}x (goal <= 0.6x, "
        "with at least as many unchanged)"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--comparisons", type=int, default=20)
    ap.add_argument("--min-time", default="0.5")
    ap.add_argument(
        "--repeats",
        type=int,
        default=3,
        help="processes per scenario in the suite (its CI then spans process-to-process variation)",
    )
    ap.add_argument("--suite-only", action="store_true", help="skip the A/A comparisons")
    ap.add_argument(
        "--small",
        action="store_true",
        help="checks that the script works: 2 scenarios, 1 round, 1 process each; 1 comparison of 2 trials; 0.05 s",
    )
    args = ap.parse_args()
    sizes, ab_repeats, ab_max_trials = SIZES, 5, 15
    if args.small:
        args.rounds, args.comparisons, args.min_time, args.repeats = 1, 1, "0.05", 1
        sizes, ab_repeats, ab_max_trials = SIZES[:2], 2, 2
    work = Path(tempfile.mkdtemp(prefix="benchdb-parallel-"))
    suite(work, args.rounds, args.min_time, args.repeats, sizes)
    if not args.suite_only:
        print()
        comparisons(work, args.comparisons, args.min_time, sizes, ab_repeats, ab_max_trials)


if __name__ == "__main__":
    main()

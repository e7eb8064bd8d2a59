"""The main job's wall time now against an earlier commit's, interleaved in one run.

    python benchmarks/quickstart_time.py [--baseline-ref ea10ada] [--pairs 2] [--small]

The earlier commit is checked out into a temporary git worktree; each side runs
``python -m benchdb quickstart`` in its own checkout (``python -m`` imports the package from the
working directory, so the same interpreter and libraries serve both) into a fresh folder. The
sides alternate (A B B A ...), and the script prints each wall time and the ratio of the medians.
Never run it beside another benchmark or test run. --small checks that the script works: HEAD
against itself with --repeats 1 and numpy only, in one quickstart run in the temporary
worktree that serves as both sides (a second run of the same commit would only repeat it: its ratio
is 1 by construction).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: --small: the one backend that needs no model build, for a wall time (the whole quickstart runs in
#: tests/cli/test_start.py)
SMALL_BACKENDS = ("--backend", "numpy")


def quickstart(checkout: Path, work: Path, extra: list[str]) -> float:
    work.mkdir(parents=True)
    t0 = time.perf_counter()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchdb",
            "quickstart",
            "--db",
            str(work / "q.duckdb"),
            "--out",
            str(work / "results"),
            "--report",
            str(work / "report.html"),
            *extra,
        ],
        cwd=checkout,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.exit(f"quickstart in {checkout} failed ({proc.returncode}): {proc.stderr.strip()[-400:]}")
    last = [line for line in proc.stdout.splitlines() if "result" in line][:1]
    print(f"  {checkout.name:<10} {wall:6.1f} s  {last[0][:100] if last else ''}", flush=True)
    return wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--baseline-ref",
        default="ea10ada",
        help="the commit to compare with (default: the last commit before issue 12's repeats)",
    )
    ap.add_argument("--pairs", type=int, default=2)
    ap.add_argument(
        "--small",
        action="store_true",
        help="HEAD against itself, numpy only, --repeats 1, one run serving both sides: checks the script",
    )
    args = ap.parse_args()
    extra = []
    if args.small:
        args.baseline_ref, args.pairs, extra = "HEAD", 1, ["--repeats", "1", *SMALL_BACKENDS]
    with tempfile.TemporaryDirectory(prefix="benchdb-qs-") as tmp:
        base = Path(tmp) / "baseline"
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(base), args.baseline_ref],
            check=True,
            capture_output=True,
        )
        try:
            times: dict[str, list[float]] = {"baseline": [], "now": []}
            if args.small:
                times["baseline"] = times["now"] = [quickstart(base, Path(tmp) / "run0-both", extra)]
            order = []
            for i in range(0 if args.small else args.pairs):
                order += [("baseline", base), ("now", ROOT)] if i % 2 == 0 else [("now", ROOT), ("baseline", base)]
            for j, (name, checkout) in enumerate(order):
                times[name].append(quickstart(checkout, Path(tmp) / f"run{j}-{name}", extra))
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base)], capture_output=True)
    b, n = statistics.median(times["baseline"]), statistics.median(times["now"])
    print(
        f"quickstart wall time: {args.baseline_ref} {b:.1f} s, now {n:.1f} s (medians of {args.pairs}); "
        f"ratio {n / b:.2f} (goal <= 1.5)"
    )


if __name__ == "__main__":
    main()

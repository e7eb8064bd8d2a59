"""Bisecting a 10 % slowdown on this noisy machine: benchdb bisect against the common way, in one run.

    python benchmarks/bisect_noise.py [--bisects 10] [--factor 1.10] [--min-time 0.2] [--commits 16] [--small]

A repository of 16 commits (--commits; tests/support/bisect_repo.py: a package and a user bench) whose commit
11 (the same place in another count) makes the bench --factor times slower. Every commit's
environment is built first (not timed). Then,
alternating, --bisects times each:

- benchdb: `benchdb bisect --good 1 --bad 16 --bench ... --min-time T` (5 trials a step, up to 15
  while the verdict is open, 5 % threshold);
- the common way: `git bisect run` with a script that runs the bench once on the good commit and
  once on the tested one (one process each, the median of its calls over T seconds) and calls the
  commit bad when it is more than 5 % slower.

Prints, for each, how often it named commit 11, what it named otherwise, and the wall time of each.
Goal: benchdb right >= 9 of 10 times. --small (checks that the script works): 3 commits, the 2nd
slower, 1 bisect of each, 0.05-0.2 s a trial, benchdb with 2 trials a step, a +-20 % target and no
limit on other processes' CPU use (a trial that short is invalid at +-2 % on a busy machine).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from support.bisect_repo import git, make_repo  # noqa: E402

STEP = '''"""One `git bisect run` step: the bench once on the good commit, once on HEAD; bad above 5 %."""
import subprocess, sys
good_python, min_time = sys.argv[1], sys.argv[2]
head = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
envs = {envs!r}
TIME = ("import statistics, time, slowpkg\\n"
        "ts, end = [], time.perf_counter() + float(%r)\\n"
        "while time.perf_counter() < end or len(ts) < 10:\\n"
        "    t = time.perf_counter(); slowpkg.work(); ts.append(time.perf_counter() - t)\\n"
        "print(statistics.median(ts))")
def once(python):
    out = subprocess.run([python, "-c", TIME % min_time], capture_output=True, text=True, check=True, cwd="/")
    return float(out.stdout)
good, cur = once(good_python), once(envs[head])
sys.exit(1 if cur > 1.05 * good else 0)
'''


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bisects", type=int, default=10)
    ap.add_argument("--factor", type=float, default=1.10)
    ap.add_argument("--min-time", default="0.2")
    ap.add_argument("--commits", type=int, default=16)
    ap.add_argument(
        "--small",
        action="store_true",
        help="3 commits, 1 bisect of each, 2 trials a step, 0.05-0.2 s: checks that the script works",
    )
    args = ap.parse_args()
    small: list[str] = []
    if args.small:
        args.bisects, args.commits, args.min_time = 1, 3, "0.05"
        small = ["--repeats", "2", "--ab-max-trials", "2", "--max-time", "0.2", "--target-ci", "20%"]
        small += ["--max-background-cpu", "100%"]
    slow_at = max(2, round(args.commits * 11 / 16))
    work = Path(tempfile.mkdtemp(prefix="benchdb-bisect-noise-"))
    repo = work / "repo"
    shas = make_repo(repo, n=args.commits, slow_at=slow_at, factor=args.factor)
    right = shas[slow_at - 1]
    env = {"BENCHDB_CACHE": str(work / "cache")}

    # every commit's environment, built once through benchdb's own (the common way uses them too)
    from benchdb.bisect import search as b

    t = time.perf_counter()
    import os

    os.environ.update(env)
    checkouts = b.Checkouts(repo, None, work / "trees", lambda _text: None)
    envs = {}
    try:
        for sha in shas:
            envs[sha] = checkouts.python(b.resolve(repo, sha, "commit"))
    finally:
        checkouts.close()
    print(
        f"{args.commits} commits, commit {slow_at} does {args.factor:.2f}x the work; environments built in "
        f"{time.perf_counter() - t:.0f} s"
    )
    step = work / "step.py"
    step.write_text(STEP.replace("{envs!r}", repr(envs)))

    results: dict[str, list[tuple[str, float]]] = {"benchdb": [], "git bisect run": []}
    for i in range(args.bisects):
        t = time.perf_counter()
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "benchdb",
                "bisect",
                "--repo",
                str(repo),
                "--good",
                shas[0],
                "--bad",
                shas[-1],
                "--bench",
                "benches/bench_work.py",
                "--min-time",
                args.min_time,
                "--out",
                str(work / "results"),
                "--format",
                "json",
                *small,
            ],
            capture_output=True,
            text=True,
            env={**os.environ, **env},
        )
        took = time.perf_counter() - t
        doc = json.loads(proc.stdout) if proc.stdout.strip().startswith("{") else {}
        named = (doc.get("culprit") or {}).get("sha") or f"none ({doc.get('status') or proc.stderr.strip()[-200:]})"
        results["benchdb"].append((named, took))
        print(
            f"benchdb        #{i + 1}: {_name(named, shas)} in {took:.0f} s ({len(doc.get('steps', []))} steps)"
            + ("" if doc.get("culprit") else f": {doc.get('message')}"),
            flush=True,
        )
        for s in doc.get("steps", []):
            print(
                f"    {_name(s['tested']['sha'], shas)} against {_name(s['base']['sha'], shas)}: {s['verdict']} "
                f"{_pct(s['change'])} [{_pct(s['ci_low'])}, {_pct(s['ci_high'])}]",
                flush=True,
            )

        t = time.perf_counter()
        git(repo, "bisect", "reset")
        git(repo, "bisect", "start", shas[-1], shas[0])
        out = git(repo, "bisect", "run", sys.executable, str(step), envs[shas[0]], args.min_time)
        took = time.perf_counter() - t
        first = next((ln.split()[0] for ln in out.splitlines() if "is the first bad commit" in ln), "none")
        git(repo, "bisect", "reset")
        results["git bisect run"].append((first, took))
        print(f"git bisect run #{i + 1}: {_name(first, shas)} in {took:.0f} s", flush=True)

    print(f"\n{'method':<16} {'right':>7} {'median s':>9} {'max s':>7}   named otherwise")
    for name, rows in results.items():
        ok = sum(sha == right for sha, _ in rows)
        wrong = [_name(sha, shas) for sha, _ in rows if sha != right]
        times = [s for _, s in rows]
        print(
            f"{name:<16} {ok:>3}/{len(rows):<3} {statistics.median(times):9.0f} {max(times):7.0f}   "
            f"{', '.join(wrong) or '-'}"
        )
    print("goal: benchdb right >= 9/10")


def _pct(x) -> str:
    return "n/a" if x is None else f"{x:+.1%}"


def _name(sha: str, shas: list[str]) -> str:
    return f"commit {shas.index(sha) + 1}" if sha in shas else sha


if __name__ == "__main__":
    main()

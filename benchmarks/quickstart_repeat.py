"""Do the quickstart's "wins" hold on the next run? Five quickstarts, each into its own warehouse.

    python benchmarks/quickstart_repeat.py [--runs 5] [--baseline-ref 69eff9b] [--baseline-runs 2] [--small]

For every (model, batch size, input shape) where a quickstart's optimal-hardware table calls a
"win", it checks whether every other run names the same winner (hardware / backend / mode /
precision). Goal: >= 95 % of win calls confirmed by every other run; the rest of the rows are
shown as the ties or unconfirmed calls they are.

The same run also measures the quickstart of an earlier commit (``--baseline-ref``, checked out into
a temporary git worktree; ``python -m benchdb`` imports the package from the working directory,
so one interpreter serves both), interleaved with the new runs: its wall time is the baseline of
the ratio printed, and its own "win" calls (one process, within-process intervals) are checked the
same way against every other run. Never run it beside another benchmark or test run. --small checks
that the script works: one quickstart of pytorch and onnxruntime (--repeats 1: its calls cannot be wins),
no baseline.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: --small: two backends that measure the same models, so that the table has calls to check (the whole
#: quickstart runs in tests/cli/test_start.py)
SMALL_BACKENDS = ("--backend", "pytorch", "--backend", "onnxruntime")


def quickstart(checkout: Path, work: Path, extra: list[str]) -> tuple[float, list[dict]]:
    """(wall seconds, optimal-hardware rows by throughput) of one quickstart in a fresh folder."""
    work.mkdir(parents=True)
    db = work / "q.duckdb"
    t0 = time.perf_counter()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchdb",
            "quickstart",
            "--db",
            str(db),
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
        raise SystemExit(f"quickstart in {checkout} failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
    rep = subprocess.run(
        [sys.executable, "-m", "benchdb", "report", "--optimal-hardware", "--format", "json", "--db", str(db)],
        cwd=checkout,
        capture_output=True,
        text=True,
        check=True,
    )
    return wall, json.loads(rep.stdout)


def winner(r: dict) -> str:
    return f"{r['best_hardware']} / {r['best_backend']} / {r['best_mode']} / {r['best_precision']}"


def key(r: dict) -> tuple:
    return (r["model_id"], r["batch_size"], r["input_shape"])


def judge(runs: list[list[dict]], others: list[list[dict]]) -> list[dict]:
    """Per run and row with a runner-up: its verdict, and whether every other run (of ``runs`` and
    ``others``) names the same winner."""
    out = []
    pool = runs + others
    for i, rows in enumerate(runs):
        for r in rows:
            if r.get("runner_up_result_id") is None:
                continue
            elsewhere = [
                winner(o) for j, other in enumerate(pool) if other is not rows for o in other if key(o) == key(r)
            ]
            out.append(
                {
                    "run": i + 1,
                    "key": key(r),
                    "winner": winner(r),
                    "verdict": r["margin_verdict"],
                    "margin": r["margin"],
                    "lo": r.get("margin_ci_low"),
                    "hi": r.get("margin_ci_high"),
                    "confirmed": all(w == winner(r) for w in elsewhere),
                    "others": len(elsewhere),
                }
            )
    return out


def pct(v) -> str:
    return "" if v is None else f"{v * 100:+.1f}%"


def table(calls: list[dict], title: str) -> None:
    print(f"\n## {title}\n")
    print("| run | model | batch | input | winner | margin | 95% CI | verdict | same winner in every other run |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for c in sorted(calls, key=lambda c: (c["key"], c["run"])):
        m, b, s = c["key"]
        ci = f"{pct(c['lo'])} .. {pct(c['hi'])}" if c["lo"] is not None else ""
        print(
            f"| {c['run']} | {m} | {b} | {s} | {c['winner']} | {pct(c['margin'])} | {ci} | {c['verdict']} | "
            f"{'yes' if c['confirmed'] else 'NO'} |"
        )
    counts = defaultdict(lambda: [0, 0])
    for c in calls:
        counts[c["verdict"]][0] += 1
        counts[c["verdict"]][1] += c["confirmed"]
    print()
    for v, (n, ok) in sorted(counts.items()):
        print(f"- {v}: {n} calls, {ok} confirmed by every other run ({ok / n:.0%})")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--baseline-ref", default="69eff9b", help="the commit whose quickstart is today's baseline")
    ap.add_argument("--baseline-runs", type=int, default=2)
    ap.add_argument(
        "--small",
        action="store_true",
        help="1 quickstart of pytorch and onnxruntime, --repeats 1, no baseline: checks that the script works",
    )
    args = ap.parse_args()
    extra = []
    if args.small:
        args.runs, args.baseline_runs, extra = 1, 0, ["--repeats", "1", *SMALL_BACKENDS]
    with tempfile.TemporaryDirectory(prefix="bdb-qsrepeat-") as tmp:
        tmp = Path(tmp)
        base_tree = tmp / "baseline"
        if args.baseline_runs:
            subprocess.run(
                ["git", "worktree", "add", "--detach", str(base_tree), args.baseline_ref],
                cwd=ROOT,
                check=True,
                capture_output=True,
            )
        try:
            order = ["new"] * args.runs
            for k in range(args.baseline_runs):  # spread over the run: B N N B N N N ...
                order.insert(min(len(order), k * (args.runs // max(args.baseline_runs, 1) + 1)), "base")
            walls = {"new": [], "base": []}
            rows = {"new": [], "base": []}
            for i, side in enumerate(order):
                wall, opt = quickstart(
                    ROOT if side == "new" else base_tree, tmp / f"{i}-{side}", extra if side == "new" else []
                )
                walls[side].append(wall)
                rows[side].append(opt)
                print(f"quickstart {i + 1}/{len(order)} ({side}): {wall:.1f} s", flush=True)
        finally:
            if args.baseline_runs:
                subprocess.run(["git", "worktree", "remove", "--force", str(base_tree)], cwd=ROOT, capture_output=True)
    new = judge(rows["new"], [])
    table(new, f"This benchdb: {args.runs} quickstarts (3 interleaved processes a scenario)")
    wins = [c for c in new if c["verdict"] == "win"]
    ok = sum(c["confirmed"] for c in wins)
    print(
        f"\n**Win calls confirmed by every other run: {ok} of {len(wins)}"
        + (f" ({ok / len(wins):.0%}; goal >= 95 %)**" if wins else "**")
    )
    if rows["base"]:
        old = judge(rows["base"], rows["new"])
        table(
            old,
            f"Baseline {args.baseline_ref}: {args.baseline_runs} quickstarts (one process), checked against "
            "every other run of both",
        )
        ow = [c for c in old if c["verdict"] == "win"]
        if ow:
            print(f"\nBaseline win calls confirmed by every other run: {sum(c['confirmed'] for c in ow)} of {len(ow)}")
        ratio = statistics.median(walls["new"]) / statistics.median(walls["base"])
        print(
            f"\nWall time: this benchdb median {statistics.median(walls['new']):.1f} s "
            f"({', '.join(f'{w:.1f}' for w in walls['new'])}); baseline median "
            f"{statistics.median(walls['base']):.1f} s ({', '.join(f'{w:.1f}' for w in walls['base'])}); "
            f"ratio {ratio:.2f}x (goal <= 1.2x)"
        )


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()

"""The regression gate on real measurements of this machine: A/A false alarms and slowdown recall.

    python benchmarks/gate_real.py [--rounds 9] [--sep3-rounds 6] [--ab-rounds 5] [--ab-max-trials N]
                                   [--work /tmp/gate_real] [--small]

Every number comes from real `benchdb run` invocations (the benches in
benchmarks/gate_benches/bench_gate.py: numpy matmul at 12 sizes, a tiny PyTorch BERT at 8
batch/sequence shapes, and a fixed amount of work), ingested into one warehouse per mode and
judged by `benchdb check`'s gate (threshold 5 %). The modes, run in rounds so that they share the
same periods of the machine's drift:

- ``ab``: A/A with ``--ab PY PY`` (the same interpreter on both sides, --repeats 5): every
  comparison should be ``unchanged``; ``regressed``/``improved``/``broken`` is a false alarm.
- ``slowdown``: ``--ab PY PY --repeats 5 --ab-env cand:GATE_WORK_SCALE=1.1``, the candidate
  doing 10 % more work in the same series: every comparison should be ``regressed`` (recall).
- ``sep3``: separate ``benchdb run --repeats 3`` invocations, one per round (minutes apart);
  round i is compared with round i+1. Reported apart: pairs whose series has no history yet
  (fewer than gate.MIN_HISTORY earlier runs) and pairs with history.
- ``sep1``: the same with one process per scenario (``--repeats 1``, the default).

A false alarm is a verdict of regressed, improved or broken on an A/A pair. Inconclusive verdicts
are counted with their reasons: without history they must name the missing run-to-run noise and
the remedy. Never run this beside another benchmark or test run: it measures the machine.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from itertools import pairwise
from pathlib import Path

HERE = Path(__file__).resolve().parent
BENCH = HERE / "gate_benches" / "bench_gate.py"
CLI = [sys.executable, "-m", "benchdb"]
TIMING = ["--min-time", "1.0", "--max-time", "3", "--threads", "1"]
AA = [f"{BENCH}::bench_matmul", f"{BENCH}::bench_tiny_bert"]
WORK = [f"{BENCH}::bench_work"]
FALSE_ALARMS = ("regressed", "improved", "broken")
#: --ab-max-trials of the ab and slowdown modes (0: exactly AB_REPEATS trials); set by --ab-max-trials
AB_MAX_TRIALS = 0
#: --repeats of the ab and slowdown modes (--small: 2)
AB_REPEATS = 5


def _benches(specs):
    return [a for s in specs for a in ("--bench", s)]


def run(args: list[str], log) -> str:
    t0 = time.perf_counter()
    proc = subprocess.run(CLI + args, capture_output=True, text=True)
    log.write(f"$ benchdb {' '.join(args)}\n{proc.stdout}{proc.stderr}\n")
    log.flush()
    if proc.returncode != 0:
        sys.exit(f"benchdb {' '.join(args[:3])} ... failed ({proc.returncode}): {proc.stderr.strip()[-500:]}")
    print(
        f"    {time.perf_counter() - t0:6.1f} s  benchdb {' '.join(a for a in args if not a.startswith('/'))[:110]}",
        flush=True,
    )
    return proc.stdout


def ab_run(work: Path, mode: str, specs, extra, log) -> tuple[str, str]:
    out = run(
        [
            "run",
            *_benches(specs),
            *TIMING,
            "--ab",
            sys.executable,
            sys.executable,
            "--repeats",
            str(AB_REPEATS),
            *(["--ab-max-trials", str(AB_MAX_TRIALS)] if AB_MAX_TRIALS else []),
            *extra,
            "--out",
            str(work / mode / "files"),
        ],
        log,
    )
    m = re.search(r"--baseline (tag:ab-[0-9a-f]+-base) --candidate (tag:ab-[0-9a-f]+-cand)", out)
    if not m:
        sys.exit(f"{mode}: no check command in the output of --ab")
    run(["ingest", str(work / mode / "files"), "--db", str(work / f"{mode}.duckdb")], log)
    return m.group(1), m.group(2)


def sep_run(work: Path, mode: str, repeats: int, i: int, log) -> str:
    tag = f"{mode}-{i}"
    run(
        ["run", *_benches(AA), *TIMING, "--repeats", str(repeats), "--tag", tag, "--out", str(work / mode / "files")],
        log,
    )
    run(["ingest", str(work / mode / "files"), "--db", str(work / f"{mode}.duckdb")], log)
    return f"tag:{tag}"


def judge(work: Path, mode: str, base: str, cand: str, label: str, rows: list) -> None:
    from benchdb.analysis import gate
    from benchdb.warehouse import Warehouse

    result = Warehouse(work / f"{mode}.duckdb").check(base, cand, threshold=0.05)
    for c in result.comparisons:
        rows.append(
            {
                "mode": mode,
                "label": label,
                "verdict": c.verdict,
                "reason": c.reason,
                "model": c.scenario["model_id"],
                "shape": c.scenario["input_shape"],
                "change": c.change,
                "lo": c.ci_low,
                "hi": c.ci_high,
                "threshold": c.threshold,
                "eq_lo": c.eq_low,
                "eq_hi": c.eq_high,
                "history": c.noise is not None,
                "min_history": gate.MIN_HISTORY,
            }
        )


def summarise(rows: list, mode: str, label: str | None, *, expect: str) -> None:
    sel = [r for r in rows if r["mode"] == mode and (label is None or r["label"] == label)]
    if not sel:
        return
    n = len(sel)
    counts = Counter(r["verdict"] for r in sel)
    name = f"{mode}{' ' + label if label else ''}"
    parts = ", ".join(
        f"{v} {counts[v]}" for v in ("unchanged", "inconclusive", "regressed", "improved", "broken") if counts[v]
    )
    if expect == "unchanged":
        fa = sum(counts[v] for v in FALSE_ALARMS)
        print(
            f"  {name:<24} {n:4d} comparisons: {parts}; false alarms {fa / n:6.1%}; "
            f"unchanged {counts['unchanged'] / n:6.1%}"
        )
    else:
        print(f"  {name:<24} {n:4d} comparisons: {parts}; recall {counts['regressed'] / n:6.1%}")
        changes = sorted(r["change"] for r in sel if r["change"] is not None)
        if changes:
            print(
                f"  {'':<24} median measured change {changes[len(changes) // 2]:+.1%} "
                f"(range {changes[0]:+.1%} .. {changes[-1]:+.1%})"
            )
    benches = sorted({r["model"] for r in sel})
    if len(benches) > 1:  # per bench: a tiny PyTorch model is noisier than numpy here
        print(
            f"  {'':<24} "
            + "; ".join(
                f"{b.split('::')[-1]} {sum(r['verdict'] == expect for r in sel if r['model'] == b)}"
                f"/{sum(r['model'] == b for r in sel)} {expect}"
                for b in benches
            )
        )
    if expect == "unchanged":  # the threshold this machine supports: 90 % of A/A pairs unchanged
        widths = sorted(max(abs(r["eq_lo"]), abs(r["eq_hi"])) for r in sel if r["eq_lo"] is not None)
        if widths:
            print(
                f"  {'':<24} 90 % of these would be unchanged at a threshold of "
                f"+-{widths[min(len(widths) - 1, int(0.9 * len(widths)))]:.1%}"
            )
    reasons = Counter(
        re.sub(r"[0-9.]+", "N", re.sub(r"\[[^]]*\]", "[..]", r["reason"])) for r in sel if r["verdict"] != expect
    )
    for reason, k in reasons.most_common(3):
        print(f"  {'':<24}   {k:3d} x {r_short(reason)}")


def r_short(reason: str) -> str:
    return reason if len(reason) < 150 else reason[:147] + "..."


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=9, help="separate invocations with --repeats 1")
    ap.add_argument("--sep3-rounds", type=int, default=6, help="separate invocations with --repeats 3")
    ap.add_argument("--ab-rounds", type=int, default=5, help="A/A and slowdown --ab runs")
    ap.add_argument(
        "--ab-max-trials",
        type=int,
        default=0,
        help="--ab-max-trials of the --ab runs: more trials while a verdict is open (0: exactly 5)",
    )
    ap.add_argument("--work", type=Path, default=Path("/tmp/gate_real"))
    ap.add_argument("--modes", default="ab,slowdown,sep3,sep1")
    ap.add_argument(
        "--min-time", default="1.0", help="run's --min-time for every scenario (seconds; 1.0 is run's own default)"
    )
    ap.add_argument("--rejudge", action="store_true", help="judge the runs already in --work again (no runs)")
    ap.add_argument(
        "--small",
        action="store_true",
        help="checks that the script works: modes ab, slowdown, sep1 on the first sizes of the numpy "
        "benches, 1 --ab round of 2 trials, 2 separate runs, 0.05-0.2 s a scenario, in a "
        "temporary --work",
    )
    args = ap.parse_args()
    global AB_MAX_TRIALS, AB_REPEATS
    if args.small:
        args.rounds, args.sep3_rounds, args.ab_rounds, args.modes, args.min_time = 2, 0, 1, "ab,slowdown,sep1", "0.05"
        args.work = Path(tempfile.mkdtemp(prefix="benchdb-gate-real-"))
        AB_REPEATS = 2
        TIMING[3] = "0.2"
        AA.remove(f"{BENCH}::bench_tiny_bert")  # its children import torch: seconds each
        os.environ["GATE_SMALL"] = "1"
    AB_MAX_TRIALS = args.ab_max_trials
    TIMING[1] = args.min_time
    modes = set(args.modes.split(","))
    rows: list[dict] = []
    sep_tags: dict[str, list[str]] = defaultdict(list)
    t0 = time.perf_counter()
    if args.rejudge:
        rejudge(args.work, modes, rows)
        report(args, rows, time.perf_counter() - t0)
        return
    shutil.rmtree(args.work, ignore_errors=True)
    args.work.mkdir(parents=True)
    with open(args.work / "log.txt", "w") as log:
        for i in range(max(args.rounds, args.sep3_rounds, args.ab_rounds)):
            print(f"round {i + 1} ({time.perf_counter() - t0:.0f} s)", flush=True)
            if i < args.ab_rounds and "ab" in modes:
                judge(args.work, "ab", *ab_run(args.work, "ab", AA, [], log), f"run {i}", rows)
            if i < args.ab_rounds and "slowdown" in modes:
                judge(
                    args.work,
                    "slowdown",
                    *ab_run(args.work, "slowdown", WORK, ["--ab-env", "cand:GATE_WORK_SCALE=1.1"], log),
                    f"run {i}",
                    rows,
                )
            for mode, k, rounds in (("sep3", 3, args.sep3_rounds), ("sep1", 1, args.rounds)):
                if i < rounds and mode in modes:
                    sep_tags[mode].append(sep_run(args.work, mode, k, i, log))
                    tags = sep_tags[mode]
                    if len(tags) >= 2:
                        judge(args.work, mode, tags[-2], tags[-1], "pending", rows)
                        for r in rows:
                            if r["mode"] == mode and r["label"] == "pending":
                                r["label"] = "with history" if r["history"] else "no history"
    report(args, rows, time.perf_counter() - t0)


def rejudge(work: Path, modes: set, rows: list) -> None:
    """The comparisons of an earlier run of this script, from its log (ab tags) and sep tags."""
    log = (work / "log.txt").read_text()
    ab_runs = re.findall(
        r"\$ benchdb (run .*?)\n(?:.*\n)*?check with: .*?--baseline (tag:ab-[0-9a-f]+-base) "
        r"--candidate (tag:ab-[0-9a-f]+-cand)",
        log,
    )
    for cmd, base, cand in ab_runs:
        mode = "slowdown" if "GATE_WORK_SCALE" in cmd else "ab"
        if mode in modes:
            judge(work, mode, base, cand, "", rows)
    for mode in ("sep3", "sep1"):
        tags = [f"tag:{t}" for t in dict.fromkeys(re.findall(rf"--tag ({mode}-\d+)", log))]
        for a, b in pairwise(tags):
            if mode in modes:
                judge(work, mode, a, b, "pending", rows)
                for r in rows:
                    if r["label"] == "pending":
                        r["label"] = "with history" if r["history"] else "no history"


def report(args, rows: list, wall: float) -> None:
    from benchdb.analysis import gate

    print(
        f"\ngate on real runs of this machine ({wall / 60:.1f} min; threshold 5 %; a side's history counts "
        f"once the series has {gate.MIN_HISTORY} earlier runs):"
    )
    summarise(rows, "ab", None, expect="unchanged")
    summarise(rows, "sep3", "no history", expect="unchanged")
    summarise(rows, "sep3", "with history", expect="unchanged")
    summarise(rows, "sep1", "no history", expect="unchanged")
    summarise(rows, "sep1", "with history", expect="unchanged")
    summarise(rows, "slowdown", None, expect="regressed")
    aa = [r for r in rows if r["mode"] != "slowdown"]
    fa = sum(r["verdict"] in FALSE_ALARMS for r in aa)
    print(f"  all A/A: {len(aa)} comparisons, {fa} false alarm(s) ({fa / max(len(aa), 1):.1%})")
    print(f"(commands and their output: {args.work / 'log.txt'}; judge them again: --rejudge --work {args.work})")


if __name__ == "__main__":
    main()

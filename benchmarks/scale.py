"""How benchdb's costs grow with the warehouse: 1M, 10M and 100M samples (1B with --huge), one run.

    python benchmarks/scale.py [--sizes 1000000,10000000,100000000] [--huge] [--workdir DIR] [--skip-compact]
                               [--small]

For each size, a warehouse ingested from contract files as a fleet writes them: 20 nightly runs,
each ingested as it lands, 4 hardware, many series (model x batch size), 20,000 samples a file.
Then, each as its own `python -m benchdb` process (start-up included; answers computed: each
command is the first to ask about its warehouse state, with benchdb's catalog of its own views
cached as after any first command):

- ingest of one new 20,000-sample file (a new run), and the peak disk the warehouse's folder used
  during that write against the warehouse's size before it;
- a no-op re-ingest of the same file;
- change points after one new run: ingest of a new run of 20 files (20 series updated);
- `report --optimal-hardware`;
- `check` between two runs of one machine (night 18 against night 19), and between two whole
  nights (`--baseline tag:night-18 --candidate tag:night-19`: every series of the fleet);
- `db compact` (every part rewritten as one: the maintenance a fleet runs now and then), with its
  peak disk;

with the wall time and the peak RSS of each. Then each figure's growth from the smallest size.
Goals (issue 37): ingest at 100M <= 2x its cost at 1M; peak disk during a write <= 1.1x the
warehouse; report and check < 1 s at 100M; peak RSS < 4 GB for every command.

--small checks that the script works: 3 nights of 1,000-sample files, 3,000 and 6,000 samples.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

from benchdb.schema import contract

PER_FILE = 20_000
#: The answer cache of this run: every command is the first to ask about its warehouse state, so
#: answers are computed; what it keeps across states is benchdb's catalog of its own views (built
#: once per code version, as after a user's first command).
ANSWERS = Path(tempfile.mkdtemp(prefix="benchdb-scale-answers-"))
RUNS = 20
HARDWARE = [
    {"kind": "cpu", "vendor": "bench", "device_name": f"Fleet CPU {h}", "memory_bytes": 2**35} for h in range(4)
]


def write_run(folder: Path, day: int, series: list[tuple[int, int, int]], scale: float = 1.0) -> dict[int, str]:
    """One night: on each hardware its own run (tagged ``night-DAY``), a file per (model, batch
    size, hardware) in ``series``. Returns each hardware's run id."""
    runs = {
        h: {
            "run_id": contract.new_run_id(),
            "host": f"fleet-{h}",
            "benchdb_version": "bench",
            "started_at": f"2026-{1 + day // 28:02d}-{1 + day % 28:02d}T02:{h:02d}:00+00:00",
            "git_commit": f"{day:040x}",
            "software": {},
            "config": {},
            "tags": [f"night-{day}"],
        }
        for h in sorted({h for _, _, h in series})
    }
    rng = np.random.default_rng(day)
    it = np.arange(PER_FILE, dtype=np.int32)
    for m, bs, h in series:
        run = runs[h]
        model = f"matmul:{64 * (1 + m)}"
        meta = contract.build_metadata(
            run=run,
            hardware=HARDWARE[h],
            model={"model_id": model},
            scenario={
                "model_id": model,
                "backend": "numpy",
                "device": "cpu",
                "mode": "eager",
                "precision": "fp32",
                "batch_size": bs,
                "input_shape": "n=64",
                "status": "ok",
                "validity": "valid",
                "validity_reasons": [],
                "primary_metric": "latency_s",
                "timing_method": "host_clock",
                "options": {"threads": 1},
            },
        )
        table = contract.columns_table(
            meta,
            {
                "metric": ["latency_s"] * PER_FILE,
                "unit": ["s"] * PER_FILE,
                "iteration": it,
                "t_offset_s": it * 1e-3,
                "value": rng.lognormal(-7 + 0.01 * m + 0.1 * h, 0.05, PER_FILE) * scale * bs,
            },
        )
        contract.write_scenario(folder / f"m{m}-b{bs}-h{h}.parquet", meta, table)
    return {h: run["run_id"] for h, run in runs.items()}


def fleet(samples: int) -> list[tuple[int, int, int]]:
    """The series of a run: (model, batch size, hardware), as many as make ``samples`` over RUNS runs."""
    per_run = max(1, samples // PER_FILE // RUNS)
    out = []
    for i in range(per_run):
        out.append((i // 16, [1, 2, 4, 8][(i // 4) % 4], i % 4))
    return out


def folder_bytes(path: Path) -> int:
    """Bytes of every file under ``path`` (the warehouse file, its samples folder, a writer's copy)."""
    total = 0
    for root, _, names in os.walk(path):
        for name in names:
            try:
                total += os.stat(os.path.join(root, name)).st_size
            except OSError:
                pass
    return total


def _hwm_kib(pid: int) -> int:
    """The process's own peak resident memory (VmHWM, per address space: unlike getrusage's
    ru_maxrss it does not start from this large process's size at fork)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def measure(args: list[str], watch: Path | None = None) -> tuple[float, float, int]:
    """(seconds, peak RSS in MiB, peak bytes of ``watch``'s folder) of `python -m benchdb ARGS`."""
    peak = {"disk": 0, "hwm": 0}
    stop = threading.Event()
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "benchdb", *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, "BENCHDB_ANSWERS_DIR": str(ANSWERS)},
    )

    def poll():
        # A walk of thousands of parts takes milliseconds: resting 4x its time keeps the watcher
        # under a fifth of a core, off the measured command's (on 2 cores, a busy watcher slowed
        # `db compact` at 1B samples).
        while not stop.is_set():
            t0 = time.perf_counter()
            if watch is not None:
                peak["disk"] = max(peak["disk"], folder_bytes(watch))
            peak["hwm"] = max(peak["hwm"], _hwm_kib(proc.pid))
            time.sleep(max(0.002, 4 * (time.perf_counter() - t0)))

    t = threading.Thread(target=poll, daemon=True)
    t.start()
    _, err = proc.communicate()
    took = time.perf_counter() - start
    stop.set()
    t.join()
    if proc.returncode not in (0, 1, 3):
        raise SystemExit(f"benchdb {' '.join(args)} failed: {err.decode()[-400:]}")
    return took, peak["hwm"] / 1024, peak["disk"]


def one_size(work: Path, samples: int, *, compact: bool = True) -> dict[str, tuple[float, float]]:
    from benchdb.warehouse import Warehouse

    home = work / f"s{samples}"
    shutil.rmtree(home, ignore_errors=True)
    data, db = home / "results", home / "wh" / "benchdb.duckdb"
    db.parent.mkdir(parents=True)
    series = fleet(samples)
    t = time.perf_counter()
    nights = [write_run(data / f"run{day:02d}", day, series) for day in range(RUNS)]
    wrote = time.perf_counter() - t
    t = time.perf_counter()
    for day in range(RUNS):  # a fleet ingests each night's run as it lands
        Warehouse(db).ingest([data / f"run{day:02d}"])
    built = time.perf_counter() - t
    size = folder_bytes(db.parent)
    with Warehouse(db).reading() as con:
        held = con.execute("SELECT count(*) FROM samples").fetchall()[0][0]
    print(
        f"\n{held:,} samples ({len(series)} series x {RUNS} nights): files written in {wrote:.0f} s, ingested "
        f"in {built:.0f} s; warehouse {size / 2**20:,.0f} MiB",
        flush=True,
    )
    out: dict[str, tuple[float, float]] = {}
    measure(["query", "SELECT 1", "--db", str(db)])  # the catalog of benchdb's views, once
    one = home / "one"
    write_run(one, RUNS, series[:1], scale=1.0)
    took, rss, disk = measure(["ingest", str(one), "--db", str(db)], watch=db.parent)
    out["ingest one file"] = (took, rss)
    out["peak disk / warehouse"] = (disk / size, 0.0)
    out["no-op re-ingest"] = measure(["ingest", str(one), "--db", str(db)])[:2]
    run = home / "newrun"
    write_run(run, RUNS + 1, series[:20], scale=1.2)  # 20 series step up by 20 %
    out["ingest a run of 20 (change points)"] = measure(["ingest", str(run), "--db", str(db)])[:2]
    out["report --optimal-hardware"] = measure(["report", "--optimal-hardware", "--db", str(db), "--format", "md"])[:2]
    out["check run vs run (one machine)"] = measure(
        ["check", "--baseline", f"run:{nights[-2][0]}", "--candidate", f"run:{nights[-1][0]}", "--db", str(db)]
    )[:2]
    out[f"check night {RUNS - 2} vs {RUNS - 1}"] = measure(
        ["check", "--baseline", f"tag:night-{RUNS - 2}", "--candidate", f"tag:night-{RUNS - 1}", "--db", str(db)]
    )[:2]
    if compact:
        parts_before = len(list((db.parent / f"{db.name}.samples").glob("gen=*/*.parquet")))
        size = folder_bytes(db.parent)
        took, rss, disk = measure(["db", "compact", "--db", str(db)], watch=db.parent)
        out[f"db compact ({parts_before} parts)"] = (took, rss)
        out["peak disk of db compact / warehouse"] = (disk / size, 0.0)
    for name, (s, r) in out.items():
        if name.startswith("peak disk"):
            print(f"  {name:<40} {s:8.2f}x", flush=True)
        else:
            print(f"  {name:<40} {s:8.2f} s  peak RSS {r:7.0f} MiB", flush=True)
    shutil.rmtree(data, ignore_errors=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000000,10000000,100000000")
    ap.add_argument("--huge", action="store_true", help="also 1B samples (about 10 GB of warehouse)")
    ap.add_argument("--workdir", type=Path, default=None)
    ap.add_argument(
        "--skip-compact",
        action="store_true",
        help="leave out `db compact` (to measure a benchdb from before it, on PYTHONPATH)",
    )
    ap.add_argument(
        "--small",
        action="store_true",
        help="3 nights of 1,000-sample files, 3,000 and 6,000 samples: checks that the script works",
    )
    args = ap.parse_args()
    if args.small:
        global PER_FILE, RUNS
        PER_FILE, RUNS, args.sizes = 1_000, 3, "3000,6000"
    sizes = [int(s) for s in args.sizes.split(",")] + ([1_000_000_000] if args.huge else [])
    work = Path(args.workdir or tempfile.mkdtemp(prefix="benchdb-scale-"))
    results = {s: one_size(work, s, compact=not args.skip_compact) for s in sizes}
    first = sizes[0]
    print(f"\ngrowth against {first:,} samples (time; peak RSS):")
    print(f"{'':<40}" + "".join(f"{s:>22,}" for s in sizes))
    for i, name in enumerate(results[first]):
        cells = []
        for s in sizes:
            _, (t, r) = list(results[s].items())[i]
            t0, r0 = results[first][name]
            cells.append(f"{t:.2f}x" if name.startswith("peak disk") else f"{t / t0:5.2f}x; {r / r0:4.2f}x")
        print(f"{name.split(' (')[0]:<40}" + "".join(f"{c:>22}" for c in cells))
    print(
        "goals: ingest at 100M <= 2x its 1M cost; peak disk <= 1.1x the warehouse; report and check < 1 s "
        "at 100M; peak RSS < 4 GB"
    )
    shutil.rmtree(work, ignore_errors=True)
    shutil.rmtree(ANSWERS, ignore_errors=True)


if __name__ == "__main__":
    main()

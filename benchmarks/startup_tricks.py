"""What each start-up trick of benchdb.startup and benchdb.store.memo saves a user, measured in one run.

    python benchmarks/startup_tricks.py [--rounds 15] [--small]

Interleaved, in new processes, medians of --rounds each:
- DuckDB's engine alone (``import _duckdb``, what ``benchdb.startup.duckdb`` is) against the
  package (``import duckdb``): the cost every reading command (query, report, check) would pay;
- the end of a process that imported torch and transformers and ran a tiny model, by a normal
  interpreter exit against ``benchdb.startup.exit_now`` (atexit handlers, flush, ``os._exit``): the
  cost every ``benchdb run`` / ``quickstart`` would pay;
- ``benchdb report --optimal-hardware`` on a small warehouse, answered from benchdb.store.memo's cache
  against computed (``BENCHDB_NO_CACHE=1``), and ``benchdb query`` (never cached).
Each line prints both medians and the saving, so a trick that saves nothing shows it. --small
checks that the script works: 1 round, and the torch process imports torch alone and runs a
torch.nn.Linear (importing transformers took most of a --small run).
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

PY = sys.executable
TINY = (
    "import time, torch, transformers\n"
    "from transformers import BertConfig, BertModel\n"
    "m = BertModel(BertConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=37))\n"
    "m(torch.ones(1, 8, dtype=torch.long))\n"
    "print(time.perf_counter(), flush=True)\n"
)
TINY_SMALL = (
    "import time, torch\nm = torch.nn.Linear(32, 32)\nm(torch.ones(1, 32))\nprint(time.perf_counter(), flush=True)\n"
)


def _wall(cmd: list[str], env: dict | None = None) -> float:
    t = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True, env=env)
    return time.perf_counter() - t


def _teardown(code: str) -> float:
    """Seconds from the script's last line to the process's end."""
    out = subprocess.run([PY, "-c", code], check=True, capture_output=True, text=True)
    return time.perf_counter() - float(out.stdout.strip().splitlines()[-1])


def _warehouse(folder: Path) -> Path:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from conftest import make_meta, make_run, write_file  # the test suite's contract-file builders

    from benchdb.ingest import ingest

    (folder / "r").mkdir()
    for day in range(1, 4):
        run = make_run(started_at=f"2026-11-0{day}T10:00:00+00:00")
        for bs in (1, 4, 8):
            write_file(folder / "r", make_meta(run, batch_size=bs), name=f"{day}-{bs}.parquet")
    db = folder / "w.duckdb"
    ingest([folder / "r"], db)
    return db


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--small", action="store_true", help="1 round, a torch-only process: checks that the script works")
    args = ap.parse_args()
    tiny = TINY
    if args.small:
        args.rounds, tiny = 1, TINY_SMALL
    work = Path(tempfile.mkdtemp(prefix="benchdb-startup-"))
    db = _warehouse(work)
    cached = {**os.environ, "BENCHDB_ANSWERS_DIR": str(work / "answers")}
    computed = {**os.environ, "BENCHDB_NO_CACHE": "1"}
    report = [PY, "-m", "benchdb", "report", "--optimal-hardware", "--db", str(db)]
    subprocess.run(report, check=True, capture_output=True, env=cached)  # fills the cache
    pairs = {
        "DuckDB import (engine alone vs package)": (
            lambda: _wall([PY, "-c", "import _duckdb"]),
            lambda: _wall([PY, "-c", "import duckdb"]),
        ),
        "end of a torch process (exit_now vs normal exit)": (
            lambda: _teardown(tiny + "from benchdb.startup import exit_now\nexit_now(0)\n"),
            lambda: _teardown(tiny),
        ),
        "benchdb report (cached answer vs computed)": (lambda: _wall(report, cached), lambda: _wall(report, computed)),
    }
    times: dict[str, tuple[list[float], list[float]]] = {k: ([], []) for k in pairs}
    query = []
    for _ in range(args.rounds):
        for name, (trick, plain) in pairs.items():
            times[name][0].append(trick())
            times[name][1].append(plain())
        query.append(_wall([PY, "-m", "benchdb", "query", "SELECT count(*) FROM results", "--db", str(db)]))
    print(f"{args.rounds} rounds, interleaved; medians")
    for name, (trick, plain) in times.items():
        a, b = statistics.median(trick) * 1000, statistics.median(plain) * 1000
        print(f"{name:50s} with {a:7.1f} ms  without {b:7.1f} ms  saves {b - a:7.1f} ms ({b / a:.2f}x)")
    print(f"{'benchdb query (for scale)':50s} {statistics.median(query) * 1000:7.1f} ms")


if __name__ == "__main__":
    main()

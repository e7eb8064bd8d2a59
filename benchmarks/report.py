"""Report latency on a large warehouse, against a plain scan of the same results in the same run.

    python benchmarks/report.py [--models 50] [--hardware 8] [--samples-per-result 1000] [--command-runs 15] [--small]

Builds a warehouse of models x hardware x 5 backends x 5 batch sizes results (default 10,000)
with samples-per-result raw samples each (default 10M), then times, warm:
- `benchdb report --optimal-hardware` and `--matrix` in-process (the library call);
- the full commands `benchdb report --optimal-hardware`, `query` and `check` (a new process: Python
  start-up and imports included; `report` and `check` both answered from benchdb.store.memo, as every call
  after the first on an unchanged warehouse is; computed with BENCHDB_NO_CACHE=1, nothing cached, not
  even benchdb's catalog of its own views, which every such command builds again; and computed as the
  first call after a write is, its answer gone but the catalog (built once per code version) kept),
  interleaved with `python -c pass`, `import duckdb, click`, the
  floor of a report (import click, DuckDB's engine `_duckdb` and Jinja, open the warehouse) and
  `benchdb --help`; medians (goal: < 150 ms for report / query / check);
- a baseline: a read-only connection fetching every row of `results` (SELECT *).
Goal: each report < 1 s.

Each series of this warehouse was measured in one run, so `check --baseline latest~1 --candidate latest`
answers "nothing to compare" (exit 2): its time is check's start, both selections and that answer, not a
gate over samples. benchmarks/scale.py times the gate itself (run against run, night against night).
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

import duckdb
from click.testing import CliRunner

from benchdb.cli import main as cli
from benchdb.store import database, snapshot


def best_of(fn, n: int = 5) -> float:
    times = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times), statistics.median(times)


def build(
    db: Path, models: int, hardware: int, samples_per_result: int, samples_sql: str = "report_fixture_samples.sql"
) -> tuple[int, int]:
    """The synthetic warehouse of report_fixture.sql at ``db``: (results, samples); its samples from
    ``samples_sql``, a file beside this one.

    Written as ingest writes: one write session (benchdb.store.snapshot), its catalog rows from
    report_fixture.sql and its samples (report_fixture_samples.sql) as a part of the samples folder
    (benchdb.store.parts), published with the catalog. One part holds every sample, as after
    `benchdb db compact`."""
    here = Path(__file__).parent
    params = {"models": models, "hardware": hardware, "samples_per_result": samples_per_result}

    def statements(name: str) -> list[str]:
        lines = (here / name).read_text().splitlines()
        text = "\n".join(line for line in lines if not line.lstrip().startswith("--"))
        return [s for s in text.split(";") if s.strip()]

    def bound(stmt: str) -> dict:
        return {k: v for k, v in params.items() if f"${k}" in stmt}

    with snapshot.write_session(db) as session:
        for stmt in statements("report_fixture.sql"):
            session.con.execute(stmt, bound(stmt))
        (samples,) = statements(samples_sql)
        session.parts.write(session.con, samples, bound(samples))
        n_results = session.con.execute("SELECT count(*) FROM results").fetchall()[0][0]
    con, _ = database.open_readonly(db)
    try:
        n_samples = con.execute("SELECT count(*) FROM samples").fetchall()[0][0]
    finally:
        con.close()
    return n_results, n_samples


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", type=int, default=50)
    ap.add_argument("--hardware", type=int, default=8)
    ap.add_argument("--samples-per-result", type=int, default=1000)
    ap.add_argument("--command-runs", type=int, default=15, help="runs of each full command (median)")
    ap.add_argument(
        "--small",
        action="store_true",
        help="a small warehouse (10 models, 4 hardware, 10 samples a "
        "result), 2 in-process calls and 1 command run: checks that the script works",
    )
    args = ap.parse_args()
    if args.small:
        args.models, args.hardware, args.samples_per_result, args.command_runs = 10, 4, 10, 1
    work = Path(tempfile.mkdtemp(prefix="benchdb-report-"))
    db = work / "big.duckdb"
    # benchdb's answers and catalog checks, the build's write included, kept in this run's folder
    os.environ["BENCHDB_ANSWERS_DIR"] = str(work / "answers")
    t = time.perf_counter()
    n_results, n_samples = build(db, args.models, args.hardware, args.samples_per_result)
    print(f"warehouse: {n_results:,} results, {n_samples:,} samples, built in {time.perf_counter() - t:.1f} s")

    def baseline():
        c = duckdb.connect(str(db), read_only=True)
        c.execute("SELECT * FROM results").fetchall()
        c.close()

    runner = CliRunner()
    # in-process: the report computed each time (not answered from benchdb.store.memo's cache)
    os.environ["BENCHDB_NO_CACHE"] = "1"

    def report(flag):
        def go():
            r = runner.invoke(cli, ["report", flag, "--db", str(db), "--format", "md"])
            assert r.exit_code == 0, r.output

        return go

    tries = 2 if args.small else 5  # each in-process report is computed afresh: 0.2-0.6 s even here
    base_best, base_med = best_of(baseline, tries)
    print(
        f"baseline SELECT * FROM results (read-only connection): best {base_best * 1e3:7.1f} ms, "
        f"median {base_med * 1e3:7.1f} ms"
    )
    for flag in ("--optimal-hardware", "--matrix"):
        report(flag)()  # warm
        best, med = best_of(report(flag), tries)
        print(
            f"report {flag:<19}: in-process best {best * 1e3:7.1f} ms, median {med * 1e3:7.1f} ms "
            f"({med / base_med:4.1f}x baseline)"
        )

    # Full commands as users run them (new process: start-up and imports included), warm, interleaved
    # with the interpreter's own start-up and `import duckdb, click` (the floor) in the same run.
    py = [sys.executable]
    commands = {
        "python -c pass": py + ["-c", "pass"],
        "python -c 'import duckdb, click'": py + ["-c", "import duckdb, click"],
        # what a report command cannot do without: the interpreter, click, DuckDB's engine, Jinja and
        # opening the warehouse (read-only), with no query run and nothing rendered
        "floor: click, _duckdb, jinja2, connect": py
        + ["-c", f"import click, _duckdb, jinja2; _duckdb.connect({str(db)!r}, read_only=True).close()"],
        "benchdb --help": py + ["-m", "benchdb", "--help"],
        "benchdb report --optimal-hardware": py + ["-m", "benchdb", "report", "--optimal-hardware", "--db", str(db)],
        "benchdb query": py + ["-m", "benchdb", "query", "SELECT count(*) FROM results_latest", "--db", str(db)],
        # the fixture's runs share no series: check exits 2 (nothing to compare) after selecting both sides
        "benchdb check": py
        + ["-m", "benchdb", "check", "--baseline", "latest~1", "--candidate", "latest", "--db", str(db)],
    }
    # Each reading command also computed afresh (BENCHDB_NO_CACHE=1: as the first call after a write),
    # beside the same command answered from benchdb.store.memo (this unchanged warehouse asked the same).
    fresh = {
        f"{name} (computed)": argv for name, argv in commands.items() if name.split()[1:2] in (["report"], ["check"])
    }
    # ... and computed as the first call after a write is: no answer kept for this state of the
    # warehouse, but benchdb's catalog of its own views kept (built once per code version; with
    # BENCHDB_NO_CACHE=1 every command builds it again) and the catalog check of this state passed
    # (benchdb's write checks the catalog it publishes: benchdb.store.snapshot)
    after_write = {
        f"{name} (first after a write)": argv
        for name, argv in commands.items()
        if name.split()[1:2] in (["report"], ["check"])
    }
    commands.update(fresh)
    commands.update(after_write)
    # As installed: pip writes bytecode (.pyc) at install time. A PYTHONDONTWRITEBYTECODE in this
    # shell (this VM sets it) would recompile benchdb's modules from source in every command (~26 ms
    # of a start-up): it is dropped here, and the uncounted first round writes the .pyc files.
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "BENCHDB_NO_CACHE")}
    times: dict[str, list[float]] = {k: [] for k in commands}
    # --small's uncounted first round runs only the commands answered from the memo, which it fills:
    # what the counted round then measures is the same, and each other command costs a process
    memo = {name for name in commands if name.split()[1:2] in (["report"], ["check"])} - set(fresh) - set(after_write)
    for i in range(args.command_runs + 1):
        for name, argv in commands.items():
            if i == 0 and args.small and name not in memo:
                continue
            if name in after_write:  # its own answer (benchdb.store.memo names it KIND-KEY.pickle)
                for kept in (work / "answers").glob(f"{name.split()[1]}-*.pickle"):
                    kept.unlink()
            t = time.perf_counter()
            r = subprocess.run(
                argv, capture_output=True, env={**env, "BENCHDB_NO_CACHE": "1"} if name in fresh else env
            )
            if i:  # the first round warms caches
                times[name].append(time.perf_counter() - t)
            assert r.returncode in (0, 2), (name, r.stderr[-500:])
    for name, ts in times.items():
        goal = (
            " (goal < 150 ms)"
            if name.split()[1:2] in (["report"], ["query"], ["check"]) and name not in fresh and name not in after_write
            else ""
        )
        print(
            f"full command {name:<40}: median {statistics.median(ts) * 1e3:7.1f} ms, "
            f"best {min(ts) * 1e3:7.1f} ms over {len(ts)}{goal}"
        )
    for name in fresh:
        asked = name.removesuffix(" (computed)")
        print(
            f"{asked}: answered from the memo / computed = "
            f"{statistics.median(times[asked]) / statistics.median(times[name]):.2f}x (medians, same run)"
        )
    for name in after_write:
        asked = name.removesuffix(" (first after a write)")
        print(
            f"{asked}: first after a write / computed with nothing cached = "
            f"{statistics.median(times[name]) / statistics.median(times[asked + ' (computed)']):.2f}x "
            "(medians, same run)"
        )


if __name__ == "__main__":
    main()

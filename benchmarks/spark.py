"""Spark against DuckDB on the same partitioned export: where does Spark start to pay off?

    python benchmarks/spark.py [--samples 10000000] [--master local[*]] [--rounds 3] [--small]

Builds the synthetic warehouse of benchmarks/report.py (models x hardware x 5 backends x 5
batch sizes results, --samples raw samples in all, default 10M), exports it with
`benchdb export --partitioned`, then times, warm, median of --rounds:
- DuckDB over the warehouse file: every view (SELECT count(*)), the --all report, and the ingest
  statistics recomputed from every raw sample (queries/metric_stats.sql);
- the same on Spark (--master) over the export: tables and translated views registered, then the
  same three workloads;
and prints each time and the ratio Spark / DuckDB (> 1: DuckDB is faster). The export time is
printed too. --small (checks that the script works): 20k samples (4 models x 2 hardware), 1 round,
2 views, the matrix report alone, each timed on its first call (Spark takes minutes for the rest on
2 cores; its time goes to planning and starting jobs, which a larger warehouse does not exercise more).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
import warnings
from pathlib import Path

from report import build as build_warehouse


def _median_time(fn, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=10_000_000, help="raw samples in all")
    ap.add_argument("--models", type=int, default=50)
    ap.add_argument("--hardware", type=int, default=8)
    ap.add_argument("--master", default="local[*]")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--small", action="store_true", help="20k samples, 1 round: checks that the script works")
    args = ap.parse_args()
    if args.small:
        args.samples, args.models, args.hardware, args.rounds = 20_000, 4, 2, 1
    if not (os.environ.get("JAVA_HOME") or shutil.which("java")):
        # Spark's peer here is the JVM it runs on: without one there is nothing to compare
        print("Spark: skipped (no java on PATH and no JAVA_HOME: install a JRE 17, e.g. openjdk-17-jre-headless)")
        return

    from benchdb import sql
    from benchdb.reports import build
    from benchdb.spark import SparkConnection, export_partitioned, register, translate
    from benchdb.spark.session import session
    from benchdb.store import database

    work = Path(tempfile.mkdtemp(prefix="benchdb-spark-"))
    db = work / "big.duckdb"
    per_result = max(1, args.samples // (args.models * args.hardware * 25))
    t = time.perf_counter()
    n_results, n_samples = build_warehouse(db, args.models, args.hardware, per_result)
    print(f"warehouse: {n_results:,} results, {n_samples:,} samples, built in {time.perf_counter() - t:.1f} s")

    out = work / "export"
    t = time.perf_counter()
    s = export_partitioned(db, str(out))
    print(f"export --partitioned: {s.results:,} results, {s.samples:,} samples in {time.perf_counter() - t:.1f} s")

    skipped: list = []
    views = [v.name for v in translate.views(skipped)]
    kinds = list(build.ALL)
    if args.small:
        views, kinds = views[:2], ["matrix"]
    report = "report --all" if len(kinds) > 1 else f"report --{kinds[0]}"
    stage = "SELECT result_id AS scenario_id, metric, unit, value FROM samples"
    stats = sql.metric_stats_query()

    con, _ = database.open_readonly(db)
    con.execute(f"CREATE TEMP VIEW stage_samples AS {stage}")
    duck = {
        "views": lambda: [con.execute(f"SELECT count(*) FROM {v}").fetchall() for v in views],
        report: lambda: build.build(con, "x", kinds, build.Filters()),
        "stats from samples": lambda: con.execute(f"SELECT count(*), sum(median) FROM ({stats})").fetchall(),
    }
    spark = session(app="benchdb-bench", master=args.master)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        register(spark, str(out))
    spark.sql(stage).createOrReplaceTempView("stage_samples")
    spark_stats = translate.translate_query(stats, "metric_stats")
    sc = SparkConnection(spark)
    sp = {
        "views": lambda: [spark.sql(f"SELECT count(*) FROM {v}").collect() for v in views],
        report: lambda: build.build(sc, "x", kinds, build.Filters()),
        "stats from samples": lambda: spark.sql(f"SELECT count(*), sum(median) FROM ({spark_stats})").collect(),
    }
    print(f"{'workload':<22}{'DuckDB s':>10}{'Spark s':>10}{'Spark/DuckDB':>14}")
    for name in duck:
        if not args.small:
            duck[name]()  # warm-up (and Spark's first planning)
            sp[name]()
        d = _median_time(duck[name], args.rounds)
        p = _median_time(sp[name], args.rounds)
        print(f"{name:<22}{d:>10.2f}{p:>10.2f}{p / d:>14.1f}")
    print(
        f"({len(views)} views; left out on Spark: {', '.join(v for v, _ in skipped) or 'none'}; "
        f"master {args.master}; {args.rounds} round(s), medians{'; first calls, not warm' if args.small else ''})"
    )
    con.close()
    spark.stop()


if __name__ == "__main__":
    main()

"""Ingest speed: `benchdb ingest` against a plain DuckDB CTAS of the same files, same run.

    python benchmarks/ingest.py [--samples 10000000] [--files 500] [--rounds 3] [--workdir DIR] [--small]

Prints samples/s for both (medians of interleaved rounds), their ratio (goals: >= 1.25x the raw
DuckDB rate for 2M samples in 1,000 small files, >= 1.6x for 10M samples in 500 files), and the
time of a no-op re-ingest of the unchanged tree (goal: < 1 s). Also shown, not a goal: the same
CTAS with `preserve_insertion_order = false`, the setting benchdb's ingest loads rows with.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import duckdb
import numpy as np

from benchdb.ingest import ingest
from benchdb.schema import contract

#: The ratio ingest / raw rate each measured size must reach: (samples, files) -> goal.
GOALS = {(2_000_000, 1_000): 1.25, (10_000_000, 500): 1.6}

HARDWARE = {"kind": "cpu", "vendor": "bench", "device_name": "Benchmark CPU", "memory_bytes": 2**34}


def generate(folder: Path, samples: int, files: int) -> list[Path]:
    per_file = samples // files
    rng = np.random.default_rng(0)
    run = {
        "run_id": contract.new_run_id(),
        "started_at": "2026-11-21T00:00:00+00:00",
        "host": "bench",
        "benchdb_version": "bench",
        "software": {},
        "config": {},
    }
    out = []
    for i in range(files):
        model = f"matmul:{64 * (1 + i % 25)}"
        meta = contract.build_metadata(
            run=run,
            hardware=HARDWARE,
            model={"model_id": model},
            scenario={
                "model_id": model,
                "backend": "numpy",
                "device": "cpu",
                "mode": "eager",
                "precision": "fp32",
                "batch_size": 1 + i // 25,
                "input_shape": "n=64",
                "status": "ok",
                "validity": "valid",
                "validity_reasons": [],
                "primary_metric": "latency_s",
                "timing_method": "host_clock",
                "options": {"threads": 1},
            },
        )
        it = np.arange(per_file, dtype=np.int32)
        table = contract.columns_table(
            meta,
            {
                "metric": ["latency_s"] * per_file,
                "unit": ["s"] * per_file,
                "iteration": it,
                "t_offset_s": it * 1e-3,
                "value": rng.lognormal(-7, 0.1, per_file),
            },
        )
        out.append(contract.write_scenario(folder / f"f{i:05d}.parquet", meta, table))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=10_000_000)
    ap.add_argument("--files", type=int, default=500)
    ap.add_argument("--workdir", type=Path, default=None)
    ap.add_argument("--rounds", type=int, default=3, help="interleaved raw/benchdb rounds (median)")
    ap.add_argument(
        "--small", action="store_true", help="100,000 samples in 20 files, 1 round: checks that the script works"
    )
    args = ap.parse_args()
    if args.small:
        args.samples, args.files, args.rounds = 100_000, 20, 1
    work = Path(args.workdir or tempfile.mkdtemp(prefix="benchdb-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    data = work / "results"
    try:
        t = time.perf_counter()
        files = generate(data, args.samples, args.files)
        n = args.samples // args.files * args.files
        print(
            f"generated {n:,} samples in {len(files)} files ({sum(f.stat().st_size for f in files) / 2**20:.0f} MiB)"
            f" in {time.perf_counter() - t:.1f} s"
        )
        for f in files:  # same warm page cache for both contenders
            f.read_bytes()

        # Interleaved rounds (raw, benchdb, raw, benchdb, ...) so both see the same machine; medians.
        raws, ingests, unordered = [], [], []
        for _ in range(args.rounds):
            raw_db = work / "raw.duckdb"
            raw_db.unlink(missing_ok=True)
            t = time.perf_counter()
            con = duckdb.connect(str(raw_db))
            con.execute(
                "CREATE TABLE samples AS SELECT * FROM read_parquet($files)", {"files": [str(f) for f in files]}
            )
            con.close()
            raws.append(time.perf_counter() - t)

            # The same CTAS with preserve_insertion_order = false, the setting benchdb's ingest
            # uses (its rows load in parallel, in no particular order): shown, not the goal's baseline.
            raw_db.unlink(missing_ok=True)
            t = time.perf_counter()
            con = duckdb.connect(str(raw_db))
            con.execute("SET preserve_insertion_order = false")
            con.execute(
                "CREATE TABLE samples AS SELECT * FROM read_parquet($files)", {"files": [str(f) for f in files]}
            )
            con.close()
            unordered.append(time.perf_counter() - t)

            db = work / "benchdb.duckdb"
            db.unlink(missing_ok=True)
            t = time.perf_counter()
            summary = ingest([data], db)
            ingests.append(time.perf_counter() - t)
            assert summary.new == len(files) and summary.samples == n, summary
        raw_s, ingest_s = statistics.median(raws), statistics.median(ingests)
        ratios = sorted(raw / ing for raw, ing in zip(raws, ingests, strict=True))
        goal = GOALS.get((args.samples, args.files))
        goal_text = (
            f"goal >= {goal}x"
            if goal is not None
            else "goals: >= 1.25x at 2M samples in 1,000 files, >= 1.6x at 10M samples in 500 files"
        )

        t = time.perf_counter()
        again = ingest([data], db)
        reingest_s = time.perf_counter() - t
        assert again.new == 0 and again.skipped == len(files)

        # An ingest into an existing warehouse writes a private copy and swaps it in (readers never
        # block it): its cost against a plain copy of the warehouse file, in the same run.
        one = generate(work / "more", 20_000, 1)
        t = time.perf_counter()
        more = ingest([work / "more"], db)
        incremental_s = time.perf_counter() - t
        assert more.new == 1
        t = time.perf_counter()
        shutil.copyfile(db, work / "copy.duckdb")
        copy_s = time.perf_counter() - t
        size_mib = db.stat().st_size / 2**20

        print(f"raw DuckDB CTAS read_parquet : {raw_s:7.2f} s  {n / raw_s / 1e6:6.2f} M samples/s")
        un_s = statistics.median(unordered)
        print(
            f"  same, insertion order off  : {un_s:7.2f} s  {n / un_s / 1e6:6.2f} M samples/s"
            "  (not the goal's baseline)"
        )
        print(
            f"benchdb ingest               : {ingest_s:7.2f} s  {n / ingest_s / 1e6:6.2f} M samples/s"
            f"  (validation, dedupe, statistics, {len(files)} results)"
        )
        print(
            f"ratio ingest / raw rate      : {raw_s / ingest_s:7.2f}x  (medians of {args.rounds} interleaved rounds;"
            f" per round {', '.join(f'{x:.2f}' for x in ratios)}; {goal_text})"
        )
        print(f"no-op re-ingest              : {reingest_s:7.3f} s  (goal < 1 s)")
        print(
            f"ingest of 1 new file ({len(one)} x 20,000 samples) into the {size_mib:.0f} MiB warehouse: "
            f"{incremental_s:.3f} s; a plain copy of the warehouse file: {copy_s:.3f} s "
            f"({copy_s / incremental_s:.0%} of it)"
        )
    finally:
        if args.workdir is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

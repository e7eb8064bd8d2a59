"""Importing and ingesting an MLPerf Inference results tree: `benchdb import mlperf` then `benchdb ingest`.

    python benchmarks/import_mlperf.py TREE [--keep DIR]
    python benchmarks/import_mlperf.py --small        # the test suite's v5.1 and v6.1 excerpts

TREE is a results repository or a part of it (e.g. a checkout of mlcommons/inference_results_v5.1,
or its closed/ folder). Each command runs as a user runs it, in its own process; the script prints
the wall time of each, the import's summary line (runs, systems, skipped compliance runs, table
checks) and the warehouse's counts, then times a second import and ingest of the same tree (which
should write and load nothing). The baseline, measured in the same run: a bare Python process that
reads every file the import reads (the logs, systems JSONs and summary tables) and parses the JSON
ones; the script prints import + ingest over it. Goal (issue 47): the v5.1 closed tree imported and
ingested in under 10 s on the development VM. No absolute assertion: the figures depend on the machine.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def timed(*args: str) -> tuple[float, subprocess.CompletedProcess]:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "benchdb", *args], capture_output=True, text=True)
    return time.perf_counter() - start, done


#: The bare baseline: read every file an import of the trees reads, parse the JSON ones.
RAW_READ = """
import json, sys
from pathlib import Path
names = ("mlperf_log_summary.txt", "mlperf_log_detail.txt", "accuracy.txt", "result_summary.json",
         "summary_results.json", "summary.json", "summary.csv")
n = 0
for tree in sys.argv[1:]:
    for p in Path(tree).rglob("*"):
        if p.is_file() and (p.name in names or p.parent.name == "systems" and p.suffix == ".json"):
            data = p.read_bytes()
            n += 1
            if p.suffix == ".json":
                try:
                    json.loads(data)
                except ValueError:
                    pass
print(n)
"""


def raw_read(trees: list[str]) -> tuple[float, int]:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", RAW_READ, *trees], capture_output=True, text=True, check=True)
    return time.perf_counter() - start, int(done.stdout.strip() or 0)


def last_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tree", nargs="*", help="results repositories or parts of them")
    parser.add_argument("--keep", default=None, help="write the contract files and warehouse here (kept)")
    parser.add_argument(
        "--small",
        action="store_true",
        help="TREE: the excerpts of v5.1 and v6.1 in tests/fixtures (checks that the script works)",
    )
    args = parser.parse_args()
    if args.small and not args.tree:
        fixture = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "interop" / "mlperf_repo"
        args.tree = [str(fixture / "v5.1"), str(fixture / "v6.1")]
    if not args.tree:
        parser.error("give a results TREE (or --small)")
    work = Path(args.keep or tempfile.mkdtemp(prefix="benchdb-mlperf-"))
    out, db = work / "imported", work / "bench.duckdb"
    t_raw, n_files = raw_read(args.tree)
    print(f"baseline: a bare process reading the {n_files} files an import reads: {t_raw:.2f} s")
    first = 0.0
    for label in ("first", "again"):
        t_import, imp = timed("import", "mlperf", *args.tree, "--out", str(out))
        errors = [line for line in imp.stderr.splitlines() if line.startswith("benchdb: error:")]
        t_ingest, ing = timed("ingest", str(out), "--db", str(db))
        print(
            f"{label}: import {t_import:.2f} s (exit {imp.returncode}, {len(errors)} error line(s)), "
            f"ingest {t_ingest:.2f} s (exit {ing.returncode}), total {t_import + t_ingest:.2f} s"
        )
        print(f"  import: {last_line(imp.stdout)}")
        print(f"  ingest: {last_line(ing.stdout + ing.stderr)}")
        first = first or t_import + t_ingest
    print(f"ratio (import + ingest) / bare read: {first / t_raw:.2f}x")
    _, counts = timed(
        "query",
        "SELECT (SELECT count(*) FROM results) AS results, (SELECT count(*) FROM hardware) "
        "AS systems, (SELECT count(*) FROM source_statistics) AS statistics",
        "--db",
        str(db),
    )
    print(counts.stdout.strip())
    print(f"files in {work}")


if __name__ == "__main__":
    main()

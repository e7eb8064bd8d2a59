"""What the openai backend's end-to-end tests run with: a quick stopping rule, the stub server as
the server command, and the footers of the files a run wrote; shared by
tests/backends/test_openai.py and test_openai_sweep.py."""

from __future__ import annotations

import sys
from pathlib import Path

from benchdb.schema import contract

#: --min-iters 10: TTFT p90 needs 10 completed requests (bdb_pct_min_n); at fewer a point's p90 is
#: unknown and the SLO answer fails closed, which a slow machine reached at concurrency 1.
QUICK = [
    "--warmup",
    "2",
    "--min-iters",
    "10",
    "--min-time",
    "0.3",
    "--max-time",
    "4",
    "--target-ci",
    "0.5",
    "--max-background-cpu",
    "100%",
    "--seq-lens",
    "8",
    "--gen-tokens",
    "8",
]
STUB = f"{sys.executable} -m benchdb.testing.stub --port {{port}} --model {{model}} --ttft-ms 5 --itl-ms 2"


def run_results(folder: Path) -> list[dict]:
    """Each contract file under ``folder``: its path, scenario, status and whole metadata."""
    out = []
    for path in sorted(folder.rglob("*.parquet")):
        meta = contract.read_footer(path).metadata
        out.append({"path": path, "scenario": meta["scenario"], "status": meta["scenario"].get("status"), "meta": meta})
    return out

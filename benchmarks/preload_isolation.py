"""Does a measuring child that inherited another backend's library measure differently?

    python benchmarks/preload_isolation.py [--rounds 2] [--small]

Measures OpenVINO on tiny:bert (batch 4, seq_len 32, 3 processes) with the fork server benchdb
uses (OpenVINO's own imports) and with one that has also imported ONNX Runtime, as one shared
server for every backend would, alternating the two in ``--rounds`` rounds. Prints each run's
median latency and the ratio of the medians: why `benchdb.harness.isolation` keeps one fork
server per backend. Never run it beside another benchmark or test run. --small checks that the
script works: 1 round of 1 process each, 0.1-0.3 s.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = """
import json, sys
extra = [m for m in sys.argv[1].split(",") if m]
from benchdb.harness import isolation
own = isolation.preload_modules
isolation.preload_modules = lambda module: own(module) + extra
from benchdb.cli import main
main(["run", "--backend", "openvino", "--model", "tiny:bert", "--batch-size", "4", "--seq-len", "32",
      "--max-background-cpu", "100%", "--out", sys.argv[2], *json.loads(sys.argv[3])])
"""


def median_ms(out: Path) -> float:
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    (path,) = out.rglob("*.parquet")
    t = pq.read_table(path)
    return statistics.median(t.filter(pc.equal(t["metric"], "latency_s"))["value"].to_pylist()) * 1e3


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument(
        "--small", action="store_true", help="1 round of 1 process each, 0.1-0.3 s: checks that the script works"
    )
    args = ap.parse_args()
    timing = ["--repeats", "3"]
    if args.small:
        args.rounds, timing = 1, ["--repeats", "1", "--min-time", "0.1", "--max-time", "0.3"]
    got: dict[str, list[float]] = {"own server": [], "+ onnxruntime": []}
    with tempfile.TemporaryDirectory(prefix="bdb-preload-") as tmp:
        for r in range(args.rounds):
            for label, extra in (("own server", ""), ("+ onnxruntime", "onnxruntime,benchdb.backends.onnxruntime")):
                out = Path(tmp) / f"{r}-{len(extra)}"
                proc = subprocess.run(
                    [sys.executable, "-c", CHILD, extra, str(out), json.dumps(timing)],
                    cwd=ROOT,
                    capture_output=True,
                    text=True,
                )
                if proc.returncode != 0:
                    raise SystemExit(f"run failed ({proc.returncode}):\n{proc.stderr[-2000:]}")
                got[label].append(median_ms(out))
                print(f"round {r + 1} {label}: median {got[label][-1]:.3f} ms", flush=True)
    own, mixed = (statistics.median(v) for v in got.values())
    print(
        f"\nOpenVINO tiny:bert bs=4: own server {own:.3f} ms, server that also imported ONNX Runtime "
        f"{mixed:.3f} ms; ratio {mixed / own:.2f}x (1.00x: no effect)"
    )


if __name__ == "__main__":
    main()

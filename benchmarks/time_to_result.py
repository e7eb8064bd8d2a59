"""Time to a valid result: benchdb against a bare loop and optimum-benchmark, interleaved, one run.

    python benchmarks/time_to_result.py [--model tiny|base] [--rounds 3] [--threads 2]
                                        [--optimum-python /path/to/venv/bin/python] [--small]

One scenario: a BERT saved with ``save_pretrained`` (random weights, seeded: no download; ``tiny``
is 2 layers of width 128, ``base`` is BertConfig()'s defaults), PyTorch eager fp32 on the CPU,
batch 1, sequence length 128, a fixed thread count. Each tool runs as its own fresh process, as a
user would run it, and its wall time is taken from process start to exit:

- ``benchdb``: ``benchdb run --backend pytorch --model FOLDER`` with its default stopping rule
  (a valid result means the 95 % CI of the median within ±2 %); the median and validity are
  read back from the Parquet file it wrote.
- ``bare``: a Python process that imports torch and transformers, loads the folder, warms up 10
  calls and times 200 calls with ``time.perf_counter``: the reference for the median.
- ``optimum-benchmark`` (when ``--optimum-python`` names an interpreter that has it, e.g. a
  separate venv: its pins differ from benchdb's): ``Benchmark.launch`` with ``launcher=inline``
  and its default inference scenario (latency only), the same shapes and model folder.

Each tool runs right beside its bare loop in every round (benchdb with ``bare``, optimum-benchmark
with the bare loop of its venv), the pairs' order rotating and the order within a pair flipping
every round, so a pair sees the same machine: this machine's speed drifts between rounds, and a
ratio of medians taken over rounds would mix that drift into the comparison. Printed: every round's
wall time and median latency of each tool; then each tool's median wall time and latency over the
rounds, and, per round, its wall time and its median latency against its bare loop's in the same
round (agreement), with the median of those per-round ratios: the wall-time ratios benchdb / bare
and benchdb / optimum-benchmark are medians of per-round ratios too. optimum-benchmark 0.6.0 needs
transformers < 5, which runs BERT faster than benchdb's 5.x, so its bare loop runs in its venv.
Compare only within one invocation. Never run it beside another benchmark.

--small checks that the script works: BERT-tiny, 1 round. Unless --optimum-python is given, its
optimum-benchmark rows replay a recorded run (installing optimum-benchmark pulls its own torch and
transformers: longer than the whole check): the wall times and output of optimum-benchmark 0.6.0 and
of the bare loop in its venv, recorded by `--small --optimum-python PY --record-optimum FILE` into
benchmarks/recorded/time_to_result/, go through the same reading and comparison as a live run's. Its
ratios then set this run's benchdb beside another run's optimum-benchmark: they show the comparison
works, not how the two compare.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

SEQ, BATCH = 128, 1
#: optimum-benchmark's recorded --small run, replayed by --small (see the module's docstring).
RECORDED = Path(__file__).resolve().parent / "recorded" / "time_to_result" / "optimum_benchmark.json"
#: The recorded tools, each with the run of the other venv it is compared with.
OPTIMUM_TOOLS = ("optimum-benchmark", "bare (optimum venv)")

BARE = rf"""
import json, statistics, sys, time
import torch, transformers
folder, threads = sys.argv[1], int(sys.argv[2])
torch.set_num_threads(threads)
model = transformers.AutoModel.from_pretrained(folder).eval()
ids = torch.randint(0, model.config.vocab_size, ({BATCH}, {SEQ}), generator=torch.Generator().manual_seed(0))
inputs = {{"input_ids": ids, "attention_mask": torch.ones_like(ids)}}
with torch.inference_mode():
    for _ in range(10):
        model(**inputs)
    times = []
    for _ in range(200):
        t0 = time.perf_counter()
        model(**inputs)
        times.append(time.perf_counter() - t0)
print(json.dumps({{"median": statistics.median(times), "valid": True}}))
"""

SHAPES = f'{{"batch_size": {BATCH}, "sequence_length": {SEQ}}}'

OPTIMUM = rf"""
import json, statistics, sys
import torch
from optimum_benchmark import Benchmark, BenchmarkConfig, InferenceConfig, InlineConfig, PyTorchConfig
folder, threads = sys.argv[1], int(sys.argv[2])
torch.set_num_threads(threads)
config = BenchmarkConfig(
    name="time_to_result", launcher=InlineConfig(),
    scenario=InferenceConfig(latency=True, memory=False, input_shapes={SHAPES}),
    backend=PyTorchConfig(model=folder, device="cpu", task="feature-extraction", no_weights=False))
report = Benchmark.launch(config)
values = report.forward.latency.values
print(json.dumps({{"median": statistics.median(values), "valid": True, "n": len(values)}}))
"""


def make_model(kind: str, root: Path) -> Path:
    folder = root / f"bert-{kind}"
    if (folder / "config.json").exists():
        return folder
    import torch
    import transformers

    torch.manual_seed(0)
    config = (
        transformers.BertConfig(hidden_size=128, num_hidden_layers=2, num_attention_heads=2, intermediate_size=512)
        if kind == "tiny"
        else transformers.BertConfig()
    )
    transformers.BertModel(config).eval().save_pretrained(folder)
    return folder


def last_json(text: str) -> dict:
    for line in reversed(text.strip().splitlines()):
        if line.startswith("{"):
            return json.loads(line)
    raise RuntimeError(f"no result line in: {text[-400:]}")


def timed(cmd: list[str], env: dict | None = None) -> tuple[float, subprocess.CompletedProcess]:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    return time.perf_counter() - t0, proc


def run_benchdb(folder: Path, threads: int, work: Path) -> tuple[float, dict]:
    import pyarrow.parquet as pq

    out = Path(tempfile.mkdtemp(prefix="ttr-", dir=work))
    wall, proc = timed(
        [
            sys.executable,
            "-m",
            "benchdb",
            "run",
            "--backend",
            "pytorch",
            "--model",
            str(folder),
            "--batch-size",
            str(BATCH),
            "--seq-len",
            str(SEQ),
            "--threads",
            str(threads),
            "--out",
            str(out),
        ]
    )
    if proc.returncode != 0:
        raise RuntimeError(f"benchdb run failed: {proc.stderr[-600:]}")
    from benchdb.schema import contract

    (path,) = list(out.rglob("*.parquet"))
    meta = contract.read_footer(path).metadata
    table = pq.read_table(path, columns=["metric", "value"]).to_pydict()
    lat = [v for m, v in zip(table["metric"], table["value"], strict=True) if m == "latency_s"]
    valid = meta["scenario"]["status"] == "ok" and meta["scenario"]["validity"] == "valid"
    return wall, {"median": statistics.median(lat), "valid": valid, "n": len(lat)}


def run_python(
    python: str, script: str, folder: Path, threads: int, keep: list[dict] | None = None
) -> tuple[float, dict]:
    """``script`` run by ``python``: its wall time and its result line; ``keep``: a list each run's
    wall time and standard output are added to (--record-optimum)."""
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    wall, proc = timed([python, "-c", script, str(folder), str(threads)], env=env)
    if proc.returncode != 0:
        raise RuntimeError(f"{python} failed: {proc.stderr[-800:]}")
    if keep is not None:
        keep.append({"wall_s": round(wall, 3), "stdout": proc.stdout})
    return wall, last_json(proc.stdout)


def replayed(runs: list[dict]) -> Callable[[], tuple[float, dict]]:
    """A recorded tool's runs, one a call (round after round, again from the first when more rounds
    are asked than were recorded), read as a live run's output is."""
    rounds = itertools.cycle(runs)

    def run() -> tuple[float, dict]:
        one = next(rounds)
        return one["wall_s"], last_json(one["stdout"])

    return run


def record_optimum(path: Path, python: str, args: argparse.Namespace, kept: dict[str, list[dict]]) -> None:
    """The recorded runs, with the versions that made them and the settings they were made at."""
    versions = subprocess.run(
        [
            python,
            "-c",
            "import importlib.metadata as m, json; "
            "print(json.dumps({p: m.version(p) for p in ('optimum-benchmark', 'transformers', 'torch')}))",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    doc = {"versions": json.loads(versions), "model": args.model, "threads": args.threads, "runs": kept}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", choices=("tiny", "base"), default="tiny")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--optimum-python", help="a Python with optimum-benchmark installed (a separate venv)")
    ap.add_argument(
        "--record-optimum", type=Path, help="with --optimum-python: keep its runs here, for --small to replay"
    )
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "benchdb-time-to-result")
    ap.add_argument("--small", action="store_true", help="BERT-tiny, 1 round: checks that the script works")
    args = ap.parse_args()
    if args.small:
        args.model, args.rounds = "tiny", 1
    args.work.mkdir(parents=True, exist_ok=True)
    folder = make_model(args.model, args.work)

    tools = {
        "benchdb": lambda: run_benchdb(folder, args.threads, args.work),
        "bare": lambda: run_python(sys.executable, BARE, folder, args.threads),
    }
    #: each tool and the bare loop it is compared with, run next to each other in every round
    pairs = [("benchdb", "bare")]
    kept: dict[str, list[dict]] = {name: [] for name in OPTIMUM_TOOLS}
    if args.optimum_python:
        py, keep = args.optimum_python, args.record_optimum is not None
        tools["optimum-benchmark"] = lambda: run_python(
            py, OPTIMUM, folder, args.threads, kept["optimum-benchmark"] if keep else None
        )
        # its venv pins its own transformers (optimum-benchmark 0.6.0 needs < 5): the same bare loop
        # there is the reference for its median
        tools["bare (optimum venv)"] = lambda: run_python(
            py, BARE, folder, args.threads, kept["bare (optimum venv)"] if keep else None
        )
        pairs.append(OPTIMUM_TOOLS)
    elif args.small and RECORDED.exists():
        rec = json.loads(RECORDED.read_text())
        print(
            f"optimum-benchmark: replayed, not run: optimum-benchmark {rec['versions']['optimum-benchmark']}'s "
            f"recorded runs (benchmarks/recorded/time_to_result/; BERT-{rec['model']}, {rec['threads']} threads)"
        )
        tools.update({name: replayed(rec["runs"][name]) for name in OPTIMUM_TOOLS})
        pairs.append(OPTIMUM_TOOLS)
    else:
        print("optimum-benchmark: skipped (give --optimum-python, a Python with optimum-benchmark in its own venv)")
    bare_of = {n: bare for pair in pairs for n, bare in (pair, (pair[1], pair[1]))}
    names = list(tools)
    walls: dict[str, list[float]] = {n: [] for n in names}
    medians: dict[str, list[float]] = {n: [] for n in names}
    for rnd in range(args.rounds):
        rotated = pairs[rnd % len(pairs) :] + pairs[: rnd % len(pairs)]
        order = [n for pair in rotated for n in (pair if rnd % 2 == 0 else pair[::-1])]
        for name in order:
            wall, res = tools[name]()
            walls[name].append(wall)
            medians[name].append(res["median"])
            print(
                f"round {rnd + 1} {name:<18} wall {wall:6.2f} s  median {res['median'] * 1e3:8.3f} ms"
                f"  valid {res['valid']}" + (f"  n {res['n']}" if "n" in res else ""),
                flush=True,
            )

    def per_round(a: dict[str, list[float]], n: str, ref: str) -> list[float]:
        return [x / y for x, y in zip(a[n], a[ref], strict=True)]

    load = os.getloadavg()
    print(
        f"\n# time to a result: BERT-{args.model} (save_pretrained, random weights), PyTorch eager fp32 CPU, "
        f"batch {BATCH}, seq {SEQ}, {args.threads} threads, {args.rounds} rounds; load average {load[0]:.2f}"
    )
    print("(vs its bare loop: the tool's figure over its bare loop's in the same round; median of the rounds)")
    print(
        f"{'tool':<22}{'wall (median)':>14}{'wall range':>18}{'latency median':>16}{'wall vs bare':>14}"
        f"{'latency vs bare':>17}"
    )
    for n in names:
        w, m = statistics.median(walls[n]), statistics.median(medians[n])
        wr, mr = per_round(walls, n, bare_of[n]), per_round(medians, n, bare_of[n])
        print(
            f"{n:<22}{w:>12.2f} s{min(walls[n]):>9.2f}-{max(walls[n]):.2f} s{m * 1e3:>13.3f} ms"
            f"{statistics.median(wr):>13.3f}x{statistics.median(mr):>16.3f}x"
        )
    for n, bare in pairs:
        agree = per_round(medians, n, bare)
        print(f"{n} median latency / {bare}'s, per round (agreement): {', '.join(f'{x:.3f}' for x in agree)}")
    if "optimum-benchmark" in names:
        ratios = per_round(walls, "benchdb", "optimum-benchmark")
        print(
            f"benchdb / optimum-benchmark wall time: {statistics.median(ratios):.2f}x (median of per-round ratios "
            f"{', '.join(f'{x:.2f}' for x in ratios)}; goal <= 0.40)"
        )
    ratios = per_round(walls, "benchdb", "bare")
    print(
        f"benchdb / bare loop wall time: {statistics.median(ratios):.2f}x (median of per-round ratios "
        f"{', '.join(f'{x:.2f}' for x in ratios)}; goal <= 1.1)"
    )
    if args.record_optimum and args.optimum_python:
        record_optimum(args.record_optimum, args.optimum_python, args, kept)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

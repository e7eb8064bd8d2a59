"""benchdb's OpenVINO runner against OpenVINO's own benchmark_app, on the same IR, in one run.

    python benchmarks/openvino_hints.py [--duration 10] [--rounds 3] [--threads 2] [--seq-len 128] [--small]

A BERT-base model (transformers' BertConfig() defaults, random weights: no download) is saved
once under $BENCHDB_CACHE/benchmarks/, exported by benchdb (ONNX -> OpenVINO IR, benchdb's export
cache) and measured at batch size 1 with both performance hints, by

- benchdb: ``openvino.plan`` + ``openvino.run_model`` (the runner's real path, verification
  included), every measured loop ``--duration`` seconds (min_time = max_time);
- benchmark_app (shipped with the openvino package) on the IR file benchdb ran: ``-hint latency``
  or ``-hint throughput``, ``-t`` the same duration, ``-infer_precision f32`` and, through
  ``-load_config``, the same INFERENCE_NUM_THREADS as benchdb (benchmark_app refuses ``-nthreads``
  beside ``-hint``).

The two tools alternate (their order flips every round) so drift and other load hit both.
Printed per hint: the median over rounds of each figure and the ratio benchdb / benchmark_app
of the hint's headline figure (latency hint: median latency; throughput hint: items per second;
goal: within 5 %). Other processes on the machine add noise to both; the load average is printed.

--small checks that the script works: a 2-layer BERT of width 32, seq 16, 1 round of 1 s
measurements, its files in a temporary $BENCHDB_CACHE; it exits 0 whatever the ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HINTS = ("latency", "throughput")


def bert_folder(small: bool) -> Path:
    """A saved random-weight BERT-base (seeded), made once; ``small``: 2 layers of width 32."""
    import torch
    import transformers as T

    from benchdb.backends.shared import onnx_export as export

    folder = export.cache_root() / "benchmarks" / ("bert-small-random" if small else "bert-base-random")
    if not (folder / "config.json").exists():
        T.logging.set_verbosity_error()
        torch.manual_seed(0)
        tmp = folder.with_name(folder.name + f".tmp{os.getpid()}")
        config = (
            T.BertConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=37)
            if small
            else T.BertConfig()
        )
        T.BertModel(config).eval().save_pretrained(tmp)
        os.replace(tmp, folder)
    return folder


def ir_path(spec: str, seq_len: int) -> Path:
    """The IR benchdb runs for this model at bs=1 (exported into benchdb's cache if not there yet)."""
    from benchdb.backends.openvino import backend as openvino
    from benchdb.backends.shared import inputs, models

    model = models.resolve(spec)
    net = models.build(model)
    fwd = inputs.make(model, net, 1, seq_len).forward
    exported = openvino._artifact(model, net, fwd)
    print(f"IR: {exported.path} (route {exported.route}, {'cached' if exported.cached else 'exported now'})")
    return exported.path


def benchmark_app_command() -> list[str]:
    found = shutil.which("benchmark_app", path=os.path.dirname(sys.executable)) or shutil.which("benchmark_app")
    if found:
        return [found]
    return [sys.executable, "-c", "import sys; from openvino.tools.benchmark.main import main; sys.exit(main())"]


def run_benchmark_app(xml: Path, hint: str, duration: float, threads: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "config.json"
        config.write_text(json.dumps({"CPU": {"INFERENCE_NUM_THREADS": str(threads)}}))
        cmd = benchmark_app_command() + [
            "-m",
            str(xml),
            "-d",
            "CPU",
            "-hint",
            hint,
            "-t",
            str(int(round(duration))),
            "-load_config",
            str(config),
            "-infer_precision",
            "f32",
        ]
        proc = subprocess.run(cmd, capture_output=True, text=True)
    text = proc.stdout + proc.stderr
    used = re.search(r"INFERENCE_NUM_THREADS: (\d+)", text)
    if used and int(used.group(1)) != threads:
        raise SystemExit(f"benchmark_app ran {used.group(1)} threads, not {threads}")

    def grab(pattern: str) -> float | None:
        found = re.search(pattern, text)
        return float(found.group(1)) if found else None

    median = re.search(r"Median:\s+([\d.]+) (ms|us)", text)  # a small model's latencies print in us
    out = {
        "items_s": grab(r"Throughput:\s+([\d.]+) FPS"),
        "latency_ms": float(median.group(1)) / (1e3 if median.group(2) == "us" else 1) if median else None,
        "requests": grab(r"(\d+) inference requests"),
        "count": grab(r"Count:\s+(\d+) iterations"),
    }
    if out["requests"] is None and "inference synchronously" in text:
        out["requests"] = 1.0
    if proc.returncode != 0 or out["items_s"] is None or out["latency_ms"] is None:
        raise SystemExit(f"benchmark_app failed ({' '.join(cmd)}):\n{text[-3000:]}")
    return out


def run_benchdb(spec: str, hint: str, duration: float, threads: int, seq_len: int) -> dict:
    from benchdb.backends.openvino import backend as openvino
    from benchdb.harness.scenario import RunOptions
    from benchdb.harness.timing import StopRule

    opts = RunOptions(
        "openvino",
        (spec,),
        device="CPU",
        modes=(hint,),
        seq_lens=(seq_len,),
        threads=threads,
        isolate=False,
        max_background_cpu=100.0,
        rule=StopRule(min_iters=10, min_time_s=duration, max_time_s=duration),
    )
    ((model, scenarios),) = openvino.plan(opts)
    (outcome,) = list(openvino.run_model(model, scenarios, opts))
    if outcome.status != "ok":
        raise SystemExit(f"benchdb {hint}: {outcome.status}: {outcome.error}")
    values: dict[str, list[float]] = {}
    for metric, _unit, _it, _off, value in outcome.rows:
        values.setdefault(metric, []).append(value)
    latency = statistics.median(values["latency_s"])
    items_s = values["throughput_items_s"][0] if "throughput_items_s" in values else 1.0 / latency
    if not outcome.extra.get("export_cached"):
        print("  (benchdb exported the model again: the IR it ran may differ from benchmark_app's)")
    return {
        "items_s": items_s,
        "latency_ms": latency * 1e3,
        "count": len(values["latency_s"]),
        "requests": outcome.scenario.options.get("num_requests", 1),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--duration", type=float, default=10.0, help="seconds of each measured loop, both tools")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seq-len", type=int, default=128)
    ap.add_argument(
        "--small",
        action="store_true",
        help="a 2-layer BERT, seq 16, 1 round of 1 s, a temporary "
        "$BENCHDB_CACHE: checks that the script works (exit 0)",
    )
    args = ap.parse_args()
    if args.small:
        args.duration, args.rounds, args.seq_len = 1.0, 1, 16
        os.environ["BENCHDB_CACHE"] = tempfile.mkdtemp(prefix="benchdb-openvino-hints-")

    import transformers

    transformers.logging.set_verbosity_error()
    spec = str(bert_folder(args.small))
    xml = ir_path(spec, args.seq_len)
    print(
        f"BERT-{'small' if args.small else 'base'} (random weights), bs=1, seq {args.seq_len}, "
        f"{args.threads} threads, {args.duration:g} s per measurement, {args.rounds} rounds; "
        f"load average {os.getloadavg()[0]:.2f}"
    )
    got: dict[tuple[str, str], list[dict]] = {}
    for r in range(args.rounds):
        for h, hint in enumerate(HINTS):
            tools = ("benchmark_app", "benchdb") if (r + h) % 2 == 0 else ("benchdb", "benchmark_app")
            for tool in tools:
                t0 = time.perf_counter()
                res = (
                    run_benchmark_app(xml, hint, args.duration, args.threads)
                    if tool == "benchmark_app"
                    else run_benchdb(spec, hint, args.duration, args.threads, args.seq_len)
                )
                got.setdefault((hint, tool), []).append(res)
                print(
                    f"round {r + 1} {hint:10s} {tool:13s} {res['items_s']:8.2f} items/s  median latency "
                    f"{res['latency_ms']:8.2f} ms  requests {int(res['requests'] or 0)}  "
                    f"n {int(res['count'] or 0):5d}"
                    f"  ({time.perf_counter() - t0:.0f} s, load {os.getloadavg()[0]:.2f})"
                )

    print()
    print(f"{'hint':10s} {'figure':22s} {'benchdb':>10s} {'benchmark_app':>14s} {'ratio':>7s}  goal")
    ok = True
    for hint in HINTS:
        for key, label in (("items_s", "items/s"), ("latency_ms", "median latency (ms)")):
            ours = statistics.median(x[key] for x in got[(hint, "benchdb")])
            theirs = statistics.median(x[key] for x in got[(hint, "benchmark_app")])
            ratio = ours / theirs
            headline = (hint == "latency") == (key == "latency_ms")
            mark = ""
            if headline:
                within = abs(ratio - 1) <= 0.05
                ok &= within
                mark = "within 5 %" if within else "OFF BY MORE THAN 5 %"
            print(f"{hint:10s} {label:22s} {ours:10.2f} {theirs:14.2f} {ratio:7.3f}  {mark}")
    print(f"\nload average at the end {os.getloadavg()[0]:.2f} (other processes add noise to both tools)")
    sys.exit(0 if ok or args.small else 1)


if __name__ == "__main__":
    main()

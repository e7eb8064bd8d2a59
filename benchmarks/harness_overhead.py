"""Timing-harness overhead, against bare loops measured in the same run.

    python benchmarks/harness_overhead.py [--iters 200000] [--model-iters 1000] [--base-iters 120] [--small]

1. Per-iteration overhead of benchdb's timing loop (measure()) on a trivial callable, against a
   bare ``perf_counter`` loop that records the same samples (goal: < 1 us).
2. Median forward latency of a tiny BERT and a BERT-base-shaped model (random weights) measured
   through the PyTorch runner's path (measure() + inference_mode) against a bare
   ``torch.inference_mode()`` loop (goal: within +-3 %). The two are interleaved in short A/B blocks so
   drift hits both.

--small checks that the script works: 2,000 iterations, 5 rounds of 5 forward calls a side (an odd
count, so the median ratio is one real block's and two blocks slowed by a busy machine cannot move
it), 2 warm-up calls, and the BERT-base-shaped model cut to 2 of its 12 layers (building and running all
12 takes most of a --small run).
"""

from __future__ import annotations

import argparse
import statistics
import time

from benchdb.harness.timing import StopRule, measure


def bare_loop(fn, n: int) -> list[float]:
    pc = time.perf_counter
    out = []
    append = out.append
    for _ in range(n):
        a = pc()
        fn()
        append(pc() - a)
    return out


def loop_cost(fn, n: int) -> tuple[float, float]:
    """(seconds per iteration of the bare loop, of benchdb's loop) over n iterations."""
    t = time.perf_counter()
    bare_loop(fn, n)
    bare = (time.perf_counter() - t) / n
    rule = StopRule(warmup_iters=0, warmup_s=0, min_iters=n, max_iters=n, min_time_s=0, max_time_s=1e9)
    m = measure(fn, rule)
    ours = (m.offsets[-1] + m.samples[-1]) / len(m.samples)
    return bare, ours


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--iters", type=int, default=200_000)
    ap.add_argument("--model-iters", type=int, default=1000, help="iterations per side, tiny BERT")
    ap.add_argument("--base-iters", type=int, default=120, help="iterations per side, BERT-base-shaped")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=20, help="A/B alternations per model")
    ap.add_argument("--warmup", type=int, default=10, help="forward calls before the first block, per model")
    ap.add_argument(
        "--small",
        action="store_true",
        help="2,000 iterations, 5 rounds of 5 forward calls a side, 2 warm-up calls, a 2-layer BERT-base-shaped "
        "model: checks that the script works",
    )
    args = ap.parse_args()
    if args.small:
        args.iters, args.model_iters, args.base_iters, args.rounds, args.warmup = 2_000, 25, 25, 5, 2

    def noop():
        return None

    costs = [loop_cost(noop, args.iters) for _ in range(5)]
    bare = statistics.median(c[0] for c in costs)
    ours = statistics.median(c[1] for c in costs)
    print(
        f"trivial callable: bare loop {bare * 1e9:7.1f} ns/iter, benchdb loop {ours * 1e9:7.1f} ns/iter, "
        f"overhead {(ours - bare) * 1e9:+7.1f} ns/iter (goal < 1000 ns)"
    )

    import torch
    import transformers as T

    from benchdb.backends.shared import inputs, models

    torch.set_num_threads(args.threads)
    T.logging.set_verbosity_error()
    base = T.BertConfig(num_hidden_layers=2) if args.small else T.BertConfig()
    cases = [
        ("tiny BERT (tiny:bert, bs=1, seq 16)", models.resolve("tiny:bert"), 16, args.model_iters),
        (
            f"BERT-base-shaped ({'2 layers, ' if args.small else ''}random weights, bs=1, seq 128)",
            models.ResolvedModel("bert-base-shaped", models.KINDS["bert"], None, None, loaded_config=base),
            128,
            args.base_iters,
        ),
    ]
    for label, m, seq, iters in cases:
        torch.manual_seed(0)
        net = T.AutoModel.from_config(m.config).eval()
        fwd = inputs.make(m, net, 1, seq).forward

        def forward(net=net, fwd=fwd):
            with torch.inference_mode():
                return net(**fwd)

        for _ in range(args.warmup):
            forward()
        block = max(iters // args.rounds, 5)
        rule = StopRule(warmup_iters=0, warmup_s=0, min_iters=block, max_iters=block, min_time_s=0, max_time_s=1e9)
        ratios, bare_med, ours_med = [], [], []
        for i in range(args.rounds):  # short blocks, order alternating, so drift hits both
            if i % 2 == 0:
                b = statistics.median(bare_loop(forward, block))
                o = statistics.median(measure(forward, rule).samples)
            else:
                o = statistics.median(measure(forward, rule).samples)
                b = statistics.median(bare_loop(forward, block))
            ratios.append(o / b)
            bare_med.append(b)
            ours_med.append(o)
        q = statistics.quantiles(ratios, n=4)
        print(
            f"{label}: bare median {statistics.median(bare_med) * 1e3:8.3f} ms, benchdb median "
            f"{statistics.median(ours_med) * 1e3:8.3f} ms, ratio (median of {args.rounds} paired blocks) "
            f"{statistics.median(ratios):6.3f}, IQR {q[0]:.3f}-{q[2]:.3f} (goal 0.97-1.03)"
        )


if __name__ == "__main__":
    main()

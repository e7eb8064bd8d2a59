"""Independent measures of one model on a CUDA GPU, to set beside benchdb's (issue 38).

    python benchmarks/gpu/independent.py --model tiny:bert --batch 4 --seq 32 --precision fp16

The model and inputs are the ones benchdb's PyTorch runner builds (same spec, seeded weights and
inputs); everything measured is not benchdb's: a bare loop of CUDA-event pairs, a wall-clock loop
with one synchronisation at the end, and torch.cuda.max_memory_allocated/reserved. Prints one JSON
line.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--seq", type=int, default=32)
    ap.add_argument("--precision", default="fp32", choices=("fp32", "fp16", "bf16"))
    ap.add_argument("--device", default="cuda:0")
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--iters", type=int, default=300)
    args = ap.parse_args()

    import torch

    from benchdb.backends.shared import inputs, models

    dtype = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[args.precision]
    dev = torch.device(args.device)
    model = models.resolve(args.model)
    torch.manual_seed(0)
    net = models.build(model).to(device=dev, dtype=dtype)
    inp = inputs.make(model, net, args.batch, args.seq)
    fwd = inputs.to_device(inp.forward, dev, dtype)
    torch.cuda.synchronize(dev)
    torch.cuda.reset_peak_memory_stats(dev)
    e0 = torch.cuda.Event(enable_timing=True)
    e1 = torch.cuda.Event(enable_timing=True)
    events: list[float] = []
    with torch.inference_mode():
        for _ in range(args.warmup):
            net(**fwd)
        torch.cuda.synchronize(dev)
        for _ in range(args.iters):
            e0.record()
            net(**fwd)
            e1.record()
            e1.synchronize()
            events.append(e0.elapsed_time(e1) / 1e3)
        # back-to-back calls, one synchronisation: the GPU's own pace once launches overlap
        t0 = time.perf_counter()
        for _ in range(args.iters):
            net(**fwd)
        torch.cuda.synchronize(dev)
        pipelined = (time.perf_counter() - t0) / args.iters
    q = statistics.quantiles(events, n=10)
    print(
        json.dumps(
            {
                "model": args.model,
                "batch": args.batch,
                "seq": args.seq,
                "precision": args.precision,
                "iters": args.iters,
                "event_median_s": statistics.median(events),
                "event_p10_s": q[0],
                "event_p90_s": q[-1],
                "pipelined_mean_s": pipelined,
                "max_memory_allocated": torch.cuda.max_memory_allocated(dev),
                "max_memory_reserved": torch.cuda.max_memory_reserved(dev),
                "torch": torch.__version__,
                "gpu": torch.cuda.get_device_name(dev),
            }
        )
    )


if __name__ == "__main__":
    main()

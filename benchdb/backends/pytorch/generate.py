"""Generation timed token by token: a logits processor that timestamps each decode step, and the
TTFT, TPOT, generate time and tokens/s rows of the timed ``generate`` calls."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

from benchdb.backends.shared import inputs
from benchdb.harness.scenario import RunOptions
from benchdb.harness.timing import measure


class TokenClock:
    """A logits processor that timestamps every generated token (called once per decode step)."""

    def __init__(self, sync: Callable[[], object] | None, clock=time.perf_counter) -> None:
        self.sync = sync
        self.clock = clock
        self.calls: list[list[float]] = []

    def begin(self) -> None:
        self.calls.append([self.clock()])

    def __call__(self, input_ids, scores):
        if self.sync is not None:
            self.sync()
        self.calls[-1].append(self.clock())
        return scores


def generation_rows(clock: TokenClock, m, batch: int, tokens: int) -> list[tuple]:
    """TTFT, per-token TPOT, end-to-end time and tokens/s of the timed generate calls."""
    rows: list[tuple] = []
    timed = clock.calls[-len(m.samples) :] if m.samples else []
    for it, (stamps, total, offset) in enumerate(zip(timed, m.samples, m.offsets, strict=True)):
        rows.append(("generate_s", "s", it, offset, total))
        rows.append(("tokens_per_s", "tokens/s", it, offset, batch * tokens / total))
        if len(stamps) >= 2:
            rows.append(("ttft_s", "s", it, offset, stamps[1] - stamps[0]))
        for k in range(2, len(stamps)):
            rows.append(
                ("tpot_s", "s", it * tokens + k - 1, offset + stamps[k - 1] - stamps[0], stamps[k] - stamps[k - 1])
            )
    return rows


def measure_generation(torch, net, inp, device, dtype, sync, opts: RunOptions) -> list[tuple]:
    from transformers import LogitsProcessorList

    clock = TokenClock(sync)
    kwargs = dict(
        inputs.to_device(inp.generate, device, dtype),
        max_new_tokens=opts.gen_tokens,
        min_new_tokens=opts.gen_tokens,
        do_sample=False,
        logits_processor=LogitsProcessorList([clock]),
    )

    def generate():
        clock.begin()
        return net.generate(**kwargs)

    # generation is slower than a forward: its own minimum count, same time limits
    rule = replace(opts.rule, min_iters=min(opts.rule.min_iters, 5), warmup_iters=1)
    with torch.inference_mode():
        m = measure(generate, rule, sync=sync)
    return generation_rows(clock, m, inp.items, opts.gen_tokens)

"""The benches behind benchmarks/gate_real.py: real work, measured by benchdb's own harness.

- ``bench_matmul``: numpy matmul at several sizes (A/A comparisons).
- ``bench_tiny_bert``: a tiny BERT built from a transformers config (random weights, no download),
  eager PyTorch, at several batch sizes and sequence lengths (A/A comparisons).
- ``bench_work``: a fixed amount of numpy + Python work scaled by ``GATE_WORK_SCALE`` (default 1).
  The variable is *not* declared in ``ENV``, so ``--ab-env cand:GATE_WORK_SCALE=1.1`` makes the
  candidate do 10 % more work within the same series: a real, controlled slowdown.

With ``GATE_SMALL=1`` (gate_real.py --small) each bench takes its first sizes only.
"""

import os

import numpy as np

from benchdb import bench

#: gate_real.py --small: the first sizes of each bench only (the script's flow, not its figures)
SMALL = os.environ.get("GATE_SMALL") == "1"


def sizes(values: list, small: int) -> list:
    return values[:small] if SMALL else values


@bench.params(n=sizes([32, 48, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320], 2))
def bench_matmul(n):
    rng = np.random.default_rng(n)
    a = rng.standard_normal((n, n)).astype("float32")
    b = rng.standard_normal((n, n)).astype("float32")
    out = np.empty((n, n), dtype="float32")
    return lambda: np.matmul(a, b, out=out)


@bench.params(batch_size=sizes([1, 2, 4, 8], 1), seq_len=sizes([16, 64], 1))
def bench_tiny_bert(batch_size, seq_len):
    import torch
    from transformers import BertConfig, BertModel

    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=512,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=128,
    )
    model = BertModel(config).eval()
    ids = torch.randint(0, 512, (batch_size, seq_len))
    mask = torch.ones_like(ids)

    def call():
        with torch.inference_mode():
            model(input_ids=ids, attention_mask=mask)

    return call


# From 10,000 up, the work that scales is nearly all of a call's time: at n = 2,000-6,000 a call's
# fixed cost (the call, numpy's per-call overhead) made the candidate only 6.4-7.7 % slower, not 10 %
# (benchmarks/gate_real.py, 15 processes a side), at 10,000-20,000 it was 9.0-10.3 % slower.
@bench.params(n=sizes([10_000, 12_000, 16_000, 20_000, 24_000, 32_000, 40_000, 48_000, 64_000, 80_000], 1))
def bench_work(n):
    k = int(round(n * float(os.environ.get("GATE_WORK_SCALE", "1"))))
    x = np.arange(k, dtype=np.float64)

    def call():
        total = 0.0
        for i in range(k // 20):  # Python work, linear in k
            total += i * 0.5
        return total + float(np.sqrt(x).sum())  # numpy work, linear in k

    return call

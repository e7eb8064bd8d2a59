"""Example user benchmarks: `benchdb run --bench examples/benches` (README: User benchmarks).

- bench_python_loop is timed as a whole on every call (it returns no callable); its work grows
  with the environment variable BENCH_SCALE (default 1.0), declared in ENV below so that its
  value is part of every scenario's identity: BENCH_SCALE=2 is another series, not a slowdown
  of this one. (A controlled slowdown that `benchdb check` should see in the same series reads
  a variable the file does not declare in ENV.)
- bench_numpy_matmul does its set-up when called and returns the zero-argument callable that is
  timed; `dtype` becomes the scenario's precision, `n` its input shape (`n=64`).
"""

import os

import numpy as np

from benchdb import bench

#: Environment variables that change the work: recorded in each scenario's options (identity).
ENV = ["BENCH_SCALE"]


@bench.params(n=[20_000])
def bench_python_loop(n):  # returns no callable: timed as a whole on every call
    total = 0
    for i in range(int(n * float(os.environ.get("BENCH_SCALE", "1.0")))):
        total += i * i
    return total


@bench.params(n=[64, 128], dtype=["float32", "float64"])
def bench_numpy_matmul(n, dtype):  # set-up, then only the returned callable is timed
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n)).astype(dtype)
    b = rng.standard_normal((n, n)).astype(dtype)
    out = np.empty((n, n), dtype=dtype)
    return lambda: np.matmul(a, b, out=out)

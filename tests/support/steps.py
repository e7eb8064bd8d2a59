"""A noisy series with steps in it, for the change-point tests (tests/analysis/test_stats.py,
tests/analysis/test_changepoints.py)."""

from __future__ import annotations

import numpy as np


def series(rng: np.random.Generator, n: int, steps=(), noise: float = 0.01) -> np.ndarray:
    """n points of 1 + noise * t(3), each (at, size) of steps scaling the points from at on by 1 + size."""
    x = 1 + noise * rng.standard_t(3, n)
    for at, size in steps:
        x[at:] *= 1 + size
    return x

"""What a user benchmark file may import: ``params``, the scenario axes of a bench function.

Importing this module imports nothing else (no numpy, no benchdb internals), so a bench file
stays cheap to import::

    from benchdb import bench

    @bench.params(n=[64, 128], dtype=["float32", "float64"])
    def bench_sum(n, dtype):
        x = numpy.ones(n, dtype=dtype)   # set-up, not timed
        return lambda: x.sum()           # only this is timed

Each combination of the values is one scenario (``benchdb run --bench PATH``; the rules are in
:mod:`benchdb.backends.userbench` and the README section "User benchmarks").
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

#: Where :func:`params` keeps a function's axes (name -> list of values, in declaration order).
PARAMS_ATTR = "__benchdb_params__"


def params(**axes: Any) -> Callable[[Callable], Callable]:
    """Declare scenario axes: each keyword is a parameter of the function and a list of values.

    The function is called with one value per parameter, as keyword arguments, for every
    combination. Stacked decorators add axes; naming one parameter twice is an error.
    """
    clean: dict[str, list] = {}
    for name, values in axes.items():
        if isinstance(values, (str, bytes)) or not isinstance(values, (list, tuple, range)):
            raise TypeError(f"bench.params({name}=...) takes a list of values, e.g. {name}=[{values!r}]")
        if not values:
            raise ValueError(f"bench.params({name}=[]) has no values; give at least one")
        clean[name] = list(values)

    def decorate(fn: Callable) -> Callable:
        existing = dict(getattr(fn, PARAMS_ATTR, {}))
        twice = sorted(set(existing) & set(clean))
        if twice:
            raise ValueError(f"bench.params: {getattr(fn, '__name__', fn)} declares {twice[0]!r} twice")
        setattr(fn, PARAMS_ATTR, {**clean, **existing})
        return fn

    return decorate

"""The gate's raw samples: each result's samples of a metric, and each process's, in measurement order
(repeat, then iteration), read from the parts as flat columns."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from benchdb import sql
from benchdb.startup import duckdb

if TYPE_CHECKING:
    import numpy as np


#: A sample's order key is repeat << _REPEAT_SHIFT | iteration (iteration is a 32-bit INTEGER).
_REPEAT_SHIFT = 32


def _segments(
    cols: dict[str, np.ndarray], keys: tuple[str, ...]
) -> Iterator[tuple[tuple[int, ...], tuple[np.ndarray, np.ndarray]]]:
    """(key, (values, their order)) per run of rows sharing ``keys`` in flat fetched columns
    (``repeat``, ``iteration``, ``value`` among them), each run sorted by its order (repeat, then
    iteration). The rows of one key come back together, and in order, from the parts that hold
    them: a run is sorted only when it did not."""
    import numpy as np

    n = len(cols["value"])
    if not n:
        return
    change = np.zeros(n - 1, dtype=bool)
    for key in keys:
        change |= np.diff(cols[key]) != 0
    starts = np.concatenate([[0], np.flatnonzero(change) + 1])
    ends = np.concatenate([starts[1:], [n]])
    order = (cols["repeat"].astype(np.int64) << _REPEAT_SHIFT) + cols["iteration"].astype(np.int64)
    backwards = np.diff(order) < 0
    for start, end in zip(starts.tolist(), ends.tolist(), strict=True):
        # a view of the fetched column, not a copy: a pass of millions of samples is held once
        values, at = np.asanyarray(cols["value"][start:end], dtype=float), order[start:end]
        if backwards[start : end - 1].any():
            by = np.argsort(at, kind="stable")
            values, at = values[by], at[by]
        yield tuple(int(cols[key][start]) for key in keys), (values, at)


def measured_samples(con: duckdb.DuckDBPyConnection, ids: list[str], metric: str) -> dict[str, np.ndarray]:
    """The samples of ``metric`` of each result in ``ids`` that has any, in measurement order
    (repeat, then iteration), as arrays: one pass over the parts, no per-value Python objects."""
    return {rid: values for rid, (values, _) in measured(con, ids, metric).items()}


def measured(con: duckdb.DuckDBPyConnection, ids: list[str], metric: str) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """:func:`measured_samples` with each sample's order key (see ``_REPEAT_SHIFT``)."""
    cols = con.execute(sql.load("queries/samples_for.sql"), {"ids": ids, "metric": metric}).fetchnumpy()
    pieces: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {}
    for (k,), piece in _segments(cols, ("k",)):
        pieces.setdefault(ids[k - 1], []).append(piece)
    return {rid: _in_order(parts) for rid, parts in pieces.items()}


def processes(
    con: duckdb.DuckDBPyConnection,
    result_ids: list[str],
    series: list[str],
    metric: str,
    fetched: dict[str, tuple[np.ndarray, np.ndarray]],
) -> dict[str, list[np.ndarray]]:
    """Per series, the samples of each of its valid processes among ``result_ids``, ordered by
    result id and repeat. Split from ``fetched`` (results already read, with their order keys)
    when it holds every such result, the usual case of one result per series and side; read
    otherwise."""
    import numpy as np

    members = sorted(
        (s, r)
        for r, s in con.execute(
            sql.load("queries/gate_members.sql"), {"results": result_ids, "series": series}
        ).fetchall()
    )
    if all(r in fetched for _, r in members):
        out: dict[str, list[np.ndarray]] = {}
        for name, rid in members:
            values, at = fetched[rid]
            cut = np.flatnonzero(np.diff(at >> _REPEAT_SHIFT)) + 1  # where the repeat (process) changes
            out.setdefault(name, []).extend(np.split(values, cut))
        return out
    cols = con.execute(
        sql.load("queries/gate_processes.sql"), {"results": result_ids, "series": series, "metric": metric}
    ).fetchnumpy()
    pieces: dict[tuple[str, str, int], list[tuple[np.ndarray, np.ndarray]]] = {}
    for (s, k, repeat), piece in _segments(cols, ("s", "k", "repeat")):
        pieces.setdefault((series[s - 1], result_ids[k - 1], repeat), []).append(piece)
    read: dict[str, list[np.ndarray]] = {}
    for name, _rid, _repeat in sorted(pieces):
        read.setdefault(name, []).append(_in_order(pieces[(name, _rid, _repeat)])[0])
    return read


def _in_order(parts: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """One result's (or process's) samples and order keys, in measurement order, from the runs
    they came back in."""
    import numpy as np

    if len(parts) == 1:
        return parts[0]
    values, at = np.concatenate([v for v, _ in parts]), np.concatenate([o for _, o in parts])
    by = np.argsort(at, kind="stable")
    return values[by], at[by]

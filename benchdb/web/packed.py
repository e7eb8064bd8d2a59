"""The static site's raw samples and series histories, many results (series) to a file.

One JSON file per result made a 10M-sample site 400 MiB in 20,000 files, too big and too many for a
static host. So a site spreads results over ``data/samples/<k>.bin`` (``k`` = :func:`shard_of` the
result id, FNV-1a, which ``static/packed.js`` computes the same way) and series over
``data/trends/<k>.json``; the page fetches the one file that holds what it shows.

A samples file, little-endian: ``BDBS``, a uint32 header length, the UTF-8 JSON header (padded with
spaces so the body starts at a multiple of 8), then the body. The header:
``{"format": "benchdb-samples", "version": 1, "columns": [...], "results": {id: result}}``, each
result ``{"statistics", "command", "truncated", "segments"}``, a segment the samples of one metric,
unit and repeat in measurement order: ``[metric, unit, repeat, n, iteration, value, t_offset_s]``.

- ``iteration``: ``["from", first]`` when the iterations run first, first + 1, ... (as a runner
  records them), else ``["i32", at]``, ``n`` int32 at body offset ``at``;
- ``value`` and ``t_offset_s``: ``["const", v]`` (every sample the same, no bytes), ``["log", lo,
  hi, at]`` (``n`` uint16 ``q``, the value ``lo * (hi / lo) ** (q / 65535)``: positive values, each
  within a relative ``(hi / lo) ** (1 / 131070) - 1`` of the measured one), ``["lin", lo, hi, at]``
  (``lo + (hi - lo) * q / 65535``: within ``(hi - lo) / 131070``), or ``["f64", at]`` (exact: a
  segment holding a value that is not finite).

Every array starts at a multiple of 8. Two bytes a sample and column: 10M samples make 40 MB,
whatever their values; ``benchdb dashboard`` sends them exact.
"""

from __future__ import annotations

import json
import math
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from benchdb import sql

MAGIC = b"BDBS"
FORMAT = "benchdb-samples"
#: The steps of a quantised value: 16 bits.
STEPS = 65535
#: About this many samples to a file (256 KiB of them), and results: what a page fetches to show one.
SAMPLES_PER_SHARD = 65536
RESULTS_PER_SHARD = 256
#: About this many rows of history to a series file.
TREND_ROWS_PER_SHARD = 2048
#: Files of each kind at most, whatever the warehouse's size (a static host counts them).
MAX_SHARDS = 1024
MAX_TREND_SHARDS = 256


def shard_of(key: str, shards: int) -> int:
    """The file (0 .. shards - 1) holding ``key``: FNV-1a of its UTF-8 bytes, modulo ``shards``."""
    h = 0x811C9DC5
    for b in key.encode():
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    return h % shards


def shards_for(items: float, per: float, most: int) -> int:
    return max(1, min(most, math.ceil(items / per)))


def _codec(lo: np.ndarray, hi: np.ndarray, finite: np.ndarray, log_ok: bool) -> np.ndarray:
    """Per segment: 0 const, 1 log, 2 lin, 3 f64."""
    kind = np.full(lo.shape, 2, dtype=np.int8)
    if log_ok:
        kind[lo > 0] = 1
    kind[lo == hi] = 0
    kind[~finite] = 3
    return kind


KINDS = ("const", "log", "lin", "f64")


def _quantise(values: np.ndarray, lo: np.ndarray, hi: np.ndarray, kind: np.ndarray, n: np.ndarray) -> np.ndarray:
    """uint16 steps of every row under its segment's codec (rows of const and f64 segments: 0)."""
    k = np.repeat(kind, n)
    lo_r, hi_r = np.repeat(lo, n), np.repeat(hi, n)
    with np.errstate(all="ignore"):
        frac = np.where(k == 1, np.log(values / lo_r) / np.log(hi_r / lo_r), (values - lo_r) / (hi_r - lo_r))
    frac = np.where((k == 1) | (k == 2), frac, 0.0)
    return np.rint(np.clip(frac, 0.0, 1.0) * STEPS).astype("<u2")


def _param(kind: int, lo: float, hi: float) -> list:
    if kind == 0:
        return ["const", _num(lo)]
    if kind == 3:
        return ["f64"]
    return [KINDS[kind], float(lo), float(hi)]


def _num(v: float) -> float | None:
    return float(v) if math.isfinite(v) else None


class _Body:
    """A shard's body being written: arrays at offsets that are multiples of 8."""

    def __init__(self) -> None:
        self.chunks: list[bytes] = []
        self.size = 0

    def add(self, data: bytes) -> int:
        at = self.size
        self.chunks.append(data)
        self.size += len(data)
        pad = -self.size % 8
        if pad:
            self.chunks.append(b"\0" * pad)
            self.size += pad
        return at


def write_samples(con, folder: Path, about: dict[str, dict], limit: int) -> int:
    """Write every result's samples (at most ``limit`` a result, as the server sends) into shards under
    ``folder``; ``about``: each result's header fields (statistics, command), also of results without
    samples. Returns the number of shards."""
    seg = con.execute(sql.load("dashboard/site_sample_segments.sql")).fetchall()
    rows = con.execute(sql.load("dashboard/site_sample_columns.sql")).fetchnumpy()
    iteration = np.asarray(rows["iteration"], dtype=np.int64)
    t_offset = np.asarray(rows["t_offset_s"], dtype=np.float64)
    value = np.asarray(rows["value"], dtype=np.float64)
    n = np.array([s[4] for s in seg], dtype=np.int64)
    starts = np.concatenate(([0], np.cumsum(n)[:-1])).astype(np.int64) if len(n) else np.zeros(0, np.int64)
    if len(n):
        runs = np.zeros(len(iteration), dtype=np.int64)
        runs[1:] = np.diff(iteration) != 1
        runs[starts] = 0  # a segment's first row follows nothing of its own
        consecutive = np.add.reduceat(runs, starts) == 0
        columns = {}
        for name, col, log_ok in (("value", value, True), ("t_offset_s", t_offset, False)):
            finite = np.logical_and.reduceat(np.isfinite(col), starts)
            safe = np.where(np.isfinite(col), col, 0.0)
            lo, hi = np.minimum.reduceat(safe, starts), np.maximum.reduceat(safe, starts)
            kind = _codec(lo, hi, finite, log_ok)
            columns[name] = (col, lo, hi, kind, _quantise(col, lo, hi, kind, n))
    shards = shards_for(max(len(value) / SAMPLES_PER_SHARD, len(about) / RESULTS_PER_SHARD), 1, MAX_SHARDS)
    results: list[dict[str, dict]] = [{} for _ in range(shards)]
    bodies = [_Body() for _ in range(shards)]
    for rid, doc in about.items():
        results[shard_of(rid, shards)][rid] = {**doc, "truncated": False, "segments": []}
    taken: dict[str, int] = {}
    for i, (rid, metric, unit, repeat, _) in enumerate(seg):
        k = shard_of(rid, shards)
        entry = results[k].setdefault(rid, {"statistics": None, "command": None, "truncated": False, "segments": []})
        count = min(int(n[i]), limit - taken.get(rid, 0))
        if count <= 0:
            entry["truncated"] = True
            continue
        if count < n[i]:
            entry["truncated"] = True
        taken[rid] = taken.get(rid, 0) + count
        a = int(starts[i])
        body = bodies[k]
        if consecutive[i]:
            it: list = ["from", int(iteration[a])]
        else:
            it = ["i32", body.add(iteration[a : a + count].astype("<i4").tobytes())]
        packed = []
        for name in ("value", "t_offset_s"):
            col, lo, hi, kind, q = columns[name]
            param = _param(int(kind[i]), float(lo[i]), float(hi[i]))
            if kind[i] in (1, 2):
                param.append(body.add(q[a : a + count].tobytes()))
            elif kind[i] == 3:
                param.append(body.add(col[a : a + count].astype("<f8").tobytes()))
            packed.append(param)
        entry["segments"].append([metric, unit, int(repeat), count, it, *packed])
    for k in range(shards):
        header = json.dumps(
            {"format": FORMAT, "version": 1, "columns": list(COLUMNS), "results": results[k]},
            allow_nan=False,
            separators=(",", ":"),
        ).encode()
        header += b" " * (-(8 + len(header)) % 8)
        with open(folder / f"{k}.bin", "wb") as fh:
            fh.write(MAGIC + struct.pack("<I", len(header)) + header)
            fh.writelines(bodies[k].chunks)
    return shards


#: The columns of a result's samples, as the server's samples view sends them.
COLUMNS = ("metric", "unit", "repeat", "iteration", "t_offset_s", "value")


def read_samples(path: Path, result: str) -> dict[str, Any] | None:
    """One result's entry of a samples file, its rows decoded (as ``static/packed.js`` decodes
    them): ``{"columns", "rows", "truncated", "statistics", "command", "segments"}``; None when the
    file does not hold the result."""
    data = Path(path).read_bytes()
    if data[:4] != MAGIC:
        raise ValueError(f"{path}: not a benchdb samples file")
    (size,) = struct.unpack_from("<I", data, 4)
    header = json.loads(data[8 : 8 + size])
    entry = header["results"].get(result)
    if entry is None:
        return None
    body = memoryview(data)[8 + size :]
    rows: list[list] = []
    for metric, unit, repeat, count, it, *cols in entry["segments"]:
        its = (
            np.arange(it[1], it[1] + count)
            if it[0] == "from"
            else np.frombuffer(body, dtype="<i4", count=count, offset=it[1])
        )
        decoded = [_decode(body, param, count) for param in cols]
        rows += [[metric, unit, repeat, int(i), t, v] for i, v, t in zip(its, *decoded, strict=True)]
    return {**entry, "columns": header["columns"], "rows": rows}


def _decode(body, param: list, count: int) -> list:
    kind = param[0]
    if kind == "const":
        return [param[1]] * count
    if kind == "f64":
        return [_num(v) for v in np.frombuffer(body, dtype="<f8", count=count, offset=param[1])]
    lo, hi, at = param[1:]
    q = np.frombuffer(body, dtype="<u2", count=count, offset=at) / STEPS
    vals = lo * np.exp(q * math.log(hi / lo)) if kind == "log" else lo + (hi - lo) * q
    return [float(v) for v in vals]


def error_bound(param: list) -> float:
    """How far a decoded value may lie from the measured one: relative for ``log``, absolute for
    ``lin``, 0 for the exact codecs."""
    if param[0] == "log":
        return (param[2] / param[1]) ** (1 / (2 * STEPS)) - 1
    if param[0] == "lin":
        return (param[2] - param[1]) / (2 * STEPS)
    return 0.0


def write_trends(groups: Iterator[tuple[str, dict]], folder: Path, rows: int) -> tuple[int, int]:
    """Every series' history (``groups``: (series id, its trends document)) into shards of about
    :data:`TREND_ROWS_PER_SHARD` rows (``rows``: how many in all): ``{"columns", "series": {id:
    rows}, "truncated": [ids]}``. Returns (shards, series)."""
    shards = shards_for(rows, TREND_ROWS_PER_SHARD, MAX_TREND_SHARDS)
    docs: list[dict[str, Any]] = [{"columns": None, "series": {}, "truncated": []} for _ in range(shards)]
    count = 0
    for series, doc in groups:
        shard = docs[shard_of(series, shards)]
        shard["columns"] = doc["columns"]
        shard["series"][series] = doc["rows"]
        if doc["truncated"]:
            shard["truncated"].append(series)
        count += 1
    for k, doc in enumerate(docs):
        (folder / f"{k}.json").write_text(json.dumps(doc, allow_nan=False, separators=(",", ":")), encoding="utf-8")
    return shards, count

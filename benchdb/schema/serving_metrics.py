"""The serving metric vocabulary, defined once: per-request timings, percentiles, SLOs, goodput.

Pure functions over :class:`RequestRecord` (what the load generator saw of one streamed request,
on one monotonic clock), so every number a serving result holds is computed here and nowhere else
(the load generator, the CLI's summary and the tests all call these); :class:`StreamParser` turns
a streamed response into a record, so what counts as a token chunk is defined here too. Names and
units are those of
:mod:`benchdb.schema.serving` (the contract rows); the docs are in guides/serving.md. A request's
record and its own timings are in :mod:`benchdb.schema.serving_request`.

Definitions (all times in seconds, from the request's send):

- TTFT: send -> the first streamed chunk that carries content (a chat stream's role-only first
  chunk is not a token); E2E: send -> end of the stream; first byte: send -> response headers.
- TPOT: (E2E - TTFT) / (output_tokens - 1), only for requests with more than one output token:
  the mean time per token after the first, the figure an SLO on decode speed is written against.
- ITL per chunk: the gaps between consecutive content chunks. ITL per token: each gap divided by
  the later chunk's tokens, once per token, so a server that batches k tokens per chunk is not
  reported as k times slower per token (nor are its tokens counted once).
- Percentiles interpolate linearly (numpy's default) and need :func:`min_n` values:
  a p99 of 30 requests is NULL, never their maximum passed off as a p99.
- Goodput: requests that met every SLO, per second of the window; a failed request never meets it.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Sequence
from typing import Any

from benchdb.errors import BenchdbError, clip
from benchdb.schema.serving import (
    CHUNK_TOKENS,
    CLIENT_CPU,
    E2E,
    FIRST_BYTE,
    GOODPUT,
    INPUT_TOKENS,
    ITL_CHUNK,
    ITL_TOKEN,
    OUTPUT_THROUGHPUT,
    OUTPUT_TOKENS,
    REQUEST_ERROR,
    REQUEST_THROUGHPUT,
    TOTAL_THROUGHPUT,
    TPOT,
    TTFT,
    UNITS,
    WINDOW,
)
from benchdb.schema.serving_request import RequestMetrics, RequestRecord, request_metrics, token_count

#: One contract row: (metric, unit, iteration, t_offset_s, value).
Row = tuple[str, str, int, float, float]

#: The percentiles a summary reports per latency metric.
SUMMARY_PERCENTILES = (50, 90, 99)

#: Metrics an SLO may bound (short names accepted by :func:`parse_slo` -> contract names).
SLO_METRICS = {"ttft": TTFT, "tpot": TPOT, "e2e": E2E, "first_byte": FIRST_BYTE}
_SLO_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6}


def min_n(q: float) -> int:
    """Values a ``q``-th percentile needs, so that it lies between two observed values: 1 / tail
    (p90: 10, p95: 20, p99: 100), the rule of the warehouse's ``bdb_pct_min_n`` macro; a median
    needs one."""
    tail = min(q, 100.0 - q)
    return 1 if tail >= 50 else math.ceil(100.0 / tail - 1e-9) if tail > 0 else 1_000_000_000


def percentile(values: Sequence[float], q: float, *, need_min_n: bool = True) -> float | None:
    """The ``q``-th percentile (0..100) by linear interpolation between order statistics (numpy's
    default method); None with fewer than :func:`min_n` values (``need_min_n=False``: any value,
    as other tools' formats compute it, for an export in their terms)."""
    if not 0 <= q <= 100:
        raise ValueError(f"percentile must be within 0..100, got {q}")
    n = len(values)
    if n == 0 or (need_min_n and n < min_n(q)):
        return None
    x = sorted(values)
    pos = (n - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, n - 1)
    return x[lo] + (x[hi] - x[lo]) * (pos - lo)


def parse_slo(text: str | None) -> dict[str, float]:
    """``"ttft:500ms,tpot:50ms,e2e:2s"`` -> {contract metric: seconds}; units s, ms, us.
    A bad part raises a one-line BenchdbError naming it (a typo must not silently drop an SLO)."""
    slo: dict[str, float] = {}
    for part in (text or "").split(","):
        part = part.strip()
        if not part:
            continue
        name, sep, limit = part.partition(":")
        name = name.strip().lower()
        metric = SLO_METRICS.get(name) or (name if name in SLO_METRICS.values() else None)
        if not sep or metric is None:
            raise BenchdbError(
                f"SLO part {part!r}: expected METRIC:VALUE with METRIC one of "
                f"{', '.join(SLO_METRICS)} (e.g. ttft:500ms)"
            )
        m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*(s|ms|us)\s*", limit)
        if m is None:
            raise BenchdbError(
                f"SLO part {part!r}: the limit must be a number with unit s, ms or us (e.g. {name}:500ms)"
            )
        seconds = float(m.group(1)) * _SLO_UNITS[m.group(2)]
        if not seconds > 0 or not math.isfinite(seconds):
            raise BenchdbError(f"SLO part {part!r}: the limit must be positive")
        if metric in slo:
            raise BenchdbError(f"SLO part {part!r}: {name} is bounded twice")
        slo[metric] = seconds
    return slo


def meets_slo(metrics: RequestMetrics | None, slo: dict[str, float]) -> bool:
    """Whether a request met every bound of ``slo``. A failed request (None) never does; an
    undefined TPOT (one output token) has no decode phase to bound, any other undefined metric
    cannot be shown to meet its bound and fails it."""
    if metrics is None:
        return False
    for metric, limit in slo.items():
        value = metrics.get(metric)
        if value is None:
            if metric == TPOT:
                continue
            return False
        if value > limit:
            return False
    return True


def measured_in_order(records: Iterable[RequestRecord]) -> list[RequestRecord]:
    """The measured requests in send order (warm-up requests are never results)."""
    return sorted((r for r in records if not r.warmup), key=lambda r: (r.sent, r.index))


def summary(records: Iterable[RequestRecord], window_s: float, slo: dict[str, float] | None = None) -> dict[str, Any]:
    """The figures of one load point: counts, throughputs over ``window_s`` (successful requests
    only), goodput (None without an SLO: it would only repeat the request throughput) and the
    p50/p90/p99 of each latency metric (``{metric: {"p50": .., "p90": .., "p99": ..}}``)."""
    slo = slo or {}
    measured = measured_in_order(records)
    ok = [r for r in measured if r.ok]
    per = [m for m in (request_metrics(r) for r in ok) if m is not None]
    errors: dict[str, int] = {}
    for r in measured:
        if r.error is not None:
            errors[r.error] = errors.get(r.error, 0) + 1
    out_tokens = sum(r.tokens_out for r in ok)
    in_tokens = sum(r.input_tokens or 0 for r in ok)
    w = window_s if window_s > 0 else float("nan")
    series: dict[str, list[float]] = {
        TTFT: [m.ttft for m in per if m.ttft is not None],
        TPOT: [m.tpot for m in per if m.tpot is not None],
        ITL_TOKEN: [x for m in per for x in m.itl_token],
        ITL_CHUNK: [x for m in per for x in m.itl_chunk],
        E2E: [m.e2e for m in per if m.e2e is not None],
        FIRST_BYTE: [m.first_byte for m in per if m.first_byte is not None],
    }
    out: dict[str, Any] = {
        "requests": len(measured),
        "ok": len(ok),
        "errors": len(measured) - len(ok),
        "errors_by_message": errors,
        "input_tokens": in_tokens,
        "output_tokens": out_tokens,
        "window_s": window_s,
        REQUEST_THROUGHPUT: len(ok) / w,
        OUTPUT_THROUGHPUT: out_tokens / w,
        TOTAL_THROUGHPUT: (in_tokens + out_tokens) / w,
        GOODPUT: sum(meets_slo(request_metrics(r), slo) for r in measured) / w if slo else None,
        "slo": dict(slo),
    }
    for metric, values in series.items():
        out[metric] = {f"p{q}": percentile(values, q) for q in SUMMARY_PERCENTILES}
    return out


#: The largest share of a load point's measured requests that may fail with the point still valid.
#: A failed request has no latency: counted as infinitely slow, more than 10 % failed puts the load's
#: p90 among the failures, so the survivors' percentiles describe neither the load nor its tail.
MAX_FAILED_SHARE = 0.10


def failed_share(summ: dict[str, Any]) -> str | None:
    """The validity reason of a load point (a :func:`summary`) whose failed requests exceed
    :data:`MAX_FAILED_SHARE`; None within it. The live client's and every import's points alike."""
    n, failed = summ.get("requests") or 0, summ.get("errors") or 0
    if not n or failed / n <= MAX_FAILED_SHARE:
        return None
    return (
        f"failed_requests: {failed} of {n} requests failed ({failed / n:.0%}, limit {MAX_FAILED_SHARE:.0%}); "
        "the figures describe only the requests that completed"
    )


def rows(records: Iterable[RequestRecord], window_start: float) -> list[Row]:
    """The contract rows of the measured requests: per request (``t_offset_s`` = its send from
    ``window_start``; ``iteration`` = its index in send order, warm-up excluded) TTFT, E2E, TPOT
    (more than one token), first byte, tokens, the ITL rows; one ``chunk_tokens`` row per content
    chunk at its arrival; a failed request gives only its ``request_error`` row (value 1)."""
    out: list[Row] = []
    for i, rec in enumerate(measured_in_order(records)):
        t = rec.sent - window_start
        m = request_metrics(rec)
        if m is None:
            out.append((REQUEST_ERROR, UNITS[REQUEST_ERROR], i, t, 1.0))
            continue
        for metric, value in (
            (TTFT, m.ttft),
            (E2E, m.e2e),
            (TPOT, m.tpot),
            (FIRST_BYTE, m.first_byte),
            (INPUT_TOKENS, rec.input_tokens),
            (OUTPUT_TOKENS, rec.tokens_out),
        ):
            if value is not None:
                out.append((metric, UNITS[metric], i, t, float(value)))
        out.extend((ITL_CHUNK, UNITS[ITL_CHUNK], i, t, g) for g in m.itl_chunk)
        out.extend((ITL_TOKEN, UNITS[ITL_TOKEN], i, t, g) for g in m.itl_token)
        out.extend((CHUNK_TOKENS, UNITS[CHUNK_TOKENS], i, a - window_start, float(k)) for a, k in rec.chunks)
    return out


def point_rows(summ: dict[str, Any], client_cpu_pct: float | None) -> list[Row]:
    """The per-load-point rows (iteration 0, t_offset 0): throughputs, goodput (when an SLO was
    given), the window and the client's CPU use (so a saturated client is visible in the data)."""
    out: list[Row] = []
    for metric, value in (
        (REQUEST_THROUGHPUT, summ.get(REQUEST_THROUGHPUT)),
        (OUTPUT_THROUGHPUT, summ.get(OUTPUT_THROUGHPUT)),
        (TOTAL_THROUGHPUT, summ.get(TOTAL_THROUGHPUT)),
        (GOODPUT, summ.get(GOODPUT)),
        (WINDOW, summ.get("window_s")),
        (CLIENT_CPU, client_cpu_pct),
    ):
        if value is not None and math.isfinite(value):
            out.append((metric, UNITS[metric], 0, 0.0, float(value)))
    return out


#: The longest event-stream line (or event) a response may send: a longer one fails its request
#: rather than growing the client's buffer (a hostile or broken server could send gigabytes).
LINE_LIMIT = 1 << 20


class StreamParser:
    """A streamed response's server-sent events into ``rec``: here, next to the definitions, because
    it decides what a token chunk is (a completions chunk's ``text``, a chat chunk's
    ``delta.content``: a chat stream's role-only first chunk is none), that the server's usage
    counts, and that an error event (after HTTP 200) fails the request. Works with and without a
    final ``data: [DONE]`` (``transformers serve`` may just end the stream).

    The server is not trusted: its usage must be token counts (:func:`~benchdb.schema.serving_request.token_count`:
    whole, within the bounds every importer applies too), the completion
    tokens at least the content chunks seen and at most ``max_tokens`` (when given), and the prompt
    tokens at most ``max_prompt_tokens``; a line or event over :data:`LINE_LIMIT` fails the request.
    Each byte is scanned once (a line split over many reads is not rescanned)."""

    __slots__ = ("rec", "chat", "buf", "data", "data_bytes", "max_tokens", "max_prompt_tokens")

    def __init__(
        self, rec: RequestRecord, chat: bool, max_tokens: int | None = None, max_prompt_tokens: int | None = None
    ):
        self.rec, self.chat = rec, chat
        self.max_tokens, self.max_prompt_tokens = max_tokens, max_prompt_tokens
        self.buf = bytearray()
        self.data: list[bytes] = []
        self.data_bytes = 0

    def feed(self, piece: bytes, t: float) -> bool:
        """Take the bytes that arrived at ``t``; False once the stream carried an error."""
        buf = self.buf
        scan = len(buf)  # the bytes before have no newline: not searched again
        buf += piece
        start = 0
        while True:
            i = buf.find(b"\n", scan)
            if i < 0:
                break
            line = bytes(buf[start:i]).rstrip(b"\r")
            start = scan = i + 1
            if not line:
                if self.data and not self.dispatch(t):
                    return False
            elif line.startswith(b"data:") and not self.add(line):
                return False
        del buf[:start]
        if len(buf) > LINE_LIMIT:
            return self.too_long()
        return True

    def add(self, line: bytes) -> bool:
        data = line[6:] if line[5:6] == b" " else line[5:]
        self.data_bytes += len(data)
        if self.data_bytes > LINE_LIMIT:
            return self.too_long()
        self.data.append(data)
        return True

    def too_long(self) -> bool:
        self.rec.error = f"stream event longer than {LINE_LIMIT >> 20} MiB"
        self.buf.clear()
        self.data.clear()
        return False

    def close(self, t: float) -> None:
        """The stream ended: an event without its blank line still counts."""
        if self.buf.startswith(b"data:") and not self.add(bytes(self.buf)):
            return
        if self.data and not self.dispatch(t):
            return
        self.check_counts()

    def dispatch(self, t: float) -> bool:
        rec = self.rec
        payload = b"\n".join(self.data)
        self.data.clear()
        self.data_bytes = 0
        if not payload or payload.strip() == b"[DONE]":
            return True
        try:
            obj = json.loads(payload)
        except ValueError:
            rec.error = clip(f"malformed stream event: {payload[:200].decode(errors='replace')}")
            return False
        if not isinstance(obj, dict):
            return True
        if obj.get("error") is not None:
            err = obj["error"]
            rec.error = clip(f"stream error: {err.get('message', err) if isinstance(err, dict) else err}")
            return False
        for c in obj.get("choices") or []:
            if not isinstance(c, dict):
                continue
            text = (c.get("delta") or {}).get("content") if self.chat else c.get("text")
            if text:  # a chat stream's role-only chunk carries no content
                rec.chunks.append((t, 1))
                if rec.reply is not None and isinstance(text, str):
                    rec.reply.append(text)
        usage = obj.get("usage")
        if isinstance(usage, dict):
            try:
                prompt = token_count(usage.get("prompt_tokens"), "usage.prompt_tokens")
                completion = token_count(usage.get("completion_tokens"), "usage.completion_tokens")
                details = usage.get("prompt_tokens_details")
                if isinstance(details, dict) and details.get("cached_tokens") is not None:
                    rec.cached_tokens = token_count(details["cached_tokens"], "usage cached_tokens")
            except ValueError as exc:
                rec.error = str(exc)
                return False
            rec.input_tokens = prompt if prompt is not None else rec.input_tokens
            rec.output_tokens = completion if completion is not None else rec.output_tokens
        return True

    def check_counts(self) -> None:
        """At the stream's end: the usage against what was streamed and what was asked."""
        rec = self.rec
        out, chunks = rec.output_tokens, len(rec.chunks)
        if out is not None and (out < chunks or (self.max_tokens is not None and out > self.max_tokens)):
            asked = f" and at most max_tokens {self.max_tokens}" if self.max_tokens is not None else ""
            rec.error = (
                f"usage.completion_tokens {out} does not match the stream: at least the {chunks} content chunks{asked}"
            )
        elif rec.cached_tokens is not None and rec.input_tokens is not None and rec.cached_tokens > rec.input_tokens:
            rec.error = f"usage cached_tokens {rec.cached_tokens} is more than its prompt_tokens {rec.input_tokens}"
        elif (
            rec.input_tokens is not None
            and self.max_prompt_tokens is not None
            and rec.input_tokens > self.max_prompt_tokens
        ):
            rec.error = (
                f"usage.prompt_tokens {rec.input_tokens} is more than the request could hold ({self.max_prompt_tokens})"
            )

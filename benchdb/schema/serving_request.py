"""One streamed request as the serving client saw it (:class:`RequestRecord`), its derived
timings (:func:`request_metrics`: TTFT, E2E, TPOT, first byte, ITLs), as defined in
:mod:`benchdb.schema.serving_metrics`, and the bounds a request's figures must keep to be a
measurement at all (:func:`token_count`, :func:`implausible`).

The bounds are defined here once, for every source of requests: the live client applies them to
what a server claims (its usage counts; the timeline is the client's own monotonic clock), and every
importer to what another tool's file claims (counts and the whole timeline), so a figure beyond
them rejects the request (live) or its file (import) with the field named, never reaching a view.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from itertools import pairwise

from benchdb.errors import clip
from benchdb.schema.serving import E2E, FIRST_BYTE, TPOT, TTFT

#: The most tokens one request's prompt or output may count: 2**24 (16.8 M), past the longest
#: context any served model takes (10 M); a count beyond it is a broken or hostile writer.
MAX_REQUEST_TOKENS = 1 << 24
#: The fastest one request may produce output, tokens/s: a microsecond per token, hundreds of
#: times the fastest single-stream decoding published (a few thousand tokens/s). Checked over the
#: request's life (output tokens / E2E), not over its decode: a server that sends the whole
#: completion in one event honestly gives a TPOT of a fraction of a microsecond.
MAX_TOKENS_PER_S = 1e6
#: The longest one request may take, s: a day (the serving tools' clients give up within hours).
MAX_REQUEST_S = 86_400.0
#: The most tokens/s one accelerator may process (a published per-device throughput): a token of
#: the smallest LLM (1e8 parameters) costs 2e8 FLOPs and the fastest accelerator does about 1e16
#: FLOP/s, at most 5e7 tokens/s.
MAX_DEVICE_TOKENS_PER_S = 1e8


@dataclass
class RequestRecord:
    """What the client observed of one streamed request (times: ``time.perf_counter`` seconds)."""

    index: int
    sent: float
    first_byte: float | None = None
    #: (arrival time, tokens) per chunk that carried content; tokens is 1 per content chunk (the
    #: client does not tokenize), the server's usage gives the true total in ``output_tokens``.
    chunks: list[tuple[float, int]] = field(default_factory=list)
    end: float | None = None
    input_tokens: int | None = None
    #: The server's usage ``completion_tokens``, else the sum of the chunks' tokens.
    output_tokens: int | None = None
    error: str | None = None
    warmup: bool = False
    #: The first content chunk's arrival where no chunk timeline was kept (an imported GuideLLM
    #: request keeps only its first and last token times): TTFT is defined, the ITLs are not.
    first_token: float | None = None
    #: A workload's conversation (its number) and the request's turn in it, 1-based (--workload).
    session: int | None = None
    turn: int | None = None
    #: Prompt tokens the server says it served from its prefix cache (usage.prompt_tokens_details).
    cached_tokens: int | None = None
    #: The client's own estimate of the prompt's words an earlier request already sent or was sent
    #: (whole 16-word blocks), and the prompt's words: the prefix structure, whatever the server says.
    shared_words: int | None = None
    prompt_words: int | None = None
    #: When a replayed trace scheduled the request (its send is this plus the client's lag).
    scheduled: float | None = None
    #: The prompt's tokens as the model's own tokenizer counts them, where the client has it (a local
    #: model folder): the messages' texts, without a chat template.
    client_tokens: int | None = None
    #: The streamed reply's text, kept only where a later turn sends it back (never stored).
    reply: list[str] | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def tokens_out(self) -> int:
        """Output tokens: the server's usage when it sent one, else the content chunks' tokens."""
        if self.output_tokens is not None:
            return self.output_tokens
        return sum(k for _, k in self.chunks)


@dataclass(frozen=True)
class RequestMetrics:
    """The derived timings of one successful request (None where undefined)."""

    ttft: float | None
    e2e: float | None
    tpot: float | None
    first_byte: float | None
    itl_chunk: list[float]
    itl_token: list[float]

    def get(self, metric: str) -> float | None:
        """The value of a per-request contract metric (``ttft_s``, ``tpot_s``, ``e2e_s``, ...)."""
        return {TTFT: self.ttft, E2E: self.e2e, TPOT: self.tpot, FIRST_BYTE: self.first_byte}.get(metric)


def request_metrics(rec: RequestRecord) -> RequestMetrics | None:
    """TTFT, E2E, TPOT, first byte and the ITL lists of ``rec``; None for a failed request
    (its partial timings would flatter the latency distribution)."""
    if not rec.ok:
        return None
    first = rec.chunks[0][0] if rec.chunks else rec.first_token
    ttft = first - rec.sent if first is not None else None
    e2e = rec.end - rec.sent if rec.end is not None else None
    out = rec.tokens_out
    tpot = (e2e - ttft) / (out - 1) if ttft is not None and e2e is not None and out > 1 else None
    first_byte = rec.first_byte - rec.sent if rec.first_byte is not None else None
    itl_chunk: list[float] = []
    itl_token: list[float] = []
    for (t0, _), (t1, k) in pairwise(rec.chunks):
        gap = t1 - t0
        itl_chunk.append(gap)
        if k > 0:
            itl_token.extend([gap / k] * k)
    return RequestMetrics(ttft, e2e, tpot, first_byte, itl_chunk, itl_token)


#: Times a tool rebuilt from differences (a send plus its TTFT plus every gap) may come out this far
#: before the time they follow by rounding alone.
_ORDER_SLACK_S = 1e-6


def token_count(value: object, what: str) -> int | None:
    """A token count as a server or a file states it -> a whole number of tokens (None: not
    stated); ValueError naming ``what`` for a value that cannot be one (negative, fractional,
    non-finite, a string, a bool, past :data:`MAX_REQUEST_TOKENS` such as 1e23 or 10**23)."""
    if value is None:
        return None
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or value < 0
        or value != int(value)
        or value > MAX_REQUEST_TOKENS
    ):
        raise ValueError(
            f"{what} {clip(json.dumps(value), 60)} is not a token count (a whole number from 0 to {MAX_REQUEST_TOKENS})"
        )
    return int(value)


def implausible(rec: RequestRecord) -> str | None:
    """Why ``rec`` cannot be a measurement, naming the figure; None when it can. A failed request
    is only its send; a completed one needs its token counts within :func:`token_count`, a timeline
    of finite times in order (first token and chunks after the send, the end after them), an E2E of
    at most :data:`MAX_REQUEST_S` and output no faster than :data:`MAX_TOKENS_PER_S`."""
    if not math.isfinite(rec.sent):
        return f"send time {rec.sent!r} is not a time"
    if not rec.ok:
        return None
    try:
        token_count(rec.input_tokens, "input tokens")
        token_count(rec.output_tokens, "output tokens")
    except ValueError as exc:
        return str(exc)
    times = [("first token", rec.first_token)] + [(f"chunk {j}", t) for j, t in enumerate(a for a, _ in rec.chunks)]
    last, last_name = rec.sent, "the send"
    for name, t in [*times, ("end", rec.end)]:
        if t is None:
            continue
        if not math.isfinite(t) or t < last - _ORDER_SLACK_S:
            return f"{name} at {t!r} s is {'not a time' if not math.isfinite(t) else 'before ' + last_name}"
        last, last_name = t, name
    m = request_metrics(rec)
    span = m.e2e if m is not None and m.e2e is not None else (last - rec.sent)
    if span > MAX_REQUEST_S:
        return f"E2E {span:g} s is longer than any request takes (at most {MAX_REQUEST_S:g} s)"
    out = rec.tokens_out
    if out > MAX_TOKENS_PER_S * span:
        return (
            f"output tokens {out} in {span:g} s is faster than one request can produce "
            f"(at most {MAX_TOKENS_PER_S:g} tokens/s)"
        )
    return None

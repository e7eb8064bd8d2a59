"""One streamed request as the serving client saw it (:class:`RequestRecord`) and its derived
timings (:func:`request_metrics`: TTFT, E2E, TPOT, first byte, ITLs), as defined in
:mod:`benchdb.schema.serving_metrics`."""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import pairwise

from benchdb.schema.serving import E2E, FIRST_BYTE, TPOT, TTFT


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

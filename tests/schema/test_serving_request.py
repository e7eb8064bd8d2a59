"""One request's record and timings (benchdb.schema.serving_request): TTFT, E2E, TPOT and the ITLs of a
timeline written out by hand, none for a failed request; and the bounds a request's figures are held to,
each failure naming its figure."""

from __future__ import annotations

import pytest
from support.serving_records import timeline

from benchdb.schema.serving_request import (
    MAX_REQUEST_S,
    MAX_REQUEST_TOKENS,
    RequestRecord,
    implausible,
    request_metrics,
    token_count,
)

pytestmark = pytest.mark.core


def test_request_metrics_by_hand():
    m = request_metrics(timeline())
    assert m is not None
    assert m.ttft == pytest.approx(0.100)  # 10.100 - 10.000
    assert m.e2e == pytest.approx(0.200)  # 10.200 - 10.000
    assert m.first_byte == pytest.approx(0.020)
    assert m.tpot == pytest.approx((0.2 - 0.1) / 3)  # (E2E - TTFT) / (4 - 1)
    assert m.itl_chunk == pytest.approx([0.05, 0.04])
    # the 0.05 gap is shared by the 2 tokens of the later chunk, once per token
    assert m.itl_token == pytest.approx([0.025, 0.025, 0.04])


def test_tokens_from_chunks_without_usage_and_single_token():
    rec = timeline()
    rec.output_tokens = None
    assert rec.tokens_out == 4  # 1 + 2 + 1 chunk tokens
    one = RequestRecord(index=0, sent=0.0, chunks=[(0.3, 1)], end=0.31, output_tokens=1)
    m = request_metrics(one)
    assert m is not None and m.tpot is None and m.itl_chunk == [] and m.ttft == pytest.approx(0.3)


def test_failed_request_has_no_latency():
    rec = timeline()
    rec.error = "HTTP 500: boom"
    assert request_metrics(rec) is None


def test_a_token_count_is_a_whole_number_within_the_bound():
    assert token_count(None, "x") is None
    assert token_count(3.0, "x") == 3 and token_count(MAX_REQUEST_TOKENS, "x") == MAX_REQUEST_TOKENS
    for bad in (-1, 2.5, float("nan"), float("inf"), True, "3", MAX_REQUEST_TOKENS + 1, 1e23):
        with pytest.raises(ValueError, match=r"^usage.prompt_tokens .* is not a token count"):
            token_count(bad, "usage.prompt_tokens")


def test_an_implausible_request_names_the_figure_that_cannot_be():
    assert implausible(timeline()) is None
    assert implausible(RequestRecord(index=0, sent=1.0, error="HTTP 500")) is None  # only its send counts
    assert implausible(RequestRecord(index=0, sent=float("nan"), error="x")) == "send time nan is not a time"
    late = timeline()
    late.chunks = [(10.1, 1), (9.0, 2)]
    assert implausible(late) == "chunk 1 at 9.0 s is before chunk 0"
    early_end = timeline()
    early_end.end = 10.05
    assert implausible(early_end) == "end at 10.05 s is before chunk 2"
    tokens = timeline()
    tokens.input_tokens = -4
    assert implausible(tokens).startswith("input tokens -4 is not a token count")
    long = RequestRecord(index=0, sent=0.0, chunks=[(1.0, 1)], end=MAX_REQUEST_S + 1, output_tokens=2)
    assert implausible(long).startswith(f"E2E {MAX_REQUEST_S + 1:g} s is longer than any request takes")
    fast = RequestRecord(index=0, sent=0.0, chunks=[(0.001, 1)], end=0.002, output_tokens=10_000)
    assert implausible(fast).startswith("output tokens 10000 in 0.002 s is faster than one request can produce")

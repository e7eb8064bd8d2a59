"""The serving metric definitions against values computed by hand on written-out timelines."""

from __future__ import annotations

import numpy as np
import pytest
from support.serving_records import timeline

from benchdb.errors import BenchdbError
from benchdb.schema.serving import (
    CHUNK_TOKENS,
    CLIENT_CPU,
    E2E,
    GOODPUT,
    ITL_CHUNK,
    ITL_TOKEN,
    OUTPUT_THROUGHPUT,
    REQUEST_ERROR,
    REQUEST_THROUGHPUT,
    TOTAL_THROUGHPUT,
    TPOT,
    TTFT,
    WINDOW,
)
from benchdb.schema.serving_metrics import StreamParser, meets_slo, parse_slo, percentile, point_rows, rows, summary
from benchdb.schema.serving_request import RequestRecord, request_metrics

pytestmark = pytest.mark.core


def test_percentile_interpolates_like_numpy_and_needs_enough_values():
    values = [0.3, 0.1, 0.4, 0.15, 0.9, 0.2, 0.7, 0.5, 0.6, 0.8]
    assert percentile(values, 50) == pytest.approx(float(np.percentile(values, 50)))
    assert percentile(values, 90) == pytest.approx(float(np.percentile(values, 90)))  # 10 values: ok
    assert percentile([1.0, 2.0, 3.0, 4.0], 50) == pytest.approx(2.5)
    assert percentile(list(range(99)), 99) is None  # never the max of 99 values
    assert percentile([float(x) for x in range(100)], 99) == pytest.approx(98.01)
    assert percentile(values[:9], 90) is None
    assert percentile([], 50) is None


def test_parse_slo_units_and_errors():
    assert parse_slo("ttft:500ms,tpot:50ms,e2e:2s") == pytest.approx({TTFT: 0.5, TPOT: 0.05, E2E: 2.0})
    assert parse_slo(" ttft : 250us ") == pytest.approx({TTFT: 250e-6})
    assert parse_slo("") == {}
    for bad, named in (
        ("ttft:5xs", "ttft:5xs"),
        ("latency:1s", "latency:1s"),
        ("ttft", "ttft"),
        ("ttft:0ms", "ttft:0ms"),
        ("e2e:1s,e2e:2s", "e2e:2s"),
    ):
        with pytest.raises(BenchdbError) as e:
            parse_slo(bad)
        assert named in str(e.value) and "\n" not in str(e.value)


def test_meets_slo():
    m = request_metrics(timeline())
    assert meets_slo(m, parse_slo("ttft:100.1ms,tpot:40ms,e2e:1s"))
    assert not meets_slo(m, parse_slo("ttft:99ms"))
    assert not meets_slo(None, {})  # a failed request never meets it
    one = request_metrics(RequestRecord(index=0, sent=0.0, chunks=[(0.1, 1)], end=0.1, output_tokens=1))
    assert meets_slo(one, parse_slo("tpot:1ms"))  # no decode phase to bound


def test_summary_goodput_and_throughput_with_errors():
    recs = []
    for i in range(4):  # TTFT 0.1, 0.2, 0.3, 0.4
        s = float(i)
        recs.append(
            RequestRecord(
                index=i,
                sent=s,
                first_byte=s + 0.01,
                chunks=[(s + 0.1 * (i + 1), 1), (s + 0.5, 1)],
                end=s + 0.5,
                input_tokens=10,
                output_tokens=2,
            )
        )
    recs.append(RequestRecord(index=4, sent=4.0, end=4.1, error="HTTP 500: boom"))
    recs.append(RequestRecord(index=0, sent=-1.0, chunks=[(-0.9, 1)], end=-0.5, output_tokens=1, warmup=True))
    s = summary(recs, window_s=5.0, slo=parse_slo("ttft:250ms"))
    assert (s["requests"], s["ok"], s["errors"]) == (5, 4, 1)
    assert s["errors_by_message"] == {"HTTP 500: boom": 1}
    assert s[REQUEST_THROUGHPUT] == pytest.approx(4 / 5)
    assert s[OUTPUT_THROUGHPUT] == pytest.approx(8 / 5)
    assert s[TOTAL_THROUGHPUT] == pytest.approx(48 / 5)
    assert s[GOODPUT] == pytest.approx(2 / 5)  # TTFT 0.1 and 0.2 meet 250 ms
    assert s[TTFT]["p50"] == pytest.approx(0.25) and s[TTFT]["p99"] is None
    assert summary(recs, 5.0)[GOODPUT] is None  # no SLO: no goodput figure


def test_rows_contract():
    rec = timeline()
    failed = RequestRecord(index=1, sent=10.5, end=10.6, error="stream error: x")
    warm = RequestRecord(index=0, sent=9.0, chunks=[(9.1, 1)], end=9.2, output_tokens=1, warmup=True)
    out = rows([failed, rec, warm], window_start=9.5)
    by = {}
    for metric, unit, it, t, v in out:
        by.setdefault(metric, []).append((unit, it, round(t, 9), round(v, 9)))
    assert by[TTFT] == [("s", 0, 0.5, 0.1)]  # t_offset: send 10.0 - window 9.5
    assert by[TPOT] == [("s", 0, 0.5, round(0.1 / 3, 9))]
    assert by[ITL_TOKEN] == [("s", 0, 0.5, 0.025), ("s", 0, 0.5, 0.025), ("s", 0, 0.5, 0.04)]
    assert [x[3] for x in by[ITL_CHUNK]] == [0.05, 0.04]
    assert by[CHUNK_TOKENS] == [("tokens", 0, 0.6, 1.0), ("tokens", 0, 0.65, 2.0), ("tokens", 0, 0.69, 1.0)]
    assert by[REQUEST_ERROR] == [("count", 1, 1.0, 1.0)]  # iteration 1: sent after rec
    assert all(it in (0, 1) for _, _, it, _, _ in out)  # the warm-up request left no row
    pts = {m: (it, t, v) for m, _, it, t, v in point_rows(summary([rec], 2.0), 37.5)}
    assert pts[CLIENT_CPU] == (0, 0.0, 37.5) and pts[WINDOW] == (0, 0.0, 2.0)
    assert GOODPUT not in pts


def test_stream_parser_chat_role_chunk_split_reads_and_no_done():
    rec = RequestRecord(index=0, sent=0.0)
    p = StreamParser(rec, chat=True)
    role = b'data: {"choices":[{"index":0,"delta":{"role":"assistant"}}]}\n\n'
    tok = b'data: {"choices":[{"index":0,"delta":{"content":" hi"}}]}\n\n'
    usage = (
        b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"length"}],'
        b'"usage":{"prompt_tokens":3,"completion_tokens":2}}'
    )
    assert p.feed(role, 0.01)  # role only: no token
    assert p.feed(tok[:20], 0.02) and p.feed(tok[20:] + tok, 0.03)  # an event split across reads
    assert p.feed(usage, 0.04)
    p.close(0.05)  # the stream ends without a blank line or [DONE]
    assert rec.chunks == [(0.03, 1), (0.03, 1)]
    assert (rec.input_tokens, rec.output_tokens, rec.error) == (3, 2, None)


def test_stream_parser_error_event_fails_the_request():
    rec = RequestRecord(index=0, sent=0.0)
    p = StreamParser(rec, chat=False)
    assert p.feed(b'data: {"choices":[{"text":"a"}]}\r\n\r\n', 0.1)
    assert not p.feed(b'data: {"error": "CUDA out of memory"}\n\n', 0.2)
    assert rec.error == "stream error: CUDA out of memory" and rec.chunks == [(0.1, 1)]

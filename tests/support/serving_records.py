"""One streamed request written out by hand, for the serving metric tests."""

from __future__ import annotations

from benchdb.schema.serving_request import RequestRecord


def timeline() -> RequestRecord:
    """Sent at 10.000; headers 10.020; chunks at 10.100 (1 token), 10.150 (2 tokens), 10.190
    (1 token); stream ends 10.200; usage: 7 in, 4 out."""
    return RequestRecord(
        index=0,
        sent=10.0,
        first_byte=10.02,
        chunks=[(10.1, 1), (10.15, 2), (10.19, 1)],
        end=10.2,
        input_tokens=7,
        output_tokens=4,
    )

"""Serving tools' load points in benchdb's one vocabulary (benchdb.interop.load_points): a load point
becomes a result whose rows benchdb's own serving metrics computed, keyed by its load in the grammar of
benchdb's runs; a load no run could have, a request no server could have served, or a file with neither
requests nor figures is refused naming the point."""

from __future__ import annotations

import pytest

from benchdb.interop.load_points import LoadPoint, to_imported
from benchdb.interop.writer import SourceError
from benchdb.schema.serving import E2E, REQUEST_THROUGHPUT, TTFT
from benchdb.schema.serving_request import RequestRecord

pytestmark = pytest.mark.core


def test_rates_are_written_without_exponents():
    from benchdb.interop.load_points import decimal

    assert [decimal(x) for x in (1e-5, 20.0, 1234567.0, 0.5)] == ["0.00001", "20", "1234567", "0.5"]


def _records(n: int = 10) -> list[RequestRecord]:
    """Requests 1 s apart, each 0.1 s to its first of 4 chunks and 0.4 s in all; 12 prompt tokens."""
    return [
        RequestRecord(
            index=i, sent=float(i), chunks=[(i + 0.1 + 0.1 * k, 1) for k in range(4)], end=i + 0.4,
            input_tokens=12, output_tokens=4,
        )
        for i in range(n)
    ]  # fmt: skip


def _point(**kw) -> LoadPoint:
    base = dict(tool="vllm", tool_version="0.9", model_id="m", endpoint="completions", run_key="k", concurrency=2)
    return LoadPoint(**{**base, "records": _records(), "engine_options": {"dtype": "bfloat16"}, **kw})


def test_a_load_point_becomes_a_result_computed_by_benchdbs_serving_metrics():
    imp = to_imported(_point(out_tokens=4))
    assert (imp.input_shape, imp.batch_size, imp.precision, imp.primary_metric) == (
        "in=12,out=4,concurrency=2",
        2,
        "bf16",
        TTFT,
    )
    assert imp.validity == "valid" and not imp.summary_only and imp.options["load_generator"] == "vllm"
    assert imp.values(TTFT) == pytest.approx([0.1] * 10) and imp.values(E2E) == pytest.approx([0.4] * 10)
    assert imp.values(REQUEST_THROUGHPUT) == pytest.approx([10 / 9.4])  # first send to last end
    rated = to_imported(_point(rate=0.5, arrival="gamma", burstiness=2.0))
    assert rated.input_shape == "in=12,out=4,rate=gamma:0.5:2,max_concurrency=2" and rated.batch_size == 1


def test_a_load_or_request_no_server_could_have_is_refused_naming_the_point():
    for kw, why in (
        ({"endpoint": "embeddings"}, "endpoint 'embeddings' is neither completions nor chat"),
        ({"rate": 0.0}, "request rate 0 is not a positive number"),
        ({"concurrency": 0}, "concurrency 0 is not a positive number"),
        ({"concurrency": None}, "the file gives neither a concurrency nor a request rate"),
        ({"window_s": 0.2}, "duration 0.2 s is shorter than its longest request"),
        ({"records": [RequestRecord(index=0, sent=0.0, error="HTTP 500")]}, "no request of this run completed"),
        ({"records": None}, "neither per-request data nor summary figures"),
    ):
        with pytest.raises(SourceError, match=f"^m: {why}"):
            to_imported(_point(**kw))
    bad = _records()
    bad[3].cached_tokens = 13  # more of the prompt cached than it has
    with pytest.raises(SourceError, match="^m: request 3: 13 cached prompt tokens of 12 input tokens"):
        to_imported(_point(records=bad))


def test_a_summary_only_point_keeps_the_tools_figures_and_says_nothing_was_recomputed():
    figures = [(TTFT, "s", "median", 0.12)]
    imp = to_imported(_point(records=None, statistics=figures, definitions={TTFT: {"source_metric": "ttft"}}))
    assert imp.summary_only and imp.rows == [] and imp.statistics == figures
    assert imp.definitions[TTFT] == {
        "source_metric": "ttft",
        "recomputed": False,
        "why": "summary-only file: no per-request data",
    }
    assert imp.input_shape == "in=unknown,out=unknown,concurrency=2"

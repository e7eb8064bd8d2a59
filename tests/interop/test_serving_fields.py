"""What the serving format modules share to read a tool's file (benchdb.interop.serving_fields): engine
names and options typed, a tool's own figures, requests rebuilt from vLLM's and SGLang's per-request
lists on the tool's clock, and every number, length, token count and turn checked, a bad one refusing
the file by its field. Values written out by hand."""

from __future__ import annotations

import pytest

from benchdb.interop import serving_fields as sf
from benchdb.interop.writer import SourceError

pytestmark = pytest.mark.core


def test_engine_names_and_options_as_benchdb_keys_them():
    assert [sf.engine_name(t) for t in ("vLLM", " sglang-oai ", "trt-llm", "vllm-0.9", "mystery", None)] == [
        "vllm", "sglang", "tensorrt-llm", "vllm", None, None,
    ]  # fmt: skip
    got = sf.engine_options({"tp": "4", "Max-Num-Seqs": 256, "enable_prefix_caching": "True", "dtype": "bf16", "x": 1})
    assert got == {"tensor_parallel_size": 4, "max_num_seqs": 256, "enable_prefix_caching": True, "dtype": "bf16"}


def test_a_tools_own_figures_finite_numbers_only():
    doc = {"median_ttft_ms": 12.5, "std_itl_ms": 0.5, "p99.9_tpot_ms": 3, "request_throughput": 4.0, "bad": 1.0}
    doc |= {"mean_e2el_ms": float("nan"), "p50_ttft_ms": True}
    assert sorted(sf.summary_figures(doc, {"request_throughput": "req/s"})) == [
        ("itl_ms", "ms", "stddev", 0.5),
        ("request_throughput", "req/s", "value", 4.0),
        ("tpot_ms", "ms", "p99.9", 3.0),
        ("ttft_ms", "ms", "median", 12.5),
    ]
    dist = {"median": 0.2, "p99": float("inf"), "mean": "x"}
    assert sf.distribution_stats("ttft_s", "s", dist, {"median": "median", "p99": "p99", "mean": "mean"}) == [
        ("ttft_s", "s", "median", 0.2)
    ]
    assert sf.distribution_stats("ttft_s", "s", None, {"median": "median"}) == []


def test_requests_from_per_request_lists_on_the_tools_clock():
    doc = {
        "ttfts": [0.1, 0.2, 0.0],
        "itls": [[0.05, 0.05], [0.1], []],
        "input_lens": [7, 9, 3],
        "output_lens": [3, 2, 0],
        "errors": ["", "", "Traceback ...\nTimeoutError: read timed out"],
        "start_times": [2.0, 1.0, 3.0],
    }
    a, b, failed = sf.records_from_lists(doc, "f.json")
    assert a.sent == 2.0 and [round(t, 9) for t, _ in a.chunks] == [2.1, 2.15, 2.2] and a.end == pytest.approx(2.2)
    assert (a.input_tokens, a.output_tokens, a.cached_tokens) == (7, 3, None)
    assert failed.error == "TimeoutError: read timed out" and failed.chunks == []
    assert [(r.index, r.sent) for r in sf.records_in_order([a, b, failed])] == [(0, 1.0), (1, 2.0), (2, 3.0)]
    sglang = {**doc, "cached_tokens": [4, 0, 0], "cached_tokens_details": [{"device": 4}, None, None]}
    assert [r.cached_tokens for r in sf.records_from_lists(sglang, "f.json")] == [4, None, None]


def test_a_bad_list_or_value_refuses_the_file_by_its_field():
    good = {"ttfts": [0.1], "itls": [[0.05]], "output_lens": [2], "input_lens": [5]}
    for change, why in (
        ({"ttfts": None}, "f.json: per-request ttfts missing"),
        (
            {"ttfts": [0.1, 0.2]},
            r"f.json: the per-request lists disagree in length \(input_lens 1, output_lens 1, ttfts 2, itls 1\)",
        ),
        ({"itls": "0.05"}, "f.json: itls is not a list"),
        ({"ttfts": [-0.1]}, r"ttfts\[0\] is -0.1: a time or a length cannot be negative"),
        ({"itls": [[float("nan")]]}, r"itls\[0\]\[0\] is nan, not a number"),
        ({"output_lens": [2.5]}, r"output_lens\[0\] 2.5 is not a token count"),
        ({"input_lens": [0]}, r"f.json: input_lens\[0\] is 0 for a completed request"),
    ):
        with pytest.raises(SourceError, match=f"^{why}"):
            sf.records_from_lists({**good, **change}, "f.json")
    assert [sf.turn(t, "turn") for t in (0, 4)] == [1, 5]
    for bad in (-1, True, 1.0, sf.MAX_TURNS):
        with pytest.raises(SourceError, match="^turn is .*, not a turn index"):
            sf.turn(bad, "turn")


def test_a_tools_totals_that_no_run_could_have():
    assert sf.summary_accounting(100, 20, 10) is None and sf.summary_accounting(None, "x", 3) is None
    assert sf.summary_accounting(0, None, 10) == (
        "the tool counts 0 input tokens over 10 completed requests (a prompt has at least one token)"
    )
    assert sf.summary_accounting(100, 150, 10) == "the tool counts 150 cached prompt tokens of 100 input tokens"

"""Imports keep conversations: GuideLLM multi-turn, AIPerf multi-turn and trace-replay
results carry each request's conversation and turn, so their turn figures (TTFT of first and later
turns, conversation time, cached tokens and cache-hit share) are computed by the functions benchdb's
own multi-turn runs use; SGLang's agentic-trace file keeps no turns and says why its totals cannot be
its requests'. Expected values are computed by hand from the raw files. Fixtures: real output of
each tool against the stub (tests/fixtures/interop/serving/README.md, section 3)."""

from __future__ import annotations

import json
import statistics
from collections import defaultdict

import pytest
from conftest import db_rows as rows
from conftest import import_and_ingest
from support.serving_imports import FIX, medians

pytestmark = pytest.mark.core

TURNS = FIX / "turns"


def _point(db):
    (pt,) = rows(
        db,
        "SELECT input_shape, CAST(settings AS VARCHAR) AS settings, CAST(options AS VARCHAR) AS options FROM results",
    )
    return pt["input_shape"], json.loads(pt["settings"]), json.loads(pt["options"])


def _expect(got, first, later, sessions, cached, prompt):
    """The warehouse's turn figures against the hand-computed ones (lists of seconds, tokens)."""
    assert got["ttft_first_turn_s"] == (pytest.approx(statistics.median(first), rel=1e-9), len(first))
    assert got["ttft_later_turns_s"] == (pytest.approx(statistics.median(later), rel=1e-9), len(later))
    assert got["session_s"] == (pytest.approx(statistics.median(sessions), rel=1e-9), len(sessions))
    assert got["cached_tokens"] == (pytest.approx(statistics.median(cached)), len(cached))
    assert got["cache_hit_pct"][0] == pytest.approx(100 * sum(cached) / sum(prompt), rel=1e-9)
    assert got["turn"][1] == len(first) + len(later)


def _guidellm():
    src = TURNS / "guidellm" / "guidellm_multiturn_c2.json"
    return src, json.loads(src.read_text())


def test_guidellm_multi_turn_keeps_turns_conversations_and_cached_tokens(tmp_path):
    src, doc = _guidellm()
    bench = doc["benchmarks"][0]
    ok = bench["requests"]["successful"]
    first, later, cached, prompt = [], [], [], []
    spans = defaultdict(list)
    for r in ok:
        t, info = r["info"]["timings"], r["info"]
        (first if info["turn_index"] == 0 else later).append(t["first_token_iteration"] - t["request_start"])
        cached.append(r["cached_tokens"])
        prompt.append(r["prompt_tokens"])
        spans[info["conversation_id"]] += [t["request_start"], t["request_end"]]
    sessions = [max(s) - min(s) for s in spans.values()]
    db = import_and_ingest(tmp_path, "guidellm", src)
    shape, settings, options = _point(db)
    got = medians(db, shape)
    _expect(got, first, later, sessions, cached, prompt)
    assert (len(first), len(later), len(sessions)) == (3, 6, 3) and sum(cached) > 0
    assert options["workload"] == "multi-turn:turns=3" and shape == "in=16,out=8,concurrency=2,multi-turn"
    assert (settings["conversations"], settings["whole_conversations"]) == (3, 3)
    # GuideLLM's own per-turn summary reads alike: its first turn's TTFT is benchdb's first-turn TTFT
    (turn0,) = [t for t in bench["metrics"]["turns"] if t["turn_index"] == 0]
    own = turn0["time_to_first_token_ms"]["successful"]["median"] / 1e3
    assert got["ttft_first_turn_s"][0] == pytest.approx(own, rel=1e-9)


def test_a_conversation_cut_short_is_no_whole_conversation(tmp_path):
    """A run stopped by its limit mid-conversation: the turns the data fixes (3) tell a conversation
    with 2 apart; one with a turn GuideLLM left incomplete is cut short wherever its turns stop."""
    src, doc = _guidellm()
    reqs = doc["benchmarks"][0]["requests"]
    convs = sorted({r["info"]["conversation_id"] for r in reqs["successful"]})
    last = max(
        (r for r in reqs["successful"] if r["info"]["conversation_id"] == convs[0]),
        key=lambda r: r["info"]["turn_index"],
    )
    reqs["successful"].remove(last)
    stopped = tmp_path / "stopped.json"
    stopped.write_text(json.dumps(doc))
    db = import_and_ingest(tmp_path / "a", "guidellm", stopped)
    shape, settings, _ = _point(db)
    assert medians(db, shape)["session_s"][1] == 2 and settings["whole_conversations"] == 2
    # the same, its last turn listed as incomplete, and the data's turn count unknown (no fixed turns)
    reqs["incomplete"] = [last]
    doc["config"]["spec"]["data"][0]["turns"] = None
    cut = tmp_path / "cut.json"
    cut.write_text(json.dumps(doc))
    db = import_and_ingest(tmp_path / "b", "guidellm", cut)
    shape, settings, options = _point(db)
    assert medians(db, shape)["session_s"][1] == 2 and options["workload"] == "multi-turn"


def _aiperf(folder):
    lines = [json.loads(x) for x in (TURNS / folder / "profile_export.jsonl").read_text().splitlines()]
    base = min(d["metadata"]["request_start_ns"] for d in lines)  # epoch ns as float s would lose 0.2 us
    first, later, cached, prompt = [], [], [], []
    spans = defaultdict(list)
    for d in lines:
        meta, m = d["metadata"], {k: v["value"] for k, v in d["metrics"].items()}
        (first if meta["turn_index"] == 0 else later).append(m["time_to_first_token"] / 1e3)
        cached.append(m["usage_prompt_cache_read_tokens"])
        prompt.append(m["usage_prompt_tokens"])
        start = (meta["request_start_ns"] - base) / 1e9
        spans[meta["x_correlation_id"]] += [start, start + m["request_latency"] / 1e3]
    sessions = [max(s) - min(s) for s in spans.values()]
    summary = json.loads((TURNS / folder / "profile_export_aiperf.json").read_text())
    return first, later, sessions, cached, prompt, summary


@pytest.mark.parametrize(
    "folder, workload, shape",
    [
        ("aiperf_multiturn", "multi-turn:turns=3", "in=16,out=8,concurrency=2,multi-turn"),
        ("aiperf_trace", "trace", "in=trace,out=trace,rate=trace:1,trace"),
    ],
)
def test_aiperf_multi_turn_and_trace_replay_keep_their_sessions(tmp_path, folder, workload, shape):
    first, later, sessions, cached, prompt, summary = _aiperf(folder)
    db = import_and_ingest(tmp_path, "aiperf", TURNS / folder)
    got_shape, settings, options = _point(db)
    got = medians(db, shape)
    _expect(got, first, later, sessions, cached, prompt)
    # the shape of a benchdb run of the same workload: a trace's lengths are its lines', the kind last
    assert got_shape == shape and options["workload"] == workload
    assert settings["conversations"] == settings["whole_conversations"] == len(sessions)
    # AIPerf's own overall cache-read share reads alike
    assert got["cache_hit_pct"][0] == pytest.approx(summary["overall_usage_prompt_cache_read_pct"]["avg"], rel=1e-9)
    assert "token_accounting" not in settings


def test_a_cancelled_turn_cuts_its_aiperf_session(tmp_path):
    """A trace does not fix its sessions' turns: the session of a cancelled last turn would look
    whole with the turns before it, but AIPerf's record of the cancellation says it is not."""
    lines = (TURNS / "aiperf_trace" / "profile_export.jsonl").read_text().splitlines()
    doc = json.loads(lines[-1])
    assert doc["metadata"]["turn_index"] == 2
    doc["metadata"]["was_cancelled"] = True
    run = tmp_path / "run"
    run.mkdir()
    (run / "profile_export.jsonl").write_text("\n".join([*lines[:-1], json.dumps(doc)]) + "\n")
    (run / "profile_export_aiperf.json").write_text((TURNS / "aiperf_trace" / "profile_export_aiperf.json").read_text())
    db = import_and_ingest(tmp_path, "aiperf", run)
    shape, settings, _ = _point(db)
    assert medians(db, shape)["session_s"][1] == 2 and settings["whole_conversations"] == 2


def test_sglang_agentic_trace_keeps_no_turns_and_flags_its_input_total(tmp_path):
    src = TURNS / "sglang" / "agentic_trace_c2.jsonl"
    doc = json.loads(src.read_text())
    db = import_and_ingest(tmp_path, "sglang-serve", src, extra=("--model", "stub"))
    shape, settings, options = _point(db)
    got = medians(db, shape)
    assert got["ttft_s"] == (pytest.approx(statistics.median(doc["ttfts"]), rel=1e-9), doc["completed"])
    # no request names its conversation or turn; SGLang's cached counts of 0 without details are none
    assert not {"turn", "ttft_first_turn_s", "session_s", "cached_tokens", "cache_hit_pct"} & set(got)
    assert doc["total_input_tokens"] == 0 and doc["completed"] == 8
    assert settings["token_accounting"] == (
        "the tool counts 0 input tokens over 8 completed requests (a prompt has at least one token)"
    )
    assert "sglang#39889" in settings["input_lens_dropped"] and options["workload"] == "multi-turn"
    assert shape == "in=unknown,out=8,concurrency=2,multi-turn"


def test_a_file_without_turns_imports_as_before(tmp_path):
    """One-turn requests name a conversation at turn 0 too (GuideLLM, AIPerf): no turn figure, no
    workload key, so the ids of every import before conversations stay."""
    db = import_and_ingest(tmp_path, "guidellm", FIX / "guidellm" / "guidellm_c2.json")
    shape, settings, options = _point(db)
    assert not {"turn", "ttft_first_turn_s", "session_s", "cached_tokens"} & set(medians(db, shape))
    assert "workload" not in options and "conversations" not in settings


def test_an_aiperf_summary_with_more_cache_hits_than_tokens_is_flagged(tmp_path):
    summary = json.loads((TURNS / "aiperf_trace" / "profile_export_aiperf.json").read_text())
    summary["total_usage_prompt_cache_read_tokens"]["avg"] = summary["total_usage_prompt_tokens"]["avg"] + 1
    run = tmp_path / "run"
    run.mkdir()
    (run / "profile_export_aiperf.json").write_text(json.dumps(summary))
    db = import_and_ingest(tmp_path, "aiperf", run)
    shape, settings, options = _point(db)
    assert settings["token_accounting"] == "the tool counts 310 cached prompt tokens of 309 input tokens"
    # the summary alone keys the point as its records would: the same workload and shape
    assert shape == "in=trace,out=trace,rate=trace:1,trace" and options["workload"] == "trace"

"""A workload's conversations in the serving metrics (benchdb.schema.serving_sessions): per request its
turn, TTFT by turn kind and cached tokens; per conversation that ran every turn, its time; per load point
the cache-hit share and the conversations that met an SLO; and whether the server's input counts agree
with the model's tokenizer. Records written out by hand."""

from __future__ import annotations

import pytest

from benchdb.schema import serving_sessions
from benchdb.schema.serving import (
    CACHE_HIT_PCT,
    CACHED_TOKENS,
    SESSION,
    SESSION_GOODPUT,
    TTFT_FIRST_TURN,
    TTFT_LATER_TURNS,
    TURN,
)
from benchdb.schema.serving_metrics import parse_slo
from benchdb.schema.serving_request import RequestRecord

pytestmark = pytest.mark.core


def _turn(session: int, turn: int, sent: float, ttft: float, cached: int, error: str | None = None) -> RequestRecord:
    return RequestRecord(
        index=0, sent=sent, chunks=[(sent + ttft, 1), (sent + ttft + 0.01, 1)], end=sent + ttft + 0.02,
        input_tokens=100, output_tokens=2, cached_tokens=cached, session=session, turn=turn, error=error,
    )  # fmt: skip


def _conversations() -> list[RequestRecord]:
    """Conversation 1 runs both its turns; conversation 2's second turn fails."""
    return [
        _turn(1, 1, 0.0, 0.10, 0),
        _turn(2, 1, 0.5, 0.30, 0),
        _turn(1, 2, 1.0, 0.05, 80),
        _turn(2, 2, 1.5, 0.05, 80, error="HTTP 500"),
    ]


def test_rows_name_each_turn_and_time_each_whole_conversation():
    by: dict[str, list] = {}
    for metric, _unit, it, t, v in serving_sessions.rows(_conversations(), window_start=0.0, turns=2):
        by.setdefault(metric, []).append((it, round(t, 9), round(v, 9)))
    assert by[TURN] == [(0, 0.0, 1.0), (1, 0.5, 1.0), (2, 1.0, 2.0), (3, 1.5, 2.0)]
    assert by[TTFT_FIRST_TURN] == [(0, 0.0, 0.1), (1, 0.5, 0.3)]
    assert by[TTFT_LATER_TURNS] == [(2, 1.0, 0.05)]  # the failed turn has no TTFT
    assert by[CACHED_TOKENS] == [(0, 0.0, 0.0), (1, 0.5, 0.0), (2, 1.0, 80.0)]
    assert by[SESSION] == [(0, 0.0, 1.07)]  # conversation 1 only: first send to last end


def test_point_rows_give_the_cache_hit_share_and_the_conversations_within_the_slo():
    pts = {m: v for m, _u, _i, _t, v in serving_sessions.point_rows(_conversations(), 2.0, 2, parse_slo("ttft:200ms"))}
    assert pts[CACHE_HIT_PCT] == pytest.approx(100 * 80 / 300)  # the completed requests' prompts
    assert pts[SESSION_GOODPUT] == pytest.approx(1 / 2.0)  # conversation 1 met it in every turn
    assert SESSION_GOODPUT not in {m for m, *_ in serving_sessions.point_rows(_conversations(), 2.0, 2)}


def test_the_servers_input_counts_are_checked_against_the_models_tokenizer():
    from benchdb.schema.serving_request import RequestRecord

    def rec(i, server, client):
        return RequestRecord(index=i, sent=float(i), end=i + 0.5, input_tokens=server, client_tokens=client)

    agree = [rec(0, 11, 10), rec(1, 20, 20)]  # a BOS token the server adds is not a disagreement
    assert serving_sessions.token_counts(agree, "completions")["disagree"] == 0
    got = serving_sessions.token_counts([*agree, rec(2, 0, 30), rec(3, 90, 30)], "completions")
    assert got["disagree"] == 2 and got["first"] == "request 2: server 0, tokenizer 30" and got["checked"] == 4
    chat = serving_sessions.token_counts([rec(0, 17, 10), rec(1, 27, 20), rec(2, 37, 30)], "chat")
    assert chat["chat_template_tokens_median"] == 7 and "disagree" not in chat
    assert serving_sessions.token_counts([rec(0, 5, None)], "chat") == {"input_tokens": "server"}

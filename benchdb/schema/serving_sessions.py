"""The figures of a workload's load point (``--workload``; :mod:`benchdb.backends.openai.workload`)
beyond the per-request ones of :mod:`benchdb.schema.serving_metrics`: per turn, per conversation and
of the prefix structure. The metric names are defined in :mod:`benchdb.schema.serving`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from benchdb.schema.serving import (
    CACHE_HIT_PCT,
    CACHED_TOKENS,
    CLIENT_INPUT_TOKENS,
    SEND_LAG,
    SESSION,
    SESSION_GOODPUT,
    SHARED_PREFIX_PCT,
    SHARED_PREFIX_WORDS,
    TTFT_FIRST_TURN,
    TTFT_LATER_TURNS,
    TURN,
    UNITS,
)
from benchdb.schema.serving_metrics import Row, measured_in_order, meets_slo
from benchdb.schema.serving_request import RequestRecord, request_metrics

#: Turns per conversation: one number for every conversation, or each conversation's own (an imported
#: file's conversations differ in length; one it leaves out never counts as whole).
Turns = int | Mapping[int, int]


def rows(records: Iterable[RequestRecord], window_start: float, turns: Turns = 1) -> list[Row]:
    """Per request (the iteration and ``t_offset_s`` of :func:`serving_metrics.rows`) its turn, its
    TTFT under its turn's kind, its cached and shared-prefix counts and its send lag; per
    conversation that ran all its ``turns`` turns, its time."""
    out: list[Row] = []
    measured = measured_in_order(records)
    for i, rec in enumerate(measured):
        t = rec.sent - window_start
        m = request_metrics(rec)
        ttft = m.ttft if m is not None and rec.turn is not None else None
        for metric, value in (
            (TURN, rec.turn),
            (TTFT_FIRST_TURN if rec.turn == 1 else TTFT_LATER_TURNS, ttft),
            (CACHED_TOKENS, rec.cached_tokens if m is not None else None),
            (SHARED_PREFIX_WORDS, rec.shared_words),
            (SEND_LAG, rec.sent - rec.scheduled if rec.scheduled is not None else None),
            (CLIENT_INPUT_TOKENS, rec.client_tokens),
        ):
            if value is not None:
                out.append((metric, UNITS[metric], i, t, float(value)))
    for k, (first, last) in enumerate(sorted(_whole(_by_session(measured), turns), key=lambda fl: fl[0])):
        out.append((SESSION, UNITS[SESSION], k, first - window_start, last - first))
    return out


def _by_session(measured: list[RequestRecord]) -> dict[int, list[RequestRecord]]:
    """The measured requests of each conversation, in send order."""
    out: dict[int, list[RequestRecord]] = {}
    for r in measured:
        if r.session is not None:
            out.setdefault(r.session, []).append(r)
    return out


def _turns_of(turns: Turns, session: int) -> int | None:
    return turns if isinstance(turns, int) else turns.get(session)


def _whole(sessions: dict[int, list[RequestRecord]], turns: Turns) -> list[tuple[float, float]]:
    """(first send, last end) of each conversation whose every turn completed."""
    out = []
    for s, recs in sessions.items():
        if len(recs) == _turns_of(turns, s) and all(r.ok and r.end is not None for r in recs):
            out.append((min(r.sent for r in recs), max(r.end for r in recs if r.end is not None)))
    return out


def point_rows(
    records: Iterable[RequestRecord], window_s: float, turns: Turns = 1, slo: dict[str, float] | None = None
) -> list[Row]:
    """The load point's cache-hit share (where the server reports cached tokens), the client's
    shared-prefix share, and with an SLO the conversations that met it in every turn, per second."""
    measured = measured_in_order(records)
    done = [r for r in measured if r.ok]
    out: list[Row] = []
    reported = [r for r in done if r.cached_tokens is not None and r.input_tokens]
    if reported:
        share = 100.0 * sum(r.cached_tokens or 0 for r in reported) / sum(r.input_tokens or 0 for r in reported)
        out.append((CACHE_HIT_PCT, UNITS[CACHE_HIT_PCT], 0, 0.0, share))
    words = sum(r.prompt_words or 0 for r in done if r.shared_words is not None)
    if words:
        shared = sum(r.shared_words or 0 for r in done if r.shared_words is not None)
        out.append((SHARED_PREFIX_PCT, UNITS[SHARED_PREFIX_PCT], 0, 0.0, 100.0 * shared / words))
    if slo and window_s > 0 and any(r.session is not None for r in done):
        by = _by_session(measured)
        met = sum(
            len(v) == _turns_of(turns, s) and all(meets_slo(request_metrics(r), slo) for r in v) for s, v in by.items()
        )
        out.append((SESSION_GOODPUT, UNITS[SESSION_GOODPUT], 0, 0.0, met / window_s))
    return out


#: Prompt tokens by which the server's count may exceed the client's on the completions endpoint:
#: a beginning-of-sequence token (and its like) the server adds and the client does not.
SPECIAL_TOKENS = 2


def token_counts(records: Iterable[RequestRecord], endpoint: str) -> dict[str, Any]:
    """Where a load point's input-token counts come from, and how the server's agree with the
    client's tokenizer: on the completions endpoint a server count off by more than
    ``SPECIAL_TOKENS`` is a disagreement (its first is named); on chat the template's own tokens
    separate the two, so their median difference is given instead."""
    done = [r for r in measured_in_order(records) if r.ok and r.input_tokens is not None]
    both = [r for r in done if r.client_tokens is not None]
    if not both:
        return {"input_tokens": "server" if done else None}
    out: dict[str, Any] = {"input_tokens": "server, checked against the model's tokenizer", "checked": len(both)}
    diffs = sorted((r.input_tokens or 0) - (r.client_tokens or 0) for r in both)
    if endpoint == "chat":
        out["chat_template_tokens_median"] = diffs[len(diffs) // 2]
        return out
    off = [r for r in both if not 0 <= (r.input_tokens or 0) - (r.client_tokens or 0) <= SPECIAL_TOKENS]
    out["disagree"] = len(off)
    if off:
        out["first"] = f"request {off[0].index}: server {off[0].input_tokens}, tokenizer {off[0].client_tokens}"
    return out

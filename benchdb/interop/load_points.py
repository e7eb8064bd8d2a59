"""Serving results of other tools (vLLM, SGLang, AIPerf, GuideLLM) in benchdb's one vocabulary.

Each tool defines TTFT, ITL and TPOT its own way, so its summary figures cannot be compared with
another's. A format module reads a file into :class:`LoadPoint` objects: what was served (model,
engine and its options, endpoint), the load (concurrency or rate, input/output tokens), each
request as a :class:`~benchdb.schema.serving_metrics.RequestRecord` on the tool's own clock, the tool's
own figures and what it meant by them. :func:`to_imported` then computes every per-request and
per-load-point row with :mod:`benchdb.schema.serving_metrics` -- the functions benchdb's own serving runs
use -- so an imported load point and a measured one hold the same metrics with the same meaning.
The tool's own figures go to ``source_statistics`` beside them, untouched, and the definitions to
``source_definitions``. No format names the server's hardware: it is declared at import
(:class:`benchdb.interop.Declared`). A load point whose file kept no per-request data is summary-only.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from benchdb.interop.writer import Imported, SourceError
from benchdb.schema import serving_sessions, steady_state
from benchdb.schema.serving import CHUNK_TOKENS, E2E, ITL_CHUNK, ITL_TOKEN, OUTPUT_TOKENS, TPOT, TTFT
from benchdb.schema.serving_metrics import RequestRecord, failed_share, point_rows, rows, summary
from benchdb.schema.serving_request import MAX_REQUEST_TOKENS, implausible

#: dtype spellings -> benchdb precisions.
_DTYPES = {
    "bfloat16": "bf16",
    "bf16": "bf16",
    "float16": "fp16",
    "half": "fp16",
    "fp16": "fp16",
    "float32": "fp32",
    "float": "fp32",
    "fp32": "fp32",
    "fp8": "fp8",
    "int8": "int8",
    "int4": "int4",
}


@dataclass
class LoadPoint:
    """One load point of a serving tool's file."""

    tool: str
    tool_version: str | None
    model_id: str
    endpoint: str  # completions | chat
    run_key: str  # load points of one source run share it
    concurrency: int | None = None  # closed loop (or the cap of an open loop)
    rate: float | None = None  # open loop, requests per second
    arrival: str = "poisson"  # poisson | constant | gamma
    burstiness: float = 1.0
    in_tokens: int | None = None  # the requested input / output lengths
    out_tokens: int | None = None
    #: Every request in send order (warm-up ones flagged), or None: the file kept only summaries.
    records: list[RequestRecord] | None = None
    #: The tool's measured duration, the window where the requests carry no send times.
    window_s: float | None = None
    started_at: str | None = None
    #: The engine the file names; else ``assumed_engine`` (what the tool is normally pointed at),
    #: which ``--engine`` may correct without contradicting the file.
    engine: str | None = None
    assumed_engine: str | None = None
    engine_options: dict[str, Any] = field(default_factory=dict)
    statistics: list[tuple[str, str, str, float]] = field(default_factory=list)
    definitions: dict[str, Any] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)
    percentile_method: str | None = "linear"
    #: The tool kept a sample of the requests: latencies hold, throughputs over them would not.
    sampled: bool = False
    #: The per-request gaps are per token, not per chunk (SGLang's native client): no chunk rows.
    gaps_per_token: bool = False
    #: Why the tool itself says the run is not a valid result (cancelled, incomplete, ...).
    invalid_reasons: list[str] = field(default_factory=list)
    #: What the tool sent where it was not independent one-turn requests (``multi-turn:turns=3``,
    #: ``trace``): part of the identity, as a benchdb run's ``--workload``.
    workload: str | None = None
    #: Turns per conversation where the tool fixes them (its records name each request's
    #: conversation and turn: :attr:`RequestRecord.session`, :attr:`RequestRecord.turn`).
    turns: int | None = None
    #: Conversations the file says stopped short (a turn cancelled, or left incomplete at a limit).
    cut: set[int] = field(default_factory=set)


#: benchdb's definitions (docs/guides/serving.md), recorded beside each source's own.
BENCHDB_DEFINITIONS = {
    TTFT: "request send -> first streamed chunk with content",
    TPOT: "(E2E - TTFT) / (output tokens - 1), per request with more than one output token",
    ITL_TOKEN: "each gap between content chunks, split over the later chunk's tokens (once per token)",
    ITL_CHUNK: "each gap between consecutive content chunks",
    E2E: "request send -> end of the stream",
    OUTPUT_TOKENS: "the server's usage count, else the content chunks",
}


def definitions(
    entries: Mapping[str, tuple[str | None, str, bool]], missing: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """The definitions a load point records: per benchdb metric, the source's closest figure
    (``source_metric``), the source's definition of it, benchdb's, and whether they agree
    (``same_definition``); ``missing``: benchdb metrics the source's data cannot give, and why."""
    out: dict[str, Any] = {}
    for metric, (source_metric, text, same) in entries.items():
        out[metric] = {
            "source_metric": source_metric,
            "source_definition": text,
            "benchdb_definition": BENCHDB_DEFINITIONS.get(metric),
            "same_definition": same,
            "recomputed": True,
        }
    for metric, why in (missing or {}).items():
        out[metric] = {
            **out.get(metric, {}),
            "benchdb_definition": BENCHDB_DEFINITIONS.get(metric),
            "recomputed": False,
            "why": why,
        }
    return out


def precision_of(options: Mapping[str, Any]) -> str:
    """The precision an engine served at: its quantization where it names one, else its dtype."""
    quant = options.get("quantization")
    if quant and str(quant).lower() not in ("none", "null"):
        return str(quant).lower()
    dtype = str(options.get("dtype") or "").lower().replace("torch.", "")
    return _DTYPES.get(dtype, dtype or "unknown")


def decimal(x: float) -> str:
    """A number as the views read it back: digits and a point, never an exponent."""
    text = f"{x:.6f}".rstrip("0").rstrip(".")
    return text if text not in ("", "-0") else "0"


def _shape(p: LoadPoint, measured: list[RequestRecord]) -> str:
    """The input shape, in the grammar of benchdb's own serving runs; lengths the tool did not say
    it asked for are the mean over completed requests (as a tool's totals / completed give it for
    a summary-only file: one rule, so a sweep's points share their workload)."""

    def tokens(requested: int | None, attr: str) -> str:
        if requested is not None:
            return str(int(requested))
        values = [v for r in measured if r.ok and (v := getattr(r, attr)) is not None]
        return str(round(sum(values) / len(values))) if values else "unknown"

    parts = [f"in={tokens(p.in_tokens, 'input_tokens')}", f"out={tokens(p.out_tokens, 'output_tokens')}"]
    if p.arrival == "trace":  # a trace's lengths are its lines', as a benchdb trace run's shape says
        parts = ["in=trace", "out=trace"]
    if p.rate is not None and math.isfinite(p.rate):
        shape = f":{decimal(p.burstiness)}" if p.arrival == "gamma" else ""
        parts.append(f"rate={p.arrival}:{decimal(p.rate)}{shape}")
        if p.concurrency:
            parts.append(f"max_concurrency={p.concurrency}")
    elif p.concurrency:
        parts.append(f"concurrency={p.concurrency}")
    else:
        raise SourceError(f"{p.model_id}: the file gives neither a concurrency nor a request rate for this run")
    if p.workload:  # the kind ends the shape, as a benchdb run's with a --workload
        parts.append(p.workload.split(":")[0])
    return ",".join(parts)


def _check_load(p: LoadPoint) -> None:
    """The load a point names is one benchdb can key: a positive rate (or none), a positive
    burstiness, at least one request in flight, lengths that are not negative."""
    if p.rate is not None and not (p.rate > 0):
        raise SourceError(f"{p.model_id}: request rate {p.rate:g} is not a positive number of requests per second")
    if not (p.burstiness > 0 and math.isfinite(p.burstiness)):
        raise SourceError(f"{p.model_id}: burstiness {p.burstiness:g} is not a positive number")
    if p.concurrency is not None and p.concurrency < 1:
        raise SourceError(f"{p.model_id}: concurrency {p.concurrency} is not a positive number of requests")
    for name, n in (("input", p.in_tokens), ("output", p.out_tokens)):
        if n is not None and n < 0:
            raise SourceError(f"{p.model_id}: requested {name} length {n} is negative")
        if n is not None and n > MAX_REQUEST_TOKENS:
            raise SourceError(
                f"{p.model_id}: requested {name} length {n} is more tokens than a request holds "
                f"(at most {MAX_REQUEST_TOKENS})"
            )


def _check_requests(p: LoadPoint, measured: list[RequestRecord]) -> None:
    """Every request's figures within the bounds the live client's are held to
    (:func:`~benchdb.schema.serving_request.implausible`) and its token accounting possible: one
    that is not rejects the file."""
    conversing = any(r.turn is not None and r.turn > 1 for r in measured)
    for r in measured:
        why = implausible(r) or _accounting(r, conversing)
        if why is not None:
            raise SourceError(f"{p.model_id}: request {r.index}: {why}")


def _accounting(r: RequestRecord, conversing: bool) -> str | None:
    """Why a completed request's token counts cannot be a server's (sglang#30304 wrote 0 input
    tokens for every round of a multi-turn replay), or None."""
    if not r.ok:
        return None
    if conversing and r.input_tokens == 0:
        return "0 input tokens for a completed turn of a conversation (a turn sends at least its message)"
    if r.cached_tokens is not None and r.input_tokens is not None and r.cached_tokens > r.input_tokens:
        return (
            f"{r.cached_tokens} cached prompt tokens of {r.input_tokens} input tokens "
            "(a prefix cache cannot serve more of a prompt than it has)"
        )
    return None


def _conversations(p: LoadPoint, measured: list[RequestRecord]) -> dict[int, int]:
    """The turns of each conversation whose every turn the file holds: turns 1 to n once each, n
    the tool's turns per conversation where it fixes them, else the last the file has (a run that
    stopped between turns without saying so cannot be told apart); none the file says was cut."""
    turns: dict[int, list[int]] = {}
    for r in measured:
        if r.session is not None and r.turn is not None:
            turns.setdefault(r.session, []).append(r.turn)
    out = {}
    for s, seen in turns.items():
        n = p.turns or max(seen)
        if s not in p.cut and sorted(seen) == list(range(1, n + 1)):
            out[s] = n
    return out


def _window(p: LoadPoint, measured: list[RequestRecord]) -> tuple[float, float]:
    """(window start on the requests' clock, window length): from the first send to the last end
    where the requests carry send times, else the tool's duration."""
    if p.window_s is not None:
        start = min((r.sent for r in measured), default=0.0)
        # every request ran inside the tool's duration: a shorter one would inflate each throughput
        ends = [r.end if r.end is not None else r.chunks[-1][0] for r in measured if r.end is not None or r.chunks]
        longest = max(ends, default=start) - start
        if p.window_s < longest * (1 - 1e-6):
            raise SourceError(
                f"{p.model_id}: duration {p.window_s:g} s is shorter than its longest request ({longest:g} s)"
            )
        return start, p.window_s
    if not measured:
        raise SourceError(f"{p.model_id}: no measured requests and no duration")
    start = min(r.sent for r in measured)
    end = max((r.end if r.end is not None else r.sent) for r in measured)
    return start, end - start


def to_imported(p: LoadPoint) -> Imported:
    """The benchdb result of a load point: its rows recomputed by benchdb's serving metrics."""
    if p.endpoint not in ("completions", "chat"):
        raise SourceError(f"{p.model_id}: endpoint {p.endpoint!r} is neither completions nor chat")
    _check_load(p)
    measured = [r for r in (p.records or []) if not r.warmup]
    engine = p.engine or p.assumed_engine
    options: dict[str, Any] = {"engine": engine, "load_generator": p.tool, **p.engine_options, "workload": p.workload}
    settings: dict[str, Any] = {"task": "text-generation", "engine_named_by_file": p.engine is not None, **p.settings}
    out_rows: list[tuple[str, str, int, float, float]] = []
    reasons: list[str] = list(p.invalid_reasons)
    summary_only = p.records is None
    extra: dict[str, Any] = {}
    if not summary_only:
        if not any(r.ok for r in measured):
            raise SourceError(f"{p.model_id}: no request of this run completed")
        _check_requests(p, measured)
        start, window = _window(p, measured)
        if not window > 0:
            raise SourceError(f"{p.model_id}: the requests span no time (window {window:g} s)")
        summ = summary(measured, window)
        whole = _conversations(p, measured)
        out_rows = rows(measured, start) + ([] if p.sampled else point_rows(summ, None))
        # turns, cached tokens and whole conversations, as a benchdb run's workload gives them
        out_rows += serving_sessions.rows(measured, start, whole)
        out_rows += serving_sessions.point_rows(measured, window, whole)
        if any(r.turn is not None for r in measured):
            settings.update(
                conversations=len({r.session for r in measured if r.session is not None}),
                whole_conversations=len(whole),
            )
        if len({r.sent for r in measured}) > 1 and not p.sampled:
            # send times order the requests as benchdb's own runs: the same steady-state window
            steady_rows, extra["steady_state"] = steady_state.of_point(measured, start)
            out_rows += steady_rows
        if p.gaps_per_token:
            out_rows = [r for r in out_rows if r[0] not in (ITL_CHUNK, CHUNK_TOKENS)]
        settings.update(requests=summ["requests"], errors=summ["errors"], errors_by_message=summ["errors_by_message"])
        if (failed := failed_share(summ)) is not None:
            reasons.append(failed)
    elif not p.statistics:
        raise SourceError(f"{p.model_id}: neither per-request data nor summary figures")
    defs = p.definitions
    if summary_only:  # nothing was recomputed: the source's figures are all there is
        defs = {
            m: {**d, "recomputed": False, "why": "summary-only file: no per-request data"}
            for m, d in p.definitions.items()
        }
    return Imported(
        model_id=p.model_id,
        backend=engine or "openai",
        device="unknown",
        mode=p.endpoint,
        precision=precision_of(p.engine_options),
        batch_size=p.concurrency if p.concurrency and (p.rate is None or not math.isfinite(p.rate)) else 1,
        input_shape=_shape(p, measured),
        rows=out_rows,
        primary_metric=TTFT,
        options={k: v for k, v in options.items() if v is not None},
        model={"model_type": "llm", "architecture": "openai-endpoint", "task": "text-generation"},
        started_at=p.started_at,
        run_key=p.run_key,
        timing_method="source-client",
        tool=p.tool,
        tool_version=p.tool_version,
        summary_only=summary_only,
        percentile_method=p.percentile_method,
        statistics=p.statistics,
        settings=settings,
        definitions=defs,
        extra=extra,
        validity="invalid" if reasons else "valid",
        validity_reasons=reasons,
        software={p.tool: p.tool_version} if p.tool_version else {},
    )

"""GuideLLM reports (``guidellm benchmark|run --output-path benchmarks.json``, JSON or YAML).

One benchdb result per entry of ``benchmarks[]`` (a strategy of the run: synchronous, concurrent
at N streams, throughput, constant or poisson at a rate). GuideLLM keeps every request
(``requests.successful``, ``errored``, ``incomplete``) with its start, first and last token and
end times in epoch seconds, so TTFT, TPOT and E2E are recomputed in benchdb's definitions. It keeps
no per-chunk times, so benchdb's ITL cannot be: GuideLLM's own per-request mean ITL is in
``source_statistics`` and the definitions say so. Its TPOT includes the first token
((last token - request start) / output tokens); benchdb's excludes it. Output tokens are the
server's usage where GuideLLM preferred it (``prefer_response_metrics``). Incomplete requests
(cancelled when a limit hit) are neither completions nor failures: counted in the settings only.
Summary statistics (``metrics.<name>.successful``) are kept as GuideLLM computed them.

A multi-turn benchmark (a request with ``info.turn_index`` past 0) keeps each request's
conversation (``info.conversation_id``) and turn, so benchdb's turn figures are computed from them;
synthetic data with a fixed ``turns`` says how many each conversation has, and a conversation with an
incomplete request stopped short. Each request's ``cached_tokens`` (the server's
``prompt_tokens_details``) is kept where the server sent it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchdb.errors import clip
from benchdb.interop import load_json, load_yaml
from benchdb.interop.load_points import LoadPoint, definitions, to_imported
from benchdb.interop.serving_fields import distribution_stats, engine_name, number, records_in_order, tokens, turn
from benchdb.interop.writer import Imported, SourceError, utc_iso
from benchdb.schema.serving import E2E, ITL_CHUNK, ITL_TOKEN, OUTPUT_TOKENS, TPOT, TTFT
from benchdb.schema.serving_metrics import RequestRecord

FILES = ("benchmarks.json", "benchmarks.yaml", "*guidellm*.json", "*guidellm*.yaml")
#: GuideLLM summary metric -> unit (names ending in _ms are milliseconds; request_latency seconds).
_SUMMARY = {
    "time_to_first_token_ms": "ms",
    "time_per_output_token_ms": "ms",
    "inter_token_latency_ms": "ms",
    "request_latency": "s",
    "requests_per_second": "req/s",
    "output_tokens_per_second": "tokens/s",
    "tokens_per_second": "tokens/s",
    "prompt_token_count": "tokens",
    "output_token_count": "tokens",
    "request_concurrency": "requests",
}
_STATS = {"mean": "mean", "median": "median", "min": "min", "max": "max", "std_dev": "stddev", "count": "count"}
_PCTS = {"p50": "p50", "p90": "p90", "p95": "p95", "p99": "p99"}
DEFINITIONS = definitions(
    {
        TTFT: ("time_to_first_token_ms", "first token iteration - request start", True),
        TPOT: (
            "time_per_output_token_ms",
            "(last token iteration - request start) / output tokens: includes the first token's wait",
            False,
        ),
        E2E: ("request_latency", "request end - request start", True),
        OUTPUT_TOKENS: (
            "output_token_count",
            "the server's usage (prefer_response_metrics), else the client's tokenizer",
            True,
        ),
    },
    missing={
        ITL_TOKEN: "GuideLLM keeps no per-chunk times; its inter_token_latency_ms is a per-request mean, "
        "(last token - first token) / (output tokens - 1), kept in source_statistics",
        ITL_CHUNK: "GuideLLM keeps no per-chunk times",
    },
)
DEFINITIONS[ITL_TOKEN]["source_metric"] = "inter_token_latency_ms"
DEFINITIONS[ITL_TOKEN]["source_definition"] = "(last token iteration - first token iteration) / (output tokens - 1)"


def _load(path: Path) -> Any:
    return load_yaml(path) if path.suffix.lower() in (".yaml", ".yml") else load_json(path)


def _load_shape(strategy: dict, requests: int) -> dict[str, Any]:
    kind = strategy.get("type_")
    cap = strategy.get("max_concurrency")
    if kind == "synchronous":
        return {"concurrency": 1}
    if kind == "concurrent":
        return {"concurrency": int(number(strategy.get("streams") or cap, "strategy.streams"))}
    if kind == "throughput":  # every request sent at once, up to the cap
        return {"concurrency": int(cap or requests)}
    if kind in ("constant", "poisson"):
        return {
            "rate": number(strategy.get("rate"), "strategy.rate"),
            "arrival": kind,
            "concurrency": int(cap) if cap else None,
        }
    raise SourceError(
        f"GuideLLM strategy {kind!r} is not a concurrency or a request rate benchdb can key "
        "(synchronous, concurrent, throughput, constant, poisson)"
    )


def _time(timings: dict, *names: str) -> float | None:
    for n in names:
        v = timings.get(n)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return float(v)
    return None


def _turn(req: dict, ids: dict[str, int] | None) -> tuple[int | None, int | None]:
    """(conversation, turn) of a request of a multi-turn benchmark (``ids`` numbers the
    conversations), else (None, None)."""
    info = req.get("info") or {}
    if ids is None or info.get("conversation_id") is None:
        return None, None
    n = turn(info.get("turn_index"), f"request {req.get('request_id')}: info.turn_index")
    return ids.setdefault(str(info["conversation_id"]), len(ids)), n


def _record(req: dict, i: int, outcome: str, ids: dict[str, int] | None) -> RequestRecord:
    info = req.get("info") or {}
    t = info.get("timings") or {}
    session, n = _turn(req, ids)
    sent = _time(t, "request_start") or _time(req, "request_start_time") or _time(info, "started_at")
    if sent is None:
        raise SourceError(f"{outcome} request {req.get('request_id')} has no start time")
    if outcome == "errored":
        error = info.get("error") or "errored"
        # No end, as the other formats' failed requests: a timeout's wait must not stretch the window.
        return RequestRecord(index=i, sent=sent, error=clip(str(error).splitlines()[0]), session=session, turn=n)
    first = _time(t, "first_output_token_iteration", "first_token_iteration")
    end = _time(t, "request_end") or _time(req, "request_end_time")
    if end is None:
        raise SourceError(f"successful request {req.get('request_id')} has no end time")
    what = f"request {req.get('request_id')}"
    out, prompt = req.get("output_tokens"), req.get("prompt_tokens")
    cached = req.get("cached_tokens", (req.get("input_metrics") or {}).get("cached_tokens"))
    return RequestRecord(
        index=i,
        sent=sent,
        first_token=first,
        end=end,
        input_tokens=tokens(prompt, f"{what}: prompt_tokens") if prompt is not None else None,
        output_tokens=tokens(out, f"{what}: output_tokens") if out is not None else None,
        cached_tokens=tokens(cached, f"{what}: cached_tokens") if cached is not None else None,
        session=session,
        turn=n,
    )


def _fixed_turns(data: dict) -> int | None:
    """Turns per conversation of synthetic data that fixes them (no tool-call turns or branches,
    which add requests of their own), else None."""
    n = data.get("turns")
    extra = any(data.get(k) for k in ("tool_call_turns", "server_tool_call_turns", "branches"))
    ok = data.get("kind") == "synthetic_text" and isinstance(n, int) and not isinstance(n, bool) and n > 0
    return n if ok and not extra else None


def _later(req: Any) -> bool:
    index = ((req if isinstance(req, dict) else {}).get("info") or {}).get("turn_index")
    return isinstance(index, int) and not isinstance(index, bool) and index > 0


def _statistics(metrics: dict) -> list[tuple[str, str, str, float]]:
    out = []
    for name, unit in _SUMMARY.items():
        dist = (metrics.get(name) or {}).get("successful")
        out += distribution_stats(name, unit, dist, _STATS)
        out += distribution_stats(name, unit, (dist or {}).get("percentiles"), _PCTS)
    totals = metrics.get("request_totals") or {}
    out += [("requests", "count", k, float(v)) for k, v in totals.items() if isinstance(v, (int, float))]
    return out


def parse(path: Path) -> list[Imported]:
    doc = _load(path)
    if not isinstance(doc, dict) or not isinstance(doc.get("benchmarks"), list) or "metadata" not in doc:
        raise SourceError("not a GuideLLM report (no metadata and benchmarks[])")
    version = (doc.get("metadata") or {}).get("guidellm_version")
    spec = (doc.get("config") or {}).get("spec") or {}
    data = (spec.get("data") or [{}])[0] if isinstance(spec.get("data"), list) else {}
    out = []
    for n, bench in enumerate(doc["benchmarks"]):
        if not isinstance(bench, dict) or "requests" not in bench or "config" not in bench:
            raise SourceError(f"benchmarks[{n}] is not a GuideLLM benchmark (no config and requests)")
        cfg = bench["config"]
        backend = cfg.get("backend") or spec.get("backend") or {}
        model = backend.get("model") or (spec.get("backend") or {}).get("model")
        if not model:
            raise SourceError(f"benchmarks[{n}] names no model (config.backend.model)")
        fmt = str(backend.get("request_format") or "/v1/completions")
        reqs = bench["requests"] or {}
        lists = {k: reqs.get(k) or [] for k in ("successful", "errored", "incomplete")}
        if not all(isinstance(v, list) for v in lists.values()):
            raise SourceError(f"benchmarks[{n}].requests: successful, errored and incomplete must be lists")
        sampled = cfg.get("sample_size")
        records = None
        # a multi-turn benchmark (GuideLLM's own test: a request past turn 0) keeps its conversations
        ids: dict[str, int] | None = {} if any(_later(r) for v in lists.values() for r in v) else None
        if lists["successful"] or lists["errored"]:
            records = records_in_order(
                [_record(r, i, k, ids) for k in ("successful", "errored") for i, r in enumerate(lists[k])]
            )
        cut = {s for r in lists["incomplete"] if isinstance(r, dict) and (s := _turn(r, ids)[0]) is not None}
        fixed = _fixed_turns(data) if isinstance(data, dict) else None
        # a summary-only multi-turn benchmark is keyed as one with its requests
        conversing = ids is not None or (fixed or 0) > 1
        totals = (bench.get("metrics") or {}).get("request_totals") or {}
        shape = _load_shape(cfg.get("strategy") or {}, int(totals.get("total") or len(records or [])))
        point = LoadPoint(
            tool="guidellm",
            tool_version=version,
            model_id=str(model),
            endpoint="chat" if "chat" in fmt else "completions",
            run_key=f"{cfg.get('run_id')}",
            in_tokens=data.get("prompt_tokens"),
            out_tokens=data.get("output_tokens"),
            records=records,
            started_at=utc_iso(bench.get("start_time"), f"benchmarks[{n}].start_time"),
            engine=engine_name(backend.get("kind")),
            statistics=_statistics(bench.get("metrics") or {}),
            definitions=DEFINITIONS,
            settings={
                "source_benchmark": cfg.get("id_"),
                "incomplete": len(lists["incomplete"]),
                "sample_size": sampled,
                "target": backend.get("target"),
                "guidellm_warnings": [w.get("code") for w in bench.get("warnings") or [] if isinstance(w, dict)],
            },
            sampled=sampled not in (None, -1),
            workload="multi-turn" + (f":turns={fixed}" if fixed else "") if conversing else None,
            turns=fixed,
            cut=cut,
            **shape,
        )
        out.append(to_imported(point))
    return out

"""``vllm bench serve --save-result`` JSON (one result per file, or one per line with
``--append-result``); matched to vLLM 0.33.0's writer (``vllm/benchmarks/serve.py``).

With ``--save-detailed`` the file keeps every request, failed ones in place (``errors[i]``
non-empty): ``ttfts``, ``itls`` (the gaps between streamed chunks), ``latencies``,
``start_times`` (``perf_counter`` seconds: only differences mean anything), ``input_lens`` and
``output_lens`` (the server's usage where it sent one), so benchdb rebuilds each request's chunk
timeline and recomputes TTFT, TPOT, ITL and E2E in its own definitions. vLLM's E2E ends at the
last content chunk, not at the end of the stream (usually under a millisecond apart); benchdb's
recomputed E2E is vLLM's, and the definitions say so. Without ``--save-detailed`` the result is
summary-only. ``--metadata K=V`` pairs are top-level keys: engine options among them
(``tensor_parallel_size``, ``dtype``, ``quantization``, ...) join the result's identity. The
engine is vLLM unless the client backend names another; ``date`` (local time, taken at the end
of the run) is read as UTC minus the run's duration. vLLM's summary figures (``*_ms``) are kept.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from benchdb.interop.load_points import LoadPoint, definitions, to_imported
from benchdb.interop.serving_fields import (
    SUMMARY_KEY,
    engine_name,
    engine_options,
    number,
    records_from_lists,
    summary_figures,
)
from benchdb.interop.writer import Imported, SourceError, utc_iso
from benchdb.schema import identity
from benchdb.schema.serving import E2E, ITL_CHUNK, ITL_TOKEN, OUTPUT_TOKENS, TPOT, TTFT

FILES = ("*qps*.json", "*vllm*.json")


def select(found: list[Path]) -> list[Path]:
    """vLLM's results, not the PyTorch-format copy it writes beside each (SAVE_TO_PYTORCH_BENCHMARK_FORMAT)."""
    return [p for p in found if not p.name.endswith(".pytorch.json")]


#: Keys vLLM writes itself; any other top-level key with a text value is a ``--metadata`` pair.
_KNOWN = {
    "date",
    "endpoint_type",
    "backend",
    "label",
    "model_id",
    "tokenizer_id",
    "num_prompts",
    "request_rate",
    "burstiness",
    "max_concurrency",
    "duration",
    "completed",
    "failed",
    "total_input_tokens",
    "total_output_tokens",
    "request_throughput",
    "request_goodput",
    "request_goodput:",
    "output_throughput",
    "total_token_throughput",
    "max_output_tokens_per_s",
    "max_concurrent_requests",
    "rtfx",
    "ramp_up_strategy",
    "ramp_up_start_rps",
    "ramp_up_end_rps",
}
DEFINITIONS = definitions(
    {
        TTFT: ("ttft_ms", "first chunk with choices - request start", True),
        TPOT: ("tpot_ms", "(latency - TTFT) / (output_len - 1), per request with more than one output token", True),
        ITL_CHUNK: ("itl_ms", "each gap between consecutive chunks with choices, pooled over requests", True),
        ITL_TOKEN: (
            None,
            "vLLM has no per-token gap; benchdb splits each chunk gap over the chunk's tokens "
            "(one per chunk: vLLM keeps no per-chunk token count)",
            False,
        ),
        E2E: (
            "e2el_ms",
            "last chunk with choices - request start (benchdb's own runs end at the end of the "
            "stream; benchdb's figure here is vLLM's)",
            False,
        ),
        OUTPUT_TOKENS: (None, "the server's usage completion_tokens, else the tokenizer's count of the text", True),
    }
)


def _documents(path: Path) -> list[Any]:
    from benchdb.interop import load_json, load_json_lines

    try:
        doc = load_json(path)
        return [doc] if isinstance(doc, dict) else doc if isinstance(doc, list) else [doc]
    except SourceError as first:
        if len([ln for ln in path.read_text(encoding="utf-8", errors="replace").splitlines() if ln.strip()]) < 2:
            raise first from None
        return [doc for _, doc in load_json_lines(path, "vllm bench serve JSON")]  # --append-result


_VALUES = {
    "request_throughput": "req/s",
    "output_throughput": "tokens/s",
    "total_token_throughput": "tokens/s",
    "duration": "s",
    "completed": "requests",
    "failed": "requests",
    "request_goodput": "req/s",
}


def _started(doc: dict) -> str | None:
    end = utc_iso(doc.get("date"), "date")
    duration = doc.get("duration")
    if end is None or not isinstance(duration, (int, float)):
        return end
    return (datetime.fromisoformat(end) - timedelta(seconds=float(duration))).isoformat()


def _point(doc: dict, n: int, path: Path) -> Imported:
    where = f"result {n + 1}" if n else "the result"
    if not isinstance(doc, dict) or "model_id" not in doc or "duration" not in doc or "completed" not in doc:
        raise SourceError(f"{where} is not a vllm bench serve result (no model_id, duration and completed)")
    if "ttfts" not in doc and "mean_ttft_ms" not in doc:
        raise SourceError(f"{where} is not a text-generation result (no TTFT: a pooling or audio benchmark?)")
    if doc.get("ramp_up_strategy"):
        raise SourceError(
            f"{where} ramps its request rate ({doc['ramp_up_strategy']}): not one load point "
            "benchdb can key; import runs at a fixed rate or concurrency"
        )
    backend = str(doc.get("backend") or doc.get("endpoint_type") or "")
    rate_text = doc.get("request_rate", "inf")
    rate = math.inf if str(rate_text).lower() == "inf" else number(rate_text, "request_rate")
    burst = float(doc.get("burstiness") or 1.0)
    cap = doc.get("max_concurrency")
    detailed = doc.get("ttfts") is not None and doc.get("itls") is not None
    records = records_from_lists(doc, where) if detailed else None
    total = int(doc.get("num_prompts") or (doc.get("completed", 0) + doc.get("failed", 0)))
    metadata = {
        k: v
        for k, v in doc.items()
        if k not in _KNOWN
        and not SUMMARY_KEY.match(k)
        and isinstance(v, (str, int, float, bool))
        and not isinstance(v, list)
        and k not in ("tokenizer_id",)
    }
    completed = doc.get("completed") or 0
    # A file benchdb exported names what vLLM's layout cannot: the engine, the lengths asked for.
    mark = str(doc.get("benchdb_engine") or "")
    named = engine_name(mark) or mark.strip().lower() or engine_name(backend)
    engine = named if named and named != "vllm" else None
    shape = {
        k: int(v)
        for k, v in identity.shape_fields(doc.get("benchdb_input_shape")).items()
        if k in ("in", "out") and v.isdigit()
    }
    point = LoadPoint(
        tool="vllm bench serve",
        tool_version=str(doc.get("vllm_version")) if doc.get("vllm_version") else None,
        model_id=str(doc["model_id"]),
        endpoint="chat" if "chat" in backend else "completions",
        run_key=f"{doc.get('label')}|{doc.get('date')}|{n}",
        records=records,
        concurrency=int(cap) if cap else (None if math.isfinite(rate) else total),
        rate=rate if math.isfinite(rate) else None,
        arrival=str(doc.get("benchdb_arrival") or ("poisson" if burst == 1.0 else "gamma")),
        burstiness=burst,
        in_tokens=shape.get(
            "in", None if detailed or not completed else round(doc.get("total_input_tokens", 0) / completed)
        ),
        out_tokens=shape.get(
            "out", None if detailed or not completed else round(doc.get("total_output_tokens", 0) / completed)
        ),
        window_s=None if records is None or doc.get("start_times") is not None else number(doc["duration"], "duration"),
        started_at=_started(doc),
        engine=engine,
        assumed_engine="vllm",
        engine_options=engine_options(metadata),
        statistics=summary_figures(doc, _VALUES),
        definitions=DEFINITIONS,
        settings={
            "label": doc.get("label"),
            "client_backend": backend,
            "num_prompts": doc.get("num_prompts"),
            "tokenizer_id": doc.get("tokenizer_id"),
            "metadata": metadata,
        },
    )
    if records is None and not point.statistics:
        raise SourceError(f"{where}: neither per-request lists nor summary figures")
    return to_imported(point)


def parse(path: Path) -> list[Imported]:
    return [_point(doc, n, path) for n, doc in enumerate(_documents(path))]

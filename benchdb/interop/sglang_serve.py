"""SGLang ``python -m sglang.bench_serving --output-file F`` results: JSON lines, one appended per
run; matched to SGLang 0.5.23's writer (``sglang/benchmark/serving.py``).

With ``--output-details`` a line keeps every request in send order, failed ones in place
(``errors[i]`` non-empty): ``ttfts``, ``itls`` (gaps between chunks with text, seconds),
``input_lens`` and ``output_lens``. SGLang writes no send times and no per-request end, so
benchdb's requests all start at 0 (the window is SGLang's ``duration``) and end at their last
content chunk: SGLang's own E2E and TPOT run to the stream's ``[DONE]`` and differ from the
recomputed ones by that trailer, as the definitions say. A line without details is summary-only.
The server's ``server_info`` (``/server_info``; null against other servers) names the model and
the engine options (``tp_size``, ``dtype``, ``quantization``, ``kv_cache_dtype``); without it
give ``--model``. Lines carry no time or run id: each is keyed by file and line. ``Infinity``
(no ``--request-rate``) and ``NaN`` are read as Python writes them.

A multi-turn replay (``agentic-trace``, ``mooncake``, ``--gsp-num-turns``) lists its rounds
conversation after conversation but names neither a request's conversation nor its turn, and not
how many rounds each conversation had: no turn figures can be told from it. Its input counts are
dropped (see ``MULTI_TURN_INPUTS``); its own totals are flagged where they cannot be (0.5.23 writes
``total_input_tokens`` 0 for one). ``--cache-report``'s per-request ``cached_tokens`` are read
where the server reported them (a ``cached_tokens_details`` entry: SGLang writes 0 without one).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from benchdb.interop import load_json_lines
from benchdb.interop.load_points import LoadPoint, definitions, to_imported
from benchdb.interop.serving_fields import (
    engine_name,
    engine_options,
    number,
    records_from_lists,
    summary_accounting,
    summary_figures,
)
from benchdb.interop.writer import Imported, SourceError
from benchdb.schema.serving import E2E, ITL_CHUNK, ITL_TOKEN, OUTPUT_TOKENS, TPOT, TTFT

FILES = ("*.jsonl",)


def select(found: list[Path]) -> list[Path]:
    """In a folder, the JSON-lines files whose first line is a bench_serving result (not prompts,
    datasets or other tools' records)."""
    import json

    out = []
    for p in found:
        try:
            with p.open(encoding="utf-8") as f:
                first = next((line for line in f if line.strip()), "")
            doc = json.loads(first)
        except (OSError, UnicodeDecodeError, ValueError):
            out.append(p)  # unreadable: let parse name the problem
            continue
        if isinstance(doc, dict) and "duration" in doc and "completed" in doc and "backend" in doc:
            out.append(p)
    return out


_VALUES = {
    "request_throughput": "req/s",
    "input_throughput": "tokens/s",
    "output_throughput": "tokens/s",
    "total_throughput": "tokens/s",
    "duration": "s",
    "completed": "requests",
    "concurrency": "requests",
    "total_input_tokens": "tokens",
    "total_output_tokens": "tokens",
    "accept_length": "tokens",
}
DEFINITIONS = definitions(
    {
        TTFT: ("ttft_ms", "first chunk with text - request start", True),
        TPOT: (
            "tpot_ms",
            "(latency at the stream's [DONE] - TTFT) / (output_len - 1); benchdb's figure here ends at "
            "the last chunk with text (SGLang keeps no per-request end)",
            False,
        ),
        ITL_CHUNK: ("itl_ms", "each gap between consecutive chunks with text, pooled over requests", True),
        ITL_TOKEN: (
            None,
            "SGLang's OpenAI client has no per-token gap; benchdb splits each chunk gap over the "
            "chunk's tokens (one per chunk)",
            False,
        ),
        E2E: (
            "e2e_latency_ms",
            "request start -> the stream's [DONE]; benchdb's figure here ends at the last chunk "
            "with text (SGLang keeps no per-request end)",
            False,
        ),
        OUTPUT_TOKENS: (
            None,
            "the server's usage completion_tokens (the OpenAI client), else the tokenizer's count",
            True,
        ),
    }
)
PER_TOKEN_DEFINITIONS = definitions(
    {
        **{
            m: (d["source_metric"], d["source_definition"], d["same_definition"])
            for m, d in DEFINITIONS.items()
            if m not in (ITL_CHUNK, ITL_TOKEN)
        },
        ITL_TOKEN: (
            "itl_ms",
            "each gap between chunks split evenly over the chunk's new tokens (the native client, "
            "or speculative decoding's accept length)",
            True,
        ),
    },
    missing={ITL_CHUNK: "this client keeps per-token gaps, not the chunks they came in"},
)


#: Datasets SGLang replays as conversations (one row, several rounds), and why their input_lens go.
MULTI_TURN_DATASETS = ("agentic-trace", "mooncake")
MULTI_TURN_INPUTS = "multi-turn replay: SGLang writes one input length per conversation for every round (sglang#39889)"


def _multi_turn(doc: dict) -> bool:
    turns = doc.get("gsp_num_turns")
    return doc.get("dataset_name") in MULTI_TURN_DATASETS or (isinstance(turns, int) and turns > 1)


def _lengths(doc: dict) -> tuple[int | None, int | None]:
    """The lengths a random dataset asked for (with a range ratio below 1, the most it asked for:
    each request drew between ratio x and that); else None (the mean over the requests)."""
    if doc.get("dataset_name") == "random" and doc.get("random_input_len") and doc.get("random_output_len"):
        return int(doc["random_input_len"]), int(doc["random_output_len"])
    return None, None


def _point(n: int, doc: Any, path: Path) -> Imported:
    where = f"line {n}"
    if (
        not isinstance(doc, dict)
        or "backend" not in doc
        or "duration" not in doc
        or "completed" not in doc
        or not any(k in doc for k in ("mean_ttft_ms", "median_ttft_ms", "median_e2e_latency_ms"))
    ):
        raise SourceError(
            f"{where} is not an SGLang bench_serving result (no backend, duration, completed and latency figures)"
        )
    info: dict[str, Any] = doc["server_info"] if isinstance(doc.get("server_info"), dict) else {}
    backend = str(doc["backend"])
    rate = doc.get("request_rate")
    if rate is None or (isinstance(rate, float) and math.isinf(rate) and rate > 0):
        rate = math.inf  # no --request-rate: all at once, up to the cap
    else:
        rate = number(rate, f"{where}: request_rate")
    cap = doc.get("max_concurrency")
    detailed = "ttfts" in doc and "itls" in doc
    # a multi-turn replay copies its conversation's one length (or 0) to every round (sglang#39889,
    # sglang#30304): its per-request input counts are not the rounds', so none is read and it says why
    dropped = MULTI_TURN_INPUTS if detailed and _multi_turn(doc) else None
    lists = {k: v for k, v in doc.items() if k != "input_lens"} if dropped else doc
    records = records_from_lists(lists, where) if detailed else None
    completed = int(doc.get("completed") or 0)
    accounting = _accounting(doc)
    in_len, out_len = _lengths(doc)
    if in_len is None and not detailed and completed:
        # a total of 0 input tokens is a lost count (flagged), not prompts of 0 tokens
        in_len = round(doc.get("total_input_tokens", 0) / completed) if doc.get("total_input_tokens") else None
        out_len = round(doc.get("total_output_tokens", 0) / completed)
    model = info.get("served_model_name") or info.get("model_path") or ""
    # The native client, and the OpenAI ones with speculative decoding, split each chunk's gap
    # over its tokens: their itls are per token, so no chunk timeline can be rebuilt from them.
    per_token = backend == "sglang" or bool(doc.get("accept_length"))
    opts = engine_options(
        {
            **{
                k: info.get(k)
                for k in (
                    "tp_size",
                    "pp_size",
                    "dp_size",
                    "dtype",
                    "quantization",
                    "kv_cache_dtype",
                    "max_running_requests",
                )
            }
        }
    )
    point = LoadPoint(
        tool="sglang bench_serving",
        tool_version=str(info["version"]) if info.get("version") else None,
        model_id=str(model),
        endpoint="chat" if "chat" in backend else "completions",
        run_key=f"{path.name}|{n}",
        records=records,
        concurrency=int(cap) if cap else (None if math.isfinite(rate) else len(records or []) or completed),
        rate=rate if math.isfinite(rate) else None,
        in_tokens=in_len,
        out_tokens=out_len,
        window_s=number(doc["duration"], f"{where}: duration") if records is not None else None,
        engine=engine_name(backend) if engine_name(backend) != "sglang" else None,
        assumed_engine="sglang",
        engine_options=opts,
        statistics=summary_figures(doc, _VALUES),
        definitions=PER_TOKEN_DEFINITIONS if per_token else DEFINITIONS,
        gaps_per_token=per_token,
        settings={
            "tag": doc.get("tag"),
            "client_backend": backend,
            "dataset_name": doc.get("dataset_name"),
            "line": n,
            "random_range_ratio": doc.get("random_range_ratio"),
            **({"input_lens_dropped": dropped} if dropped else {}),
            **({"token_accounting": accounting} if accounting else {}),
        },
        workload="multi-turn" if _multi_turn(doc) else None,
    )
    return to_imported(point)


def _accounting(doc: dict) -> str | None:
    """Why the line's own token totals cannot be its requests' (its input total, and its cache
    report's cached and prompt totals), or None: the totals stay as SGLang wrote them, flagged."""
    report = doc["cache_report"] if isinstance(doc.get("cache_report"), dict) else {}
    reasons = [
        summary_accounting(doc.get("total_input_tokens"), None, doc.get("completed")),
        summary_accounting(report.get("total_prompt_tokens"), report.get("total_cached_tokens"), None),
    ]
    return "; ".join(r for r in reasons if r) or None


def parse(path: Path) -> list[Imported]:
    # Lines carry no time: the writer takes the file's modification time for the run's.
    return [_point(n, doc, path) for n, doc in load_json_lines(path, "SGLang bench_serving JSON lines")]

"""What the serving format modules (vLLM, SGLang, AIPerf, GuideLLM) share to read a tool's file into
:class:`~benchdb.interop.load_points.LoadPoint` objects: checked numbers, durations and list lengths, the
per-request lists vLLM and SGLang write, a tool's summary and distribution figures, engine names and
engine options."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

from benchdb.interop.writer import SourceError
from benchdb.schema.serving_request import RequestRecord, token_count

#: Engine names as their tools spell them -> benchdb's backend names.
_ENGINES = {
    "vllm": "vllm",
    "sglang": "sglang",
    "sglang-oai": "sglang",
    "sglang-native": "sglang",
    "tgi": "tgi",
    "lmdeploy": "lmdeploy",
    "trt-llm": "tensorrt-llm",
    "tensorrt-llm": "tensorrt-llm",
    "transformers": "transformers",
    "llama.cpp": "llama.cpp",
    "ollama": "ollama",
}
#: Engine options that describe what served (part of the result's identity where the file has them).
ENGINE_OPTIONS = (
    "tensor_parallel_size",
    "pipeline_parallel_size",
    "data_parallel_size",
    "dtype",
    "quantization",
    "kv_cache_dtype",
    "max_num_seqs",
    "max_model_len",
    "enable_prefix_caching",
)


def engine_name(text: Any) -> str | None:
    """benchdb's backend name for an engine a file names (``vllm``, ``sglang-oai``, ...)."""
    if not text:
        return None
    key = str(text).strip().lower()
    return _ENGINES.get(key) or _ENGINES.get(key.split("-")[0]) or None


def engine_options(values: Mapping[str, Any]) -> dict[str, Any]:
    """The engine options among ``values`` (``--metadata`` pairs, server info), typed: numbers as
    numbers, true/false as booleans."""
    out: dict[str, Any] = {}
    aliases = {
        "tp": "tensor_parallel_size",
        "tp_size": "tensor_parallel_size",
        "pp_size": "pipeline_parallel_size",
        "dp_size": "data_parallel_size",
        "quant": "quantization",
    }
    for key, value in values.items():
        name = aliases.get(str(key).strip().lower().replace("-", "_"), str(key).strip().lower().replace("-", "_"))
        if name in ENGINE_OPTIONS and value is not None and value != "":
            out[name] = _typed(value)
    return out


def _typed(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    if value.lower() in ("true", "false"):
        return value.lower() == "true"
    if re.fullmatch(r"-?\d+", value):
        return int(value)
    return value


def distribution_stats(
    metric: str, unit: str, dist: Mapping[str, Any] | None, names: Mapping[str, str]
) -> list[tuple[str, str, str, float]]:
    """(metric, unit, statistic, value) rows of a tool's distribution object: ``names`` maps its
    keys (``median``, ``p99`` ...) to benchdb's statistic names; missing or non-finite values skipped."""
    out: list[tuple[str, str, str, float]] = []
    if not isinstance(dist, Mapping):
        return out
    for key, stat in names.items():
        value = dist.get(key)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
            out.append((metric, unit, stat, float(value)))
    return out


#: vLLM's and SGLang's summary keys: ``{mean|median|std|pNN}_{metric}_ms``.
SUMMARY_KEY = re.compile(r"^(mean|median|std|p\d+(?:\.\d+)?)_(\w+)_ms$")


def summary_figures(doc: Mapping[str, Any], values: Mapping[str, str]) -> list[tuple[str, str, str, float]]:
    """A vLLM or SGLang result's own figures: every ``{stat}_{metric}_ms`` key as (``{metric}_ms``,
    ms, stat) and the plain ``values`` keys (name -> unit) as (name, unit, value); finite numbers only."""
    out: list[tuple[str, str, str, float]] = []
    for key, value in doc.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            continue
        m = SUMMARY_KEY.match(key)
        if m:
            out.append((f"{m.group(2)}_ms", "ms", {"std": "stddev"}.get(m.group(1), m.group(1)), float(value)))
        elif key in values:
            out.append((key, values[key], "value", float(value)))
    return out


def number(value: Any, what: str) -> float:
    """A finite number from a source file, or a SourceError naming the field."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise SourceError(f"{what} is {value!r}, not a number")
    return float(value)


def duration(value: Any, what: str) -> float:
    """A time span or a length from a source file: a finite number, never negative."""
    x = number(value, what)
    if x < 0:
        raise SourceError(f"{what} is {x:g}: a time or a length cannot be negative")
    return x


def tokens(value: Any, what: str) -> int:
    """A token count from a source file within the bounds of the live client's (a negative one
    named as such), or a SourceError naming the field."""
    duration(value, what)
    try:
        return token_count(value, what) or 0
    except ValueError as exc:
        raise SourceError(str(exc)) from None


#: The most turns a conversation may have: past it, a turn index is a broken or hostile writer's.
MAX_TURNS = 1 << 20


def turn(value: Any, what: str) -> int:
    """A request's turn in its conversation (1-based) from a file's 0-based turn index, or a
    SourceError naming the field."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < MAX_TURNS:
        raise SourceError(f"{what} is {value!r}, not a turn index (a whole number from 0 to {MAX_TURNS - 1})")
    return value + 1


def summary_accounting(input_tokens: Any, cached_tokens: Any, completed: Any) -> str | None:
    """Why a tool's own token totals over a run cannot be its requests' (no input over completed
    requests, as sglang#30304's multi-turn replay wrote; more cached than input tokens), or None;
    totals that are not numbers say nothing."""

    def count(x: Any) -> float | None:
        ok = isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)
        return float(x) if ok else None

    given, cached, done = count(input_tokens), count(cached_tokens), count(completed)
    if given == 0 and done:
        return f"the tool counts 0 input tokens over {done:g} completed requests (a prompt has at least one token)"
    if given is not None and cached is not None and cached > given:
        return f"the tool counts {cached:g} cached prompt tokens of {given:g} input tokens"
    return None


def same_lengths(lists: Mapping[str, Any], what: str) -> int:
    """The common length of per-request lists, or a SourceError naming the ones that disagree."""
    sizes = {k: len(v) for k, v in lists.items() if isinstance(v, list)}
    bad = [k for k, v in lists.items() if v is not None and not isinstance(v, list)]
    if bad:
        raise SourceError(f"{what}: {bad[0]} is not a list")
    if len(set(sizes.values())) > 1:
        detail = ", ".join(f"{k} {n}" for k, n in sizes.items())
        raise SourceError(f"{what}: the per-request lists disagree in length ({detail})")
    return next(iter(sizes.values()), 0)


def records_from_lists(doc: Mapping[str, Any], what: str) -> list[RequestRecord]:
    """Requests from the per-request lists vLLM and SGLang write (seconds): ``ttfts``, ``itls`` (the
    gaps between content chunks), ``input_lens``, ``output_lens``, ``errors`` and, where the tool
    keeps them, ``start_times`` and ``latencies`` (vLLM), ``cached_tokens`` with the server's
    ``cached_tokens_details`` (SGLang's ``--cache-report``). A failed request has a non-empty error.
    Without start times every request is sent at 0 (the window is then the tool's duration);
    without latencies a request ends at its last chunk."""
    names = ("input_lens", "output_lens", "ttfts", "itls", "errors", "start_times", "latencies", *_CACHED)
    lists: dict[str, Any] = {k: doc[k] for k in names if doc.get(k) is not None}
    missing = [k for k in ("output_lens", "ttfts", "itls") if k not in lists]
    if missing:
        raise SourceError(f"{what}: per-request {', '.join(missing)} missing (the file keeps ttfts and itls)")
    n = same_lengths(lists, what)
    starts, latencies, errors = lists.get("start_times"), lists.get("latencies"), lists.get("errors")
    ins = lists.get("input_lens")
    out = []
    for i in range(n):
        sent = number(starts[i], f"start_times[{i}]") if starts is not None else 0.0
        error = str(errors[i]).strip() if errors is not None and errors[i] else ""
        if error:  # a traceback's last line names the exception
            out.append(RequestRecord(index=i, sent=sent, error=error.splitlines()[-1][:500]))
            continue
        t = sent + duration(lists["ttfts"][i], f"ttfts[{i}]")
        if ins is not None and tokens(ins[i], f"input_lens[{i}]") == 0:
            # a completed request had a prompt: 0 is a writer that lost the count (SGLang's multi-turn
            # replay wrote 0 input tokens: sglang#30304), and every input figure after it would be wrong
            raise SourceError(
                f"{what}: input_lens[{i}] is 0 for a completed request (a prompt has at least one token): "
                "the writer lost its input counts"
            )
        rec = RequestRecord(
            index=i,
            sent=sent,
            chunks=[(t, 1)],
            input_tokens=tokens(ins[i], f"input_lens[{i}]") if ins is not None else None,
            output_tokens=tokens(lists["output_lens"][i], f"output_lens[{i}]"),
            cached_tokens=_cached(lists, i),
        )
        gaps = lists["itls"][i]
        if not isinstance(gaps, list):
            raise SourceError(f"{what}: itls[{i}] is not a list of gaps")
        for j, g in enumerate(gaps):
            t += duration(g, f"itls[{i}][{j}]")
            rec.chunks.append((t, 1))
        rec.end = sent + duration(latencies[i], f"latencies[{i}]") if latencies is not None else t
        out.append(rec)
    return out


#: SGLang's per-request cache report: the cached tokens it wrote, and the server's details of them.
_CACHED = ("cached_tokens", "cached_tokens_details")


def _cached(lists: Mapping[str, Any], i: int) -> int | None:
    """Request ``i``'s cached prompt tokens where the server reported them: SGLang takes them from
    its own server's ``cached_tokens_details`` and writes 0 where there were none (any other server,
    or one not reporting), so only a count with its details is one."""
    if not all(k in lists for k in _CACHED) or not isinstance(lists["cached_tokens_details"][i], dict):
        return None
    return tokens(lists["cached_tokens"][i], f"cached_tokens[{i}]")


def records_in_order(records: Iterable[RequestRecord]) -> list[RequestRecord]:
    """Requests renumbered in send order (a tool lists them by completion, or by outcome)."""
    out = sorted(records, key=lambda r: (r.sent, r.index))
    for i, r in enumerate(out):
        r.index = i
    return out

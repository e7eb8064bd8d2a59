"""The MLCommons submission checker's rules for MLPerf Inference results: which detail-log key is the
published result per round, benchmark and effective scenario (copied from
``tools/submission/submission_checker/constants.py`` of mlcommons/inference), the checker's model
and scenario names, the published table's units, and the headline they give a run."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from benchdb.errors import clip
from benchdb.interop.writer import SourceError

#: The detail-log key of the published result, per round and LoadGen's effective scenario.
_NEW = {
    "Offline": "result_samples_per_second",
    "SingleStream": "early_stopping_latency_ss",
    "MultiStream": "early_stopping_latency_ms",
    "Server": "result_completed_samples_per_sec",
}
RESULT_FIELD: dict[str, dict[str, str]] = {
    "v4.0": {**_NEW, "Server": "result_scheduled_samples_per_sec"},
    "v4.1": dict(_NEW),
    "v5.0": dict(_NEW),
    "v5.1": dict(_NEW),
    "v6.0": dict(_NEW),
}
_TOKENS = {"Offline": "result_tokens_per_second", "Server": "result_completed_tokens_per_second"}
_GPTJ = {"Offline": "result_inferred_tokens_per_second", "Server": "result_inferred_completed_tokens_per_second"}
_EDGE_8B = {"Offline": "result_tokens_per_second", "SingleStream": "result_90.00_percentile_latency_ns"}
_V51 = {
    "llama2-70b-99": _TOKENS,
    "llama2-70b-99.9": _TOKENS,
    "llama3.1-8b": _TOKENS,
    "llama3.1-8b-edge": _EDGE_8B,
    "mixtral-8x7b": _TOKENS,
    "llama3.1-405b": _TOKENS,
    "deepseek-r1": _TOKENS,
    "whisper": {"Offline": "result_tokens_per_second"},
}
#: Benchmarks whose published result is another key (tokens per second for the LLMs).
RESULT_FIELD_BENCHMARK_OVERWRITE: dict[str, dict[str, dict[str, str]]] = {
    "v4.0": {
        m: {"Offline": "result_tokens_per_second", "Server": "result_completed_samples_per_sec"}
        for m in ("llama2-70b-99", "llama2-70b-99.9")
    },
    "v4.1": {
        "llama2-70b-99": _TOKENS,
        "llama2-70b-99.9": _TOKENS,
        "gptj-99": _GPTJ,
        "gptj-99.9": _GPTJ,
        "mixtral-8x7b": _TOKENS,
    },
    "v5.0": {
        "llama2-70b-99": _TOKENS,
        "llama2-70b-99.9": _TOKENS,
        "llama2-70b-interactive-99": _TOKENS,
        "llama2-70b-interactive-99.9": _TOKENS,
        "gptj-99": _GPTJ,
        "gptj-99.9": _GPTJ,
        "mixtral-8x7b": _TOKENS,
        "llama3.1-405b": _TOKENS,
    },
    "v5.1": _V51,
    "v6.0": {**_V51, "gpt-oss-120b": _TOKENS},
}
#: Benchmark folder names the checker maps to its model names.
MODEL_MAPPING = {
    "ssd-resnet34": "retinanet",
    "mobilenet": "resnet",
    "resnet50": "resnet",
    "llama3_1-405b": "llama3.1-405b",
    "llama3_1-8b": "llama3.1-8b",
    "llama3_1-8b-edge": "llama3.1-8b-edge",
}
SCENARIOS = ("SingleStream", "MultiStream", "Offline", "Server", "Interactive")
#: The published table's units -> the factor from its figure to benchdb's (seconds for a latency).
UNITS = {"Tokens/s": 1.0, "Samples/s": 1.0, "Queries/s": 1.0, "Latency (ms)": 1e-3, "Latency (s)": 1.0}
#: The unit the checker prints beside a result: by scenario, and tokens/s for the LLMs it names
#: (whisper's Offline result is tokens per second, printed as Samples/s, as the checker does).
UNIT_DICT = {
    "SingleStream": "Latency (ms)",
    "MultiStream": "Latency (ms)",
    "Offline": "Samples/s",
    "Server": "Queries/s",
    "Interactive": "Queries/s",
}
_LLM_UNITS = {"Offline": "Tokens/s", "Server": "Tokens/s", "Interactive": "Tokens/s"}
SPECIAL_UNIT_DICT = {
    "llama3.1-8b": {"Offline": "Tokens/s", "Server": "Tokens/s"},
    "llama3.1-8b-edge": {"Offline": "Tokens/s"},
    "wan-2.2-t2v-a14b": {"SingleStream": "Latency (s)"},  # v6.0: a video takes seconds
    **{
        m: _LLM_UNITS
        for m in ("llama2-70b-99", "llama2-70b-99.9", "mixtral-8x7b", "llama3.1-405b", "deepseek-r1", "gpt-oss-120b")
    },
}


def round_name(text: str) -> str:
    """A round as the checker writes it (``v4.1``) from ``v4.1``, ``4.1`` or ``V4.1``."""
    m = re.fullmatch(r"\s*[vV]?(\d+)\.(\d+)\s*", str(text))
    if not m:
        raise SourceError(f"{clip(str(text), 40)!r} is not an MLPerf round; write it as v4.1")
    return f"v{int(m.group(1))}.{int(m.group(2))}"


def round_rules(version: str | None) -> str:
    """The round whose checker rules apply: ``version`` where known, else the latest round before it
    (a round's checker keeps its predecessor's fields unless it names new ones); with no version (a
    lone log outside any repository), the latest known. A round before the first known is refused."""
    known = sorted(RESULT_FIELD, key=_version_key)
    if not version:
        return known[-1]
    earlier = [v for v in known if _version_key(v) <= _version_key(version)]
    if not earlier:
        raise SourceError(f"MLPerf round {version} predates the checker rules benchdb knows ({known[0]} and later)")
    return earlier[-1]


def _version_key(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", v)) or (0,)


def canonical_model(folder: str) -> str:
    return MODEL_MAPPING.get(folder, folder)


def canonical_scenario(name: str) -> str:
    return {s.lower(): s for s in SCENARIOS}.get(str(name).lower(), str(name))


@dataclass
class Headline:
    """The published figure of a run: benchdb's metric and value, the table's unit, and how it was read."""

    metric: str
    unit: str
    value: float
    table_unit: str
    key: str
    inferred_from: str | None = None

    @property
    def table_value(self) -> float:
        """The figure in the table's unit (milliseconds for a latency)."""
        return self.value / UNITS[self.table_unit]


def headline(log: dict[str, Any], model: str, scenario: str, version: str | None) -> Headline:
    """The result the submission checker publishes for a run: ``log`` holds the detail log's values,
    ``scenario`` is the scenario folder's (canonical) name. A scenario inferred from another one's run
    (MultiStream from a SingleStream run, Offline from either) is computed as the checker does."""
    rules = round_rules(version)
    effective = canonical_scenario(str(log.get("effective_scenario") or scenario))
    if effective not in RESULT_FIELD[rules]:
        raise SourceError(f"LoadGen's effective scenario {effective!r} is not one the checker publishes")
    key = RESULT_FIELD_BENCHMARK_OVERWRITE[rules].get(model, {}).get(effective) or RESULT_FIELD[rules][effective]
    inferred = None if scenario == effective or (scenario == "Interactive" and effective == "Server") else effective
    number = _number(log, key)
    latency = "latency" in key
    if inferred == "SingleStream" and scenario == "Offline":
        key, latency = "result_qps_without_loadgen_overhead", False
        number = _number(log, key)
    elif inferred == "MultiStream" and scenario == "Offline":
        mean_ms = _number(log, "result_mean_query_latency_ns") / 1e6
        number = _number(log, "effective_samples_per_query") * 1e3 / mean_ms
        key, latency = "effective_samples_per_query/result_mean_query_latency_ns", False
    elif inferred == "SingleStream" and scenario == "MultiStream":
        key, number, latency = "early_stopping_latency_ms*8", _number(log, "early_stopping_latency_ms") * 8, True
    elif inferred is not None:
        raise SourceError(f"a {scenario} result from a {effective} run is not one the checker infers")
    if not math.isfinite(number) or number <= 0:
        raise SourceError(f"the headline {key} = {number!r} is not a positive number")
    return make_headline(
        number / 1e9 if latency else number,
        "latency" if latency else "tokens" if "tokens" in key else "samples",
        model,
        scenario,
        key,
        inferred,
    )


def make_headline(
    value: float, kind: str, model: str, scenario: str, key: str, inferred: str | None = None
) -> Headline:
    """A headline of ``kind`` latency (seconds), tokens or samples per second, with the table's unit."""
    unit = SPECIAL_UNIT_DICT.get(model, {}).get(scenario) or UNIT_DICT.get(scenario, "Samples/s")
    if kind == "latency":
        return Headline("latency_s", "s", value, unit if unit.startswith("Latency") else "Latency (ms)", key, inferred)
    if kind == "tokens":
        return Headline("tokens_per_s", "tokens/s", value, unit, key, inferred)
    if scenario in ("Server", "Interactive"):
        return Headline("queries_per_s", "queries/s", value, unit, key, inferred)
    return Headline("throughput_items_s", "items/s", value, unit, key, inferred)


def _number(log: dict[str, Any], key: str) -> float:
    value = log.get(key)
    if value is None:
        raise SourceError(f"no {key} in the detail log (the value the submission checker publishes)")
    try:
        return float(value)
    except (TypeError, ValueError):
        raise SourceError(f"{key} = {value!r} is not a number") from None

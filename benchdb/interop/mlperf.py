"""MLPerf Inference LoadGen logs: ``mlperf_log_summary.txt`` (+ ``mlperf_log_detail.txt`` beside it),
and whole results repositories (:mod:`benchdb.interop.mlperf_repo`).

LoadGen keeps no per-query latencies in these logs, so a result is summary-only: the scenario,
mode, headline result, the latency (TTFT, TPOT) percentiles and ``Result is : VALID|INVALID`` with
the reasons LoadGen gives. The headline is the figure the MLCommons submission checker publishes:
the detail log's value under the key the checker picks for the round, the benchmark and LoadGen's
effective scenario (:data:`RESULT_FIELD`, :data:`RESULT_FIELD_BENCHMARK_OVERWRITE`, copied from
``tools/submission/submission_checker/constants.py`` of mlcommons/inference). LoadGen's percentiles
are nearest-rank (the sample at rank ceil(p * n) of the sorted latencies), recorded as
``percentile_method = nearest_rank``. A lone log names no hardware: it is recorded as ``unknown``;
a log inside a results repository takes its system from the repository's systems JSON.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchdb.interop.writer import Imported, SourceError, utc_iso

FILES = ("mlperf_log_summary.txt",)
FORMAT_ID = "mlperf-loadgen"
_LINE = re.compile(r"^\s*([^:]+?)\s*:\s*(.*?)\s*$")
_PCT = re.compile(r"^(\d+(?:\.\d+)?) percentile latency \(ns\)$")
_CHECKS = ("Min duration satisfied", "Min queries satisfied", "Early stopping satisfied",
           "Performance constraints satisfied", "TTFT constraint satisfied", "TPOT constraint satisfied")

#: The detail-log key of the published result, per round and LoadGen's effective scenario.
_NEW = {"Offline": "result_samples_per_second", "SingleStream": "early_stopping_latency_ss",
        "MultiStream": "early_stopping_latency_ms", "Server": "result_completed_samples_per_sec"}
RESULT_FIELD: dict[str, dict[str, str]] = {
    "v4.0": {**_NEW, "Server": "result_scheduled_samples_per_sec"},
    "v4.1": dict(_NEW), "v5.0": dict(_NEW), "v5.1": dict(_NEW), "v6.0": dict(_NEW),
}
_TOKENS = {"Offline": "result_tokens_per_second", "Server": "result_completed_tokens_per_second"}
_GPTJ = {"Offline": "result_inferred_tokens_per_second", "Server": "result_inferred_completed_tokens_per_second"}
_EDGE_8B = {"Offline": "result_tokens_per_second", "SingleStream": "result_90.00_percentile_latency_ns"}
_V51 = {"llama2-70b-99": _TOKENS, "llama2-70b-99.9": _TOKENS, "llama3.1-8b": _TOKENS, "llama3.1-8b-edge": _EDGE_8B,
        "mixtral-8x7b": _TOKENS, "llama3.1-405b": _TOKENS, "deepseek-r1": _TOKENS,
        "whisper": {"Offline": "result_tokens_per_second"}}
#: Benchmarks whose published result is another key (tokens per second for the LLMs).
RESULT_FIELD_BENCHMARK_OVERWRITE: dict[str, dict[str, dict[str, str]]] = {
    "v4.0": {m: {"Offline": "result_tokens_per_second", "Server": "result_completed_samples_per_sec"}
             for m in ("llama2-70b-99", "llama2-70b-99.9")},
    "v4.1": {"llama2-70b-99": _TOKENS, "llama2-70b-99.9": _TOKENS, "gptj-99": _GPTJ, "gptj-99.9": _GPTJ,
             "mixtral-8x7b": _TOKENS},
    "v5.0": {"llama2-70b-99": _TOKENS, "llama2-70b-99.9": _TOKENS, "llama2-70b-interactive-99": _TOKENS,
             "llama2-70b-interactive-99.9": _TOKENS, "gptj-99": _GPTJ, "gptj-99.9": _GPTJ,
             "mixtral-8x7b": _TOKENS, "llama3.1-405b": _TOKENS},
    "v5.1": _V51,
    "v6.0": {**_V51, "gpt-oss-120b": _TOKENS},
}
#: Benchmark folder names the checker maps to its model names.
MODEL_MAPPING = {"ssd-resnet34": "retinanet", "mobilenet": "resnet", "resnet50": "resnet",
                 "llama3_1-405b": "llama3.1-405b", "llama3_1-8b": "llama3.1-8b",
                 "llama3_1-8b-edge": "llama3.1-8b-edge"}
SCENARIOS = ("SingleStream", "MultiStream", "Offline", "Server", "Interactive")
#: The published table's units -> the factor from its figure to benchdb's (seconds for a latency).
UNITS = {"Tokens/s": 1.0, "Samples/s": 1.0, "Queries/s": 1.0, "Latency (ms)": 1e-3, "Latency (s)": 1.0}
#: The unit the checker prints beside a result: by scenario, and tokens/s for the LLMs it names
#: (whisper's Offline result is tokens per second, printed as Samples/s, as the checker does).
UNIT_DICT = {"SingleStream": "Latency (ms)", "MultiStream": "Latency (ms)", "Offline": "Samples/s",
             "Server": "Queries/s", "Interactive": "Queries/s"}
_LLM_UNITS = {"Offline": "Tokens/s", "Server": "Tokens/s", "Interactive": "Tokens/s"}
SPECIAL_UNIT_DICT = {"llama3.1-8b": {"Offline": "Tokens/s", "Server": "Tokens/s"},
                     "llama3.1-8b-edge": {"Offline": "Tokens/s"},
                     **{m: _LLM_UNITS for m in ("llama2-70b-99", "llama2-70b-99.9", "mixtral-8x7b", "llama3.1-405b",
                                                "deepseek-r1", "gpt-oss-120b")}}
_SUMMARY_KEYS = {"Samples per second": "result_samples_per_second", "Tokens per second": "result_tokens_per_second",
                 "Completed samples per second": "result_completed_samples_per_sec",
                 "Completed tokens per second": "result_completed_tokens_per_second",
                 "Scheduled samples per second": "result_scheduled_samples_per_sec",
                 "QPS w/o loadgen overhead": "result_qps_without_loadgen_overhead",
                 "Mean latency (ns)": "result_mean_latency_ns", "Scenario": "effective_scenario"}
_ESTIMATE = re.compile(r"Early stopping (90\.0|99\.0)th percentile estimate: (\d+)")
_DETAIL_KEYS = ("result_", "effective_", "early_stopping_latency", "power_", "loadgen_version", "test_datetime")
#: Detail-log keys (ns) -> (metric, statistic) for the latency figures beyond the summary's.
_TIMES = re.compile(r"^result_(first_token_|time_per_output_token_|)(min_|max_|mean_|\d+\.\d+_percentile_)"
                    r"(per_query_|query_|)(latency_)?ns$")
_TPOT_MINMAX = re.compile(r"^result_time_to_output_token_(min|max|mean)$")


def round_rules(version: str | None) -> str:
    """The round whose checker rules apply: ``version`` where known, else the latest round before it,
    else the latest known."""
    known = sorted(RESULT_FIELD, key=_version_key)
    if version:
        earlier = [v for v in known if _version_key(v) <= _version_key(version)]
        if earlier:
            return earlier[-1]
    return known[-1]


def _version_key(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", v)) or (0,)


def canonical_model(folder: str) -> str:
    return MODEL_MAPPING.get(folder, folder)


def canonical_scenario(name: str) -> str:
    return {s.lower(): s for s in SCENARIOS}.get(str(name).lower(), str(name))


def read_detail(path: Path) -> dict[str, Any]:
    """Values of the ``:::MLLOG`` lines a result needs from a detail log (the first of each key);
    empty when the file is absent. Only those lines are parsed: some logs carry megabytes of others."""
    out: dict[str, Any] = {}
    try:
        fh = path.open(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return out
    with fh:
        for line in fh:
            if not line.startswith(':::MLLOG {"key": "'):
                continue
            key = line[18:line.find('"', 18)]
            if key in out or not key.startswith(_DETAIL_KEYS):
                continue
            try:
                out[key] = json.loads(line[9:]).get("value")
            except ValueError:
                continue
    return out


def summary_fields(text: str) -> tuple[dict[str, str], list[str]]:
    """The summary's ``key : value`` fields (the first of each key) and its ``* `` reason lines."""
    fields: dict[str, str] = {}
    reasons: list[str] = []
    for line in text.splitlines():
        if line.strip().startswith("* "):
            reasons.append(line.strip()[2:])
        m = _LINE.match(line)
        if m and m.group(1) not in fields:
            fields[m.group(1)] = m.group(2)
    return fields, reasons


def _statistic(key: str, number: float, scenario: str) -> tuple[str, str, str, float] | None:
    """The (metric, unit, statistic, value) a numeric summary field records, or None for other fields."""
    pct = _PCT.match(key)
    if pct:
        return ("latency_s", "s", f"p{float(pct.group(1)):g}", number / 1e9)
    if key in ("Min latency (ns)", "Max latency (ns)", "Mean latency (ns)"):
        return ("latency_s", "s", key.split()[0].lower(), number / 1e9)
    if key in ("Tokens per second", "Completed tokens per second"):
        return ("tokens_per_s", "tokens/s", "value", number)
    if key == "Scheduled samples per second":
        return ("scheduled_items_s", "items/s", "value", number)
    if key in ("Samples per second", "Completed samples per second"):
        served = scenario in ("Server", "Interactive")
        return ("queries_per_s" if served else "throughput_items_s", "queries/s" if served else "items/s",
                "value", number)
    if key.startswith("QPS w/"):
        return ("throughput_items_s", "items/s",
                "value_without_overhead" if "w/o" in key else "value_with_overhead", number)
    if re.match(r"^\d+(\.\d+)?th percentile latency \(ns\)$", key):
        return ("latency_s", "s", f"headline_p{float(key.split('th')[0]):g}", number / 1e9)
    return None


def _detail_statistics(log: dict[str, Any]) -> list[tuple[str, str, str, float]]:
    """TTFT, TPOT and per-query latency figures of a detail log (seconds)."""
    out = []
    for key, value in log.items():
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
            continue
        m = _TIMES.match(key)
        tpot = _TPOT_MINMAX.match(key)
        if m and (m.group(1) or m.group(3)):
            metric = {"first_token_": "ttft_s", "time_per_output_token_": "tpot_s"}.get(m.group(1), "query_latency_s")
            stat = m.group(2).rstrip("_")
            if stat.endswith("_percentile"):
                stat = f"p{float(stat.split('_')[0]):g}"
            out.append((metric, "s", stat, value / 1e9))
        elif tpot:
            out.append(("tpot_s", "s", tpot.group(1), value / 1e9))
    return out


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
    return make_headline(number / 1e9 if latency else number, "latency" if latency else "tokens" if "tokens" in key
                         else "samples", model, scenario, key, inferred)


def make_headline(value: float, kind: str, model: str, scenario: str, key: str,
                  inferred: str | None = None) -> Headline:
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


@dataclass
class LoadgenRun:
    """What a LoadGen performance run's two logs say."""

    verdict: str
    reasons: list[str]
    mode: str | None
    sut: str
    effective_scenario: str
    log: dict[str, Any]
    statistics: list[tuple[str, str, str, float]]
    settings: dict[str, Any]

    @property
    def version(self) -> str | None:
        return str(self.log.get("loadgen_version") or "").split(" @")[0] or None


def read_run(path: Path) -> LoadgenRun:
    """The summary log ``path`` and the detail log beside it (its values fill in for a missing detail log)."""
    text = path.read_text(encoding="utf-8", errors="replace")
    if "MLPerf Results Summary" not in text:
        raise SourceError("not an MLPerf LoadGen summary (no 'MLPerf Results Summary' header)")
    fields, reasons = summary_fields(text)
    if "Result is" not in fields:
        raise SourceError("no 'Result is : VALID|INVALID' line (the log is incomplete)")
    verdict = fields["Result is"].upper()
    if verdict not in ("VALID", "INVALID"):
        raise SourceError(f"'Result is : {fields['Result is']}' is neither VALID nor INVALID")
    scenario = fields.get("Scenario")
    if not scenario:
        raise SourceError("no 'Scenario :' line")
    log: dict[str, Any] = {key: fields[label] for label, key in _SUMMARY_KEYS.items() if label in fields}
    for line in reasons:
        est = _ESTIMATE.search(line)
        if est:
            log["early_stopping_latency_ss" if est.group(1) == "90.0" else "early_stopping_latency_ms"] = est.group(2)
    for label, value in fields.items():
        pct = _PCT.match(label)
        if pct:
            log[f"result_{float(pct.group(1)):.2f}_percentile_latency_ns"] = value
    log.update(read_detail(path.with_name("mlperf_log_detail.txt")))
    stats: dict[tuple[str, str], tuple[str, str, str, float]] = {}
    for key, value in fields.items():
        try:
            number = float(value)
        except ValueError:
            continue
        stat = _statistic(key, number, canonical_scenario(scenario))
        if stat is not None:
            stats.setdefault((stat[0], stat[2]), stat)
    for stat in _detail_statistics(log):
        stats.setdefault((stat[0], stat[2]), stat)
    failed = [c for c in _CHECKS if fields.get(c, "Yes").strip().lower() not in ("yes", "true")]
    why = [f"mlperf: {c}: {fields[c]}" for c in failed] + [f"mlperf: {r}" for r in reasons if verdict == "INVALID"]
    return LoadgenRun(verdict=verdict, reasons=why if verdict == "INVALID" else [], mode=fields.get("Mode"),
                      sut=fields.get("SUT name") or "unknown",
                      effective_scenario=canonical_scenario(str(log.get("effective_scenario") or scenario)),
                      log=log, statistics=list(stats.values()),
                      settings={"mlperf_result": verdict, "sut_name": fields.get("SUT name") or "unknown",
                                "samples_per_query": fields.get("samples_per_query"),
                                "target_qps": fields.get("target_qps")})


def with_headline(stats: list[tuple[str, str, str, float]], head: Headline) -> list[tuple[str, str, str, float]]:
    """``stats`` with the headline as statistic ``value`` of its metric (replacing the summary's)."""
    kept = [s for s in stats if (s[0], s[2]) != (head.metric, "value")]
    return [*kept, (head.metric, head.unit, "value", head.value)]


def parse_log(path: Path) -> list[Imported]:
    """A lone summary log, outside any results repository: its figures, hardware unknown (inside a
    repository, :func:`benchdb.interop.mlperf_repo.parse` reads the system, table row, accuracy and
    power as well)."""
    run = read_run(path)
    scenario = run.effective_scenario
    stats = run.statistics
    primary = next((s[0] for s in stats if s[2] == "value"), "latency_s")
    if run.log.get("effective_scenario") is not None or any(s[2] == "value" for s in stats):
        try:
            head = headline(run.log, "", scenario, None)
        except SourceError:
            head = None
        if head is not None:
            stats, primary = with_headline(stats, head), head.metric
    if not stats:
        raise SourceError("no result figures (latency percentiles or samples per second) in the summary")
    return [Imported(
        model_id=f"mlperf:{run.sut}", backend="mlperf-loadgen", device="unknown", mode=scenario,
        precision="unknown", batch_size=1,
        input_shape=f"scenario={scenario},mode={run.mode or 'unknown'}",
        primary_metric=primary, options={"scenario": scenario, "test_mode": run.mode},
        hardware={"kind": "unknown", "device_name": "unknown (MLPerf LoadGen logs name no hardware)"},
        started_at=utc_iso(run.log.get("test_datetime")), run_key=str(path.parent),
        validity="valid" if run.verdict == "VALID" else "invalid", validity_reasons=run.reasons,
        timing_method="loadgen", tool="mlcommons-loadgen", tool_version=run.version,
        summary_only=True, percentile_method="nearest_rank", statistics=stats, settings=run.settings,
        software={"mlcommons-loadgen": run.version} if run.version else {},
    )]

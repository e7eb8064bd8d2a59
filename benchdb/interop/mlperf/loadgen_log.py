"""MLPerf Inference LoadGen logs: ``mlperf_log_summary.txt`` (+ ``mlperf_log_detail.txt`` beside it),
and whole results repositories (:mod:`benchdb.interop.mlperf.repo`).

LoadGen keeps no per-query latencies in these logs, so a result is summary-only: the scenario,
mode, headline result, the latency (TTFT, TPOT) percentiles and ``Result is : VALID|INVALID`` with
the reasons LoadGen gives. The headline is the figure the MLCommons submission checker publishes:
the detail log's value under the key the checker picks for the round, the benchmark and LoadGen's
effective scenario (the checker's rules, copied from ``tools/submission/submission_checker/constants.py``
of mlcommons/inference, are :mod:`benchdb.interop.mlperf.rules`). LoadGen's percentiles
are nearest-rank (the sample at rank ceil(p * n) of the sorted latencies), recorded as
``percentile_method = nearest_rank``. A lone log names no hardware: it is recorded as ``unknown``;
a log inside a results repository takes its system from the repository's systems JSON.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchdb.errors import clip
from benchdb.interop import formats
from benchdb.interop.mlperf.rules import Headline, canonical_scenario, headline
from benchdb.interop.mlperf.system_desc import LOG_BYTES
from benchdb.interop.writer import Imported, SourceError, utc_iso

FILES = ("mlperf_log_summary.txt",)
FORMAT_ID = formats.importer("mlperf").source
_LINE = re.compile(r"^\s*([^:]+?)\s*:\s*(.*?)\s*$")
_PCT = re.compile(r"^(\d+(?:\.\d+)?) percentile latency \(ns\)$")
_CHECKS = (
    "Min duration satisfied",
    "Min queries satisfied",
    "Early stopping satisfied",
    "Performance constraints satisfied",
    "TTFT constraint satisfied",
    "TPOT constraint satisfied",
)

_SUMMARY_KEYS = {
    "Samples per second": "result_samples_per_second",
    "Tokens per second": "result_tokens_per_second",
    "Completed samples per second": "result_completed_samples_per_sec",
    "Completed tokens per second": "result_completed_tokens_per_second",
    "Scheduled samples per second": "result_scheduled_samples_per_sec",
    "QPS w/o loadgen overhead": "result_qps_without_loadgen_overhead",
    "Mean latency (ns)": "result_mean_latency_ns",
    "Scenario": "effective_scenario",
}
_ESTIMATE = re.compile(r"Early stopping (90\.0|99\.0)th percentile estimate: (\d+)")
_DETAIL_KEYS = ("result_", "effective_", "early_stopping_latency", "power_", "loadgen_version", "test_datetime")
#: Detail-log keys (ns) -> (metric, statistic) for the latency figures beyond the summary's.
_TIMES = re.compile(
    r"^result_(first_token_|time_per_output_token_|)(min_|max_|mean_|\d+\.\d+_percentile_)"
    r"(per_query_|query_|)(latency_)?ns$"
)
_TPOT_MINMAX = re.compile(r"^result_time_to_output_token_(min|max|mean)$")


def read_detail(path: Path, within: Path | None = None) -> dict[str, Any]:
    """Values of the ``:::MLLOG`` lines a result needs from a detail log (the first of each key);
    empty when the file is absent. Only those lines are parsed: some logs carry megabytes of others."""
    from benchdb.schema import documents

    out: dict[str, Any] = {}
    if not path.is_file():
        return out
    try:
        for line in documents.read_lines(path, max_bytes=LOG_BYTES, within=within):
            if not line.startswith(':::MLLOG {"key": "'):
                continue
            key = line[18 : line.find('"', 18)]
            if key in out or not key.startswith(_DETAIL_KEYS):
                continue
            try:
                doc = documents.parse_json(line[9:], path)
            except documents.DocumentError:
                continue  # a line LoadGen did not finish: its key stays unread, as if absent
            if isinstance(doc, dict):
                out[key] = doc.get("value")
    except documents.DocumentError as exc:
        raise SourceError(str(exc)) from None
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
        return (
            "queries_per_s" if served else "throughput_items_s",
            "queries/s" if served else "items/s",
            "value",
            number,
        )
    if key.startswith("QPS w/"):
        return (
            "throughput_items_s",
            "items/s",
            "value_without_overhead" if "w/o" in key else "value_with_overhead",
            number,
        )
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


def read_run(path: Path, within: Path | None = None) -> LoadgenRun:
    """The summary log ``path`` and the detail log beside it (its values fill in for a missing detail
    log); inside a results repository, ``within`` is its root (a file linked out of it is refused)."""
    from benchdb.schema import documents

    try:
        text = documents.read_text(path, max_bytes=LOG_BYTES, within=within, errors="replace")
    except documents.DocumentError as exc:
        raise SourceError(exc.problem) from None
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
    log.update(read_detail(path.with_name("mlperf_log_detail.txt"), within))
    stats: dict[tuple[str, str], tuple[str, str, str, float]] = {}
    for key, value in fields.items():
        try:
            number = float(value)
        except ValueError:
            continue
        stat = _statistic(key, number, canonical_scenario(scenario))
        if number < 0 and (stat is not None or key.endswith("(ns)")):
            what = "latency" if key.endswith("(ns)") else "figure"
            raise SourceError(f"{key!r} is {clip(value, 40)}, a negative {what}: LoadGen never writes one")
        if stat is not None:
            stats.setdefault((stat[0], stat[2]), stat)
    for stat in _detail_statistics(log):
        stats.setdefault((stat[0], stat[2]), stat)
    failed = [c for c in _CHECKS if fields.get(c, "Yes").strip().lower() not in ("yes", "true")]
    why = [f"mlperf: {c}: {fields[c]}" for c in failed] + [f"mlperf: {r}" for r in reasons if verdict == "INVALID"]
    return LoadgenRun(
        verdict=verdict,
        reasons=why if verdict == "INVALID" else [],
        mode=fields.get("Mode"),
        sut=fields.get("SUT name") or "unknown",
        effective_scenario=canonical_scenario(str(log.get("effective_scenario") or scenario)),
        log=log,
        statistics=list(stats.values()),
        settings={
            "mlperf_result": verdict,
            "sut_name": fields.get("SUT name") or "unknown",
            "samples_per_query": fields.get("samples_per_query"),
            "target_qps": fields.get("target_qps"),
        },
    )


def with_headline(stats: list[tuple[str, str, str, float]], head: Headline) -> list[tuple[str, str, str, float]]:
    """``stats`` with the headline as statistic ``value`` of its metric (replacing the summary's)."""
    kept = [s for s in stats if (s[0], s[2]) != (head.metric, "value")]
    return [*kept, (head.metric, head.unit, "value", head.value)]


def parse_log(path: Path) -> list[Imported]:
    """A lone summary log, outside any results repository: its figures, hardware unknown (inside a
    repository, :func:`benchdb.interop.mlperf.repo.parse` reads the system, table row, accuracy and
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
    return [
        Imported(
            model_id=f"mlperf:{run.sut}",
            backend="mlperf-loadgen",
            device="unknown",
            mode=scenario,
            precision="unknown",
            batch_size=1,
            input_shape=f"scenario={scenario},mode={run.mode or 'unknown'}",
            primary_metric=primary,
            options={"scenario": scenario, "test_mode": run.mode},
            hardware={"kind": "unknown", "device_name": "unknown (MLPerf LoadGen logs name no hardware)"},
            started_at=utc_iso(run.log.get("test_datetime")),
            run_key=str(path.parent),
            validity="valid" if run.verdict == "VALID" else "invalid",
            validity_reasons=run.reasons,
            timing_method="loadgen",
            tool="mlcommons-loadgen",
            tool_version=run.version,
            summary_only=True,
            percentile_method="nearest_rank",
            statistics=stats,
            settings=run.settings,
            software={"mlcommons-loadgen": run.version} if run.version else {},
        )
    ]

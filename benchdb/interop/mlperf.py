"""MLPerf Inference LoadGen logs: ``mlperf_log_summary.txt`` (+ ``mlperf_log_detail.txt`` beside it).

LoadGen keeps no per-query latencies in these logs, so a result is summary-only: the scenario,
mode, headline result (the 90th/99th percentile latency of SingleStream/MultiStream, samples per
second of Offline, ...), the latency percentiles and ``Result is : VALID|INVALID`` with the
reasons LoadGen gives. LoadGen's percentiles are nearest-rank (the sample at rank ceil(p * n)
of the sorted latencies), recorded as ``percentile_method = nearest_rank``. The log names no
hardware: it is recorded as ``unknown``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from benchdb.interop.writer import Imported, SourceError, utc_iso

FILES = ("mlperf_log_summary.txt",)
_LINE = re.compile(r"^\s*([^:]+?)\s*:\s*(.*?)\s*$")
_PCT = re.compile(r"^(\d+(?:\.\d+)?) percentile latency \(ns\)$")
#: Summary keys whose value is the headline result, by what it measures.
_HEADLINES = {
    "Samples per second": ("throughput_items_s", "items/s"),
    "Completed samples per second": ("throughput_items_s", "items/s"),
    "Scheduled samples per second": ("scheduled_items_s", "items/s"),
    "Tokens per second": ("tokens_per_s", "tokens/s"),
}
_CHECKS = ("Min duration satisfied", "Min queries satisfied", "Early stopping satisfied",
           "Performance constraints satisfied", "TTFT constraint satisfied", "TPOT constraint satisfied")


def _detail(path: Path) -> dict:
    """Values of ``:::MLLOG`` lines in the detail log beside the summary (empty when absent)."""
    detail = path.with_name("mlperf_log_detail.txt")
    out: dict = {}
    if detail.is_file():
        for line in detail.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith(":::MLLOG "):
                try:
                    doc = json.loads(line[9:])
                except ValueError:
                    continue
                out.setdefault(doc.get("key"), doc.get("value"))
    return out


def _summary_fields(text: str) -> tuple[dict[str, str], list[str]]:
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


def _statistic(key: str, number: float) -> tuple[str, str, str, float] | None:
    """The (metric, unit, statistic, value) a numeric summary field records, or None for other fields."""
    pct = _PCT.match(key)
    if pct:
        return ("latency_s", "s", f"p{float(pct.group(1)):g}", number / 1e9)
    if key in ("Min latency (ns)", "Max latency (ns)", "Mean latency (ns)"):
        return ("latency_s", "s", key.split()[0].lower(), number / 1e9)
    if key in _HEADLINES:
        metric, unit = _HEADLINES[key]
        return (metric, unit, "value", number)
    if key.startswith("QPS w/"):
        return ("throughput_items_s", "items/s",
                "value_without_overhead" if "w/o" in key else "value_with_overhead", number)
    if re.match(r"^\d+(\.\d+)?th percentile latency \(ns\)$", key):
        return ("latency_s", "s", f"headline_p{float(key.split('th')[0]):g}", number / 1e9)
    return None


def parse(path: Path) -> list[Imported]:
    text = path.read_text(encoding="utf-8", errors="replace")
    if "MLPerf Results Summary" not in text:
        raise SourceError("not an MLPerf LoadGen summary (no 'MLPerf Results Summary' header)")
    fields, reasons = _summary_fields(text)
    if "Result is" not in fields:
        raise SourceError("no 'Result is : VALID|INVALID' line (the log is incomplete)")
    verdict = fields["Result is"].upper()
    if verdict not in ("VALID", "INVALID"):
        raise SourceError(f"'Result is : {fields['Result is']}' is neither VALID nor INVALID")
    scenario = fields.get("Scenario") or fields.get("Scenario ")
    if not scenario:
        raise SourceError("no 'Scenario :' line")
    stats: list[tuple[str, str, str, float]] = []
    for key, value in fields.items():
        try:
            number = float(value)
        except ValueError:
            continue
        stat = _statistic(key, number)
        if stat is not None:
            stats.append(stat)
    if not stats:
        raise SourceError("no result figures (latency percentiles or samples per second) in the summary")
    failed = [c for c in _CHECKS if fields.get(c, "Yes").strip().lower() not in ("yes", "true")]
    why = [f"mlperf: {c}: {fields[c]}" for c in failed] + [f"mlperf: {r}" for r in reasons if verdict == "INVALID"]
    detail = _detail(path)
    version = str(detail.get("loadgen_version") or "").split(" @")[0] or None
    sut = fields.get("SUT name") or "unknown"
    # The headline: samples (or tokens) per second where LoadGen reports one (Offline, Server), else latency.
    headline = [s[0] for s in stats if s[2] == "value"]
    primary = headline[0] if headline else "latency_s"
    return [Imported(
        model_id=f"mlperf:{sut}", backend="mlperf-loadgen", device="unknown", mode=scenario,
        precision="unknown", batch_size=1,
        input_shape=f"scenario={scenario},mode={fields.get('Mode', 'unknown')}",
        primary_metric=primary, options={"scenario": scenario, "test_mode": fields.get("Mode")},
        hardware={"kind": "unknown", "device_name": "unknown (MLPerf LoadGen logs name no hardware)"},
        started_at=utc_iso(detail.get("test_datetime")), run_key=str(path.parent),
        validity="valid" if verdict == "VALID" else "invalid",
        validity_reasons=why if verdict == "INVALID" else [],
        timing_method="loadgen", tool="mlcommons-loadgen", tool_version=version,
        summary_only=True, percentile_method="nearest_rank", statistics=stats,
        settings={"mlperf_result": verdict, "sut_name": sut,
                  "samples_per_query": fields.get("samples_per_query"), "target_qps": fields.get("target_qps")},
        software={"mlcommons-loadgen": version} if version else {},
    )]

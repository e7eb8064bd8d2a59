"""An MLPerf run's figures beside LoadGen's summary: accuracy (the checker's patterns over
``accuracy.txt``, or the table's Accuracy string), power (``spl.txt`` between power_begin and power_end) and a
v6.x ``result_summary.json``'s statistics."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchdb.errors import clip
from benchdb.interop.mlperf import rules
from benchdb.interop.mlperf.system_desc import LOG_BYTES, SIDE_BYTES, Located, finite_float
from benchdb.interop.writer import SourceError

if TYPE_CHECKING:
    from benchdb.interop.mlperf.tables import Row

#: The checker's accuracy patterns (ACC_PATTERN) and each benchmark's metrics (accuracy-target).
ACC_PATTERN = {
    "acc": r"^(?:\{\"accuracy|accuracy)[\": ]*=?\s*([\d\.]+).*",
    "AUC": r"^AUC=([\d\.]+).*",
    "mAP": r".*(?:mAP=|'Total':)\s*([\d.]+)",
    "bleu": r"^BLEU\:\s*([\d\.]+).*",
    "F1": r"^{[\"\']exact_match[\"\']\:\s*[\d\.]+,\s*[\"\']f1[\"\']\:\s*([\d\.]+)}",
    "ACCURACY": r"Word Error Rate\:.*, accuracy=([0-9\.]+)%",
    "DICE": r"Accuracy\:\s*mean\s*=\s*([\d\.]+).*",
    "ROUGE1": r".*'rouge1':\s+'?([\d.]+)'?.*",
    "ROUGE2": r".*'rouge2':\s+'?([\d.]+)'?.*",
    "ROUGEL": r".*'rougeL':\s+'?([\d.]+)'?.*",
    "ROUGELSUM": r".*'rougeLsum':\s+'?([\d.]+)'?.*",
    "GEN_LEN": r".*'gen_len':\s([\d.]+).*",
    "TOKENS_PER_SAMPLE": r".*'tokens_per_sample':\s([\d.]+).*",
    "CLIP_SCORE": r".*'CLIP_SCORE':\s+'?([\d.]+).*",
    "FID_SCORE": r".*'FID_SCORE':\s+'?([\d.]+).*",
    "gsm8k_accuracy": r".*'gsm8k':\s([\d.]+).*",
    "mbxp_accuracy": r".*'mbxp':\s([\d.]+).*",
    "exact_match": r".*'exact_match':\s([\d.]+).*",
    "vbench_score": r".*'vbench_score':\s([\d.]+).*",
    "F1_HIERARCHICAL": r'\{.*"f1":\s*([\d\.]+).*\}',
}
_ROUGE = ("ROUGE1", "ROUGE2", "ROUGEL")
ACCURACY_METRICS = {
    "resnet": ("acc",),
    "retinanet": ("mAP",),
    "bert-99": ("F1",),
    "bert-99.9": ("F1",),
    "rgat": ("acc",),
    "dlrm-v2-99": ("AUC",),
    "dlrm-v2-99.9": ("AUC",),
    "3d-unet-99": ("DICE",),
    "3d-unet-99.9": ("DICE",),
    "gptj-99": (*_ROUGE, "ROUGELSUM", "GEN_LEN"),
    "gptj-99.9": (*_ROUGE, "ROUGELSUM", "GEN_LEN"),
    "llama2-70b-99": (*_ROUGE, "TOKENS_PER_SAMPLE"),
    "llama2-70b-99.9": (*_ROUGE, "TOKENS_PER_SAMPLE"),
    "llama3.1-8b": (*_ROUGE, "ROUGELSUM", "GEN_LEN"),
    "llama3.1-8b-edge": (*_ROUGE, "ROUGELSUM", "GEN_LEN"),
    "stable-diffusion-xl": ("CLIP_SCORE", "FID_SCORE"),
    "mixtral-8x7b": (*_ROUGE, "TOKENS_PER_SAMPLE", "gsm8k_accuracy", "mbxp_accuracy"),
    "llama3.1-405b": ("ROUGEL", "exact_match", "TOKENS_PER_SAMPLE"),
    "pointpainting": ("mAP",),
    "deepseek-r1": ("exact_match", "TOKENS_PER_SAMPLE"),
    "whisper": ("ACCURACY",),
    "gpt-oss-120b": ("exact_match",),
    "qwen3-vl-235b-a22b": ("F1_HIERARCHICAL",),
    "wan-2.2-t2v-a14b": ("vbench_score",),
}


def parse_accuracy_txt(text: str, model: str) -> list[tuple[str, float]]:
    names = ACCURACY_METRICS.get(model, tuple(ACC_PATTERN))
    found: dict[str, float] = {}
    lines = text.splitlines()
    for name in names:
        pattern = re.compile(ACC_PATTERN[name])
        for line in lines:
            m = pattern.match(line)
            if m and finite_float(m.group(1)) is not None:
                found[name] = float(m.group(1))
                break
    return list(found.items())


def parse_accuracy_string(text: str, model: str) -> list[tuple[str, float]]:
    """The table's Accuracy (``ROUGE1: 44.45  ROUGE2: 22.04`` or a bare score)."""
    pairs = re.findall(r"([A-Za-z_][\w\-]*)\s*:\s*(-?\d+(?:\.\d+)?(?:e-?\d+)?)", text)
    if pairs:
        return [(k, float(v)) for k, v in pairs]
    number = finite_float(text.strip())
    if number is None:
        return []
    return [((ACCURACY_METRICS.get(model) or ("score",))[0], number)]


#: LoadGen's and the power analyser's time stamps, ``%m-%d-%Y %H:%M:%S.%f``.
_STAMP = re.compile(r"(\d{1,2})-(\d{1,2})-(\d{4}) (\d{1,2}):(\d{1,2}):(\d{1,2}(?:\.\d{1,6})?)")


def _stamp(text: str) -> tuple[int, int, int, int, int, float] | None:
    """A time stamp as a tuple that orders as the times do (a power log has one per line: strptime
    on each cost a tenth of a whole repository's import)."""
    m = _STAMP.fullmatch(text.strip())
    if m is None:
        return None
    month, day, year, hour, minute = (int(m.group(i)) for i in range(1, 6))
    return (year, month, day, hour, minute, float(m.group(6)))


def power(run_dir: Path, log: dict[str, Any], within: Path | None = None) -> float | None:
    """Mean watts of the analyser's samples between LoadGen's power_begin and power_end (spl.txt)."""
    from benchdb.schema import documents

    spl = run_dir / "spl.txt"
    if not spl.is_file() or not log.get("power_begin") or not log.get("power_end"):
        return None
    begin, end = _stamp(str(log["power_begin"])), _stamp(str(log["power_end"]))
    if begin is None or end is None:
        raise SourceError(f"power_begin/power_end {log['power_begin']!r} are not LoadGen times")
    watts = []
    try:
        for line in documents.read_lines(spl, max_bytes=LOG_BYTES, within=within):
            if not line.startswith("Time,"):
                continue
            cells = line.split(",", 5)
            try:
                when = _stamp(cells[1])
                value = float(cells[3])
            except (IndexError, ValueError):
                continue
            if when is not None and begin < when < end and value > 0:
                watts.append(value)
    except documents.DocumentError as exc:
        raise SourceError(str(exc)) from None
    if not watts:
        raise SourceError(f"{spl.name} has no power samples between power_begin and power_end")
    return sum(watts) / len(watts)


_SUMMARY_BLOCKS = {
    "ttft": ("ttft_s", "s", 1e-9),
    "tpot": ("tpot_s", "s", 1e-9),
    "latency": ("latency_s", "s", 1e-9),
    "output_sequence_lengths": ("output_tokens", "tokens", 1.0),
}


def read_endpoints(path: Path, within: Path | None = None) -> tuple[dict[str, Any], list[tuple[str, str, str, float]]]:
    """A v6.x ``result_summary.json``: the document and its figures as statistics (none negative)."""
    from benchdb.interop import load_json

    doc = load_json(path, max_bytes=LOG_BYTES, within=within)
    if not isinstance(doc, dict) or not any(k in doc for k in ("qps", "tps", "latency")):
        raise SourceError("not an MLPerf result_summary.json (no qps, tps or latency)")
    stats: list[tuple[str, str, str, float]] = []
    for block, (metric, unit, factor) in _SUMMARY_BLOCKS.items():
        figures = doc.get(block)
        if not isinstance(figures, dict):
            continue
        for name, stat in (("min", "min"), ("max", "max"), ("median", "median"), ("avg", "mean"), ("std_dev", "std")):
            v = finite_float(figures.get(name))
            if v is not None:
                stats.append((metric, unit, stat, _not_negative(v, f"{block}.{name}") * factor))
        for group, prefix in (("percentiles", "p"), ("early_stopping_percentiles", "early_stopping_p")):
            for pct, value in (figures.get(group) or {}).items():
                v, p = finite_float(value), finite_float(pct)
                if v is not None and p is not None:
                    stats.append((metric, unit, f"{prefix}{p:g}", _not_negative(v, f"{block}.{group}.{pct}") * factor))
    for name, metric, unit in (
        ("n_samples_completed", "requests", "count"),
        ("n_samples_failed", "failed_requests", "count"),
    ):
        v = finite_float(doc.get(name))
        if v is not None:
            stats.append((metric, unit, "value", _not_negative(v, name)))
    return doc, stats


def _not_negative(value: float, field: str) -> float:
    if value < 0:
        raise SourceError(f"{clip(field, 60)} is {value:g}: negative, and no time, length or count is")
    return value


#: config.yaml paths the submission checker reads for an endpoints run (its ENDPOINTS_YAML_FIELD_MAP).
ENDPOINTS_CONFIG = {
    "type": ("type",),
    "version": ("version",),
    "streaming": ("model_params", "streaming"),
    "load_pattern": ("settings", "load_pattern", "type"),
    "target_qps": ("settings", "load_pattern", "target_qps"),
    "min_duration_ms": ("settings", "runtime", "min_duration_ms"),
    "max_duration_ms": ("settings", "runtime", "max_duration_ms"),
    "n_samples_to_issue": ("settings", "runtime", "n_samples_to_issue"),
    "scheduler_random_seed": ("settings", "runtime", "scheduler_random_seed"),
    "dataloader_random_seed": ("settings", "runtime", "dataloader_random_seed"),
}


def read_endpoints_config(scenario_dir: Path, within: Path | None = None) -> dict[str, Any]:
    """The settings the checker reads from an endpoints run's ``config.yaml`` (scenario folder);
    empty when there is none."""
    from benchdb.schema import documents

    path = next((scenario_dir / n for n in ("config.yaml", "config.yml") if (scenario_dir / n).is_file()), None)
    if path is None:
        return {}
    try:
        doc = documents.read_document(path, max_bytes=SIDE_BYTES, within=within)
    except documents.DocumentError as exc:
        raise SourceError(f"{path.name}: {exc.problem}") from None
    out: dict[str, Any] = {}
    for name, keys in ENDPOINTS_CONFIG.items():
        value: Any = doc
        for key in keys:
            value = value.get(key) if isinstance(value, dict) else None
        if isinstance(value, (str, int, float, bool)):
            out[name] = value
    return out


def endpoint_headline(
    doc: dict[str, Any], model: str, scenario: str, stats: list[tuple[str, str, str, float]]
) -> rules.Headline:
    """The headline figure of an MLPerf Endpoints run (its percentile latency or its throughput)."""
    tokens = rules.SPECIAL_UNIT_DICT.get(model, {}).get(scenario) == "Tokens/s"
    if scenario in ("SingleStream", "MultiStream"):
        p = "early_stopping_p90" if scenario == "SingleStream" else "early_stopping_p99"
        value = next((s[3] for s in stats if s[0] == "latency_s" and s[2] == p), None)
        key, kind = f"latency.{p}", "latency"
    else:
        key, kind = ("tps", "tokens") if tokens else ("qps", "samples")
        value = finite_float(doc.get(key))
    if value is None or value <= 0:
        raise SourceError(f"the headline {key} = {value!r} is not a positive number")
    return rules.make_headline(value, kind, model, scenario, key)


def accuracy_statistics(loc: Located, model: str, rows: list[Row]) -> list[tuple[str, str, str, float]]:
    """A run's accuracy scores: its accuracy.txt or accuracy_results.json, else the published row's."""
    from benchdb.interop import load_json
    from benchdb.schema import documents

    folder = loc.root / loc.location / "accuracy"
    found: list[tuple[str, float]] = []
    txt, results = folder / "accuracy.txt", folder / "accuracy_results.json"
    if txt.is_file():
        try:
            text = documents.read_text(txt, max_bytes=SIDE_BYTES, within=loc.root, errors="replace")
        except documents.DocumentError as exc:
            raise SourceError(str(exc)) from None
        found = parse_accuracy_txt(text, model)
    elif results.is_file():
        try:
            doc = load_json(results, max_bytes=SIDE_BYTES, within=loc.root)
        except SourceError as exc:
            raise SourceError(f"{results}: {exc}") from None
        if not isinstance(doc, dict):
            raise SourceError(f"{results}: not an accuracy_results.json (expected an object)")
        if finite_float(doc.get("average_accuracy")) is not None:
            found.append(("average", float(doc["average_accuracy"])))
        for score in doc.get("accuracy_scores") or []:
            if isinstance(score, dict) and finite_float(score.get("score")) is not None:
                found.append((str(score.get("dataset_name") or "score"), float(score["score"])))
                subsets = (score.get("breakdown") or {}).get("subset_scores") or {}
                found += [
                    (f"{score.get('dataset_name')}/{k}", float(v))
                    for k, v in subsets.items()
                    if finite_float(v) is not None
                ]
    if not found:
        for row in rows:
            if row.accuracy:
                found = parse_accuracy_string(row.accuracy, model)
                break
    return [(f"accuracy:{name.lower()}", "score", "value", value) for name, value in found]

"""MLPerf Inference results repositories (mlcommons/inference_results_v4.x, v5.x, v6.x): every
performance run of a repository, a division or a submitter folder, with its system and checked
against the repository's published table.

A run is ``<division>/<submitter>/results/<system>/<benchmark>/<scenario>/performance/run_1/``
(LoadGen's ``mlperf_log_summary.txt`` + ``mlperf_log_detail.txt``; v6.x endpoint runs write
``performance/result_summary.json`` instead). ``accuracy/`` and ``ranging/`` runs are not results;
compliance audits (``compliance/`` and ``TEST0x`` folders) are counted as skipped.

- System: ``<division>/<submitter>/systems/<system>.json`` -> the hardware record of
  :mod:`benchdb.schema.system` (accelerator, per node, nodes, host CPU sockets and cores (the
  checker's ``host_processor_core_count`` is per processor), memory, interconnect, availability);
  framework, other software stack and OS -> the run's software. No accelerator: a CPU system.
- Model ``mlperf:<benchmark>`` (the checker's names: ``resnet50`` -> ``resnet``), the scenario
  folder's scenario (Interactive stays Interactive; LoadGen's effective scenario is an option).
- Headline: :func:`benchdb.interop.mlperf.headline`, the checker's choice; LoadGen's other figures,
  ``result_summary.json``'s TTFT/TPOT/latency/output lengths, as statistics.
- Accuracy: ``accuracy/accuracy.txt`` (the checker's patterns for the benchmark's metrics), v6.x
  ``accuracy/accuracy_results.json``, else the table's Accuracy string: statistics
  ``accuracy:<metric>`` (unit ``score``, MLPerf's own scale).
- Power: the mean of the analyser's watts in ``spl.txt`` between LoadGen's power_begin and
  power_end (the checker's method) as ``power_w``/``mean``; the table's Power_Result as ``published``.
- The published table (root ``summary_results.json`` of v5.x, ``summary.json`` of v6.x, each
  submitter's ``summary.csv``): every run is compared with its row (Location = the scenario folder):
  accelerator, accelerators per node, nodes, model, scenario, units, result within 0.01 %, power.
  Each disagreement is a line; the run keeps LoadGen's figure and the table's is recorded beside it
  (statistic ``published``). A row marked inferred marks the run's settings ``inferred`` (its
  validity stays LoadGen's: MLCommons publishes it as a result).
"""

from __future__ import annotations

import csv
import datetime as dt
import hashlib
import json
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchdb.errors import clip
from benchdb.interop import mlperf
from benchdb.interop.writer import Imported, SourceError, cpu_vendor, utc_iso

SUMMARY = "mlperf_log_summary.txt"
ENDPOINTS = "result_summary.json"
#: Systems JSON fields a run cannot be described without.
REQUIRED_SYSTEM_FIELDS = ("accelerator_model_name", "accelerators_per_node", "number_of_nodes",
                          "host_processor_model_name")
ROOT_TABLES = ("summary_results.json", "summary.json")
#: Relative difference within which a published figure reproduces.
TOLERANCE = 1e-4
_COMPLIANCE = re.compile(r"^TEST\d+$")
_NONE = ("", "n/a", "na", "none", "null", "-")
#: The checker's accuracy patterns (ACC_PATTERN) and each benchmark's metrics (accuracy-target).
ACC_PATTERN = {
    "acc": r"^(?:\{\"accuracy|accuracy)[\": ]*=?\s*([\d\.]+).*", "AUC": r"^AUC=([\d\.]+).*",
    "mAP": r".*(?:mAP=|'Total':)\s*([\d.]+)", "bleu": r"^BLEU\:\s*([\d\.]+).*",
    "F1": r"^{[\"\']exact_match[\"\']\:\s*[\d\.]+,\s*[\"\']f1[\"\']\:\s*([\d\.]+)}",
    "ACCURACY": r"Word Error Rate\:.*, accuracy=([0-9\.]+)%", "DICE": r"Accuracy\:\s*mean\s*=\s*([\d\.]+).*",
    "ROUGE1": r".*'rouge1':\s+'?([\d.]+)'?.*", "ROUGE2": r".*'rouge2':\s+'?([\d.]+)'?.*",
    "ROUGEL": r".*'rougeL':\s+'?([\d.]+)'?.*", "ROUGELSUM": r".*'rougeLsum':\s+'?([\d.]+)'?.*",
    "GEN_LEN": r".*'gen_len':\s([\d.]+).*", "TOKENS_PER_SAMPLE": r".*'tokens_per_sample':\s([\d.]+).*",
    "CLIP_SCORE": r".*'CLIP_SCORE':\s+'?([\d.]+).*", "FID_SCORE": r".*'FID_SCORE':\s+'?([\d.]+).*",
    "gsm8k_accuracy": r".*'gsm8k':\s([\d.]+).*", "mbxp_accuracy": r".*'mbxp':\s([\d.]+).*",
    "exact_match": r".*'exact_match':\s([\d.]+).*", "vbench_score": r".*'vbench_score':\s([\d.]+).*",
    "F1_HIERARCHICAL": r'\{.*"f1":\s*([\d\.]+).*\}',
}
_ROUGE = ("ROUGE1", "ROUGE2", "ROUGEL")
ACCURACY_METRICS = {
    "resnet": ("acc",), "retinanet": ("mAP",), "bert-99": ("F1",), "bert-99.9": ("F1",), "rgat": ("acc",),
    "dlrm-v2-99": ("AUC",), "dlrm-v2-99.9": ("AUC",), "3d-unet-99": ("DICE",), "3d-unet-99.9": ("DICE",),
    "gptj-99": (*_ROUGE, "ROUGELSUM", "GEN_LEN"), "gptj-99.9": (*_ROUGE, "ROUGELSUM", "GEN_LEN"),
    "llama2-70b-99": (*_ROUGE, "TOKENS_PER_SAMPLE"), "llama2-70b-99.9": (*_ROUGE, "TOKENS_PER_SAMPLE"),
    "llama3.1-8b": (*_ROUGE, "ROUGELSUM", "GEN_LEN"), "llama3.1-8b-edge": (*_ROUGE, "ROUGELSUM", "GEN_LEN"),
    "stable-diffusion-xl": ("CLIP_SCORE", "FID_SCORE"),
    "mixtral-8x7b": (*_ROUGE, "TOKENS_PER_SAMPLE", "gsm8k_accuracy", "mbxp_accuracy"),
    "llama3.1-405b": ("ROUGEL", "exact_match", "TOKENS_PER_SAMPLE"), "pointpainting": ("mAP",),
    "deepseek-r1": ("exact_match", "TOKENS_PER_SAMPLE"), "whisper": ("ACCURACY",), "gpt-oss-120b": ("exact_match",),
    "qwen3-vl-235b-a22b": ("F1_HIERARCHICAL",), "wan-2.2-t2v-a14b": ("vbench_score",),
}
_PRECISION = re.compile(r"\b(nv)?(mx)?(fp\d+|bf16|u?int\d+)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Located:
    """A performance run's place in a results repository."""

    root: Path
    division: str
    submitter: str
    system: str
    benchmark: str
    scenario_folder: str
    path: Path                      # its mlperf_log_summary.txt or result_summary.json

    @property
    def location(self) -> str:
        """The scenario folder relative to the root: the table's Location."""
        return "/".join((self.division, self.submitter, "results", self.system, self.benchmark, self.scenario_folder))

    @property
    def systems_json(self) -> Path:
        return self.root / self.division / self.submitter / "systems" / f"{self.system}.json"


def locate(path: Path) -> Located | None:
    """Where a run's file sits in a results repository, or None outside that layout."""
    p = Path(os.path.abspath(path))
    parts = p.parts
    if p.name == SUMMARY and len(parts) >= 10 and parts[-2] == "run_1" and parts[-3] == "performance":
        rest = parts[:-3]
    elif p.name == ENDPOINTS and len(parts) >= 9 and parts[-2] == "performance":
        rest = parts[:-2]
    elif p.name == ENDPOINTS and len(parts) >= 10 and parts[-2] == "run_1" and parts[-3] == "performance":
        rest = parts[:-3]
    else:
        return None
    if len(rest) < 7 or rest[-4] != "results":
        return None
    return Located(root=Path(*rest[:-6]), division=rest[-6], submitter=rest[-5], system=rest[-3],
                   benchmark=rest[-2], scenario_folder=rest[-1], path=p)


def _count(value: Any, name: str) -> int | None:
    """A whole number from a systems JSON or table (``"8"``, 8, ``""`` -> None)."""
    if value is None or (isinstance(value, str) and value.strip().lower() in _NONE):
        return None
    if isinstance(value, bool):
        raise SourceError(f"{name} is {value!r}, not a count")
    try:
        number = float(str(value).strip())
    except ValueError:
        raise SourceError(f"{name} is {clip(repr(value), 40)}, not a count") from None
    if not number.is_integer() or number < 0:
        raise SourceError(f"{name} is {value!r}, not a count")
    return int(number)


def _count_or_none(value: Any) -> int | None:
    try:
        return _count(value, "")
    except SourceError:
        return None


def _text(value: Any) -> str | None:
    text = " ".join(str(value).split()) if value is not None else ""
    return None if text.lower() in _NONE else text


def precision_of(weights: Any) -> str:
    """A benchdb precision from the checker's ``weight_data_types`` (``fp8``; several as ``fp8+int8``)."""
    found = list(dict.fromkeys(m.group(0).lower() for m in _PRECISION.finditer(str(weights or ""))))
    return "+".join(found) if found else "unknown"


@dataclass
class System:
    hardware: dict[str, Any]
    software: dict[str, Any]
    accelerator: str | None        # as the systems JSON names it ('' / N/A: none)
    per_node: int
    nodes: int
    weight_data_types: str | None


def read_system(path: Path) -> System:
    """The hardware record a systems JSON describes (a SourceError names what is missing)."""
    from benchdb.interop import load_json
    from benchdb.schema import system

    if not path.is_file():
        raise SourceError(f"no systems JSON {path.name} (every system of a submission has one)")
    doc = load_json(path)
    if not isinstance(doc, dict):
        raise SourceError("not a systems JSON (expected an object of system fields)")
    missing = [k for k in REQUIRED_SYSTEM_FIELDS if k not in doc]
    if missing:
        raise SourceError(f"missing {', '.join(missing)}; a systems JSON names {', '.join(REQUIRED_SYSTEM_FIELDS)}")
    where = path.name
    accelerator = _text(doc.get("accelerator_model_name"))
    per_node = _count(doc.get("accelerators_per_node"), "accelerators_per_node") or 0
    if accelerator is None:
        per_node = 0
    nodes = _count(doc.get("number_of_nodes"), "number_of_nodes") or 1
    cpu = _text(doc.get("host_processor_model_name"))
    # a heterogeneous system's CPU counts are text ("64(AMD EPYC 9534) and 96(...)"): not counted
    sockets = _count_or_none(doc.get("host_processors_per_node"))
    cores = _count_or_none(doc.get("host_processor_core_count"))
    availability = (_text(doc.get("status")) or "").lower()
    record: dict[str, Any] = {
        "device_name": accelerator, "accelerators_per_node": per_node, "nodes": nodes, "cpu_model": cpu,
        "cpu_sockets": sockets or None, "cores_physical": cores * (sockets or 1) if cores else None,
        "memory_bytes": system.parse_size(_text(doc.get("accelerator_memory_capacity"))) if accelerator else None,
        "host_memory_bytes": system.parse_size(_text(doc.get("host_memory_capacity"))),
        "interconnect": _text(doc.get("accelerator_interconnect")) if accelerator else None,
        "system_name": _text(doc.get("system_name")),
        "availability": availability if availability in system.AVAILABILITY else None,
        "os": _text(doc.get("operating_system")),
    }
    if accelerator is None:
        record["vendor"] = cpu_vendor(cpu)
    try:
        hardware = system.normalize({k: v for k, v in record.items() if v is not None}, where)
    except system.SystemError as exc:
        raise SourceError(str(exc).removeprefix(f"{where}: ")) from None
    software = {k: _text(doc.get(k)) for k in ("framework", "other_software_stack", "operating_system")}
    return System(hardware=hardware, software={k: v for k, v in software.items() if v},
                  accelerator=accelerator, per_node=per_node, nodes=nodes,
                  weight_data_types=_text(doc.get("weight_data_types")))


@dataclass
class Row:
    """One row of a published table, in the v5.x names."""

    table: Path
    location: str
    accelerator: str | None
    per_node: int | None
    nodes: int | None
    model: str
    scenario: str
    result: float | None
    units: str | None
    inferred: bool
    power: float | None
    power_units: str | None
    accuracy: str | None
    weight_data_types: str | None
    version: str | None


def _first(row: dict[str, Any], *names: str) -> Any:
    for name in names:
        if name in row:
            return row[name]
    return None


def _float(value: Any) -> float | None:
    if value is None or value == "" or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


@dataclass
class Table:
    path: Path
    rows: dict[str, Row] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)


def _location(value: Any) -> str:
    text = str(value or "").replace("\\", "/").strip().removeprefix("./").strip("/")
    for tail in ("/performance/run_1", "/performance"):
        text = text.removesuffix(tail)
    return text


def read_table(path: Path) -> Table:
    """A published table: a JSON list (summary_results.json), an object of rows (summary.json) or
    the checker's CSV (summary.csv). An empty or unreadable file is a SourceError; a bad row is one
    of the table's errors (the other rows stand)."""
    from benchdb.interop import load_json

    table = Table(path)
    if path.suffix == ".csv":
        text = path.read_text(encoding="utf-8", errors="replace")
        if not text.strip():
            raise SourceError("empty file (expected the submission checker's CSV table with a header row)")
        raw: list[Any] = list(csv.DictReader(text.splitlines()))
    else:
        doc = load_json(path)
        raw = list(doc.values()) if isinstance(doc, dict) else doc if isinstance(doc, list) else []
        if not raw:
            raise SourceError("no rows (expected a list or an object of result rows)")
    for n, r in enumerate(raw, 1):
        if not isinstance(r, dict) or not r.get("Location"):
            table.errors.append(f"row {n} has no Location")
            continue
        loc = _location(r["Location"])
        units = _text(_first(r, "Performance_Units", "Units"))
        result = _float(_first(r, "Performance_Result", "Result"))
        if units is not None and units not in mlperf.UNITS:
            table.errors.append(f"{loc}: unknown units {units!r} (known: {', '.join(mlperf.UNITS)}); "
                                "its figure is not compared")
            units, result = None, None
        elif result is None or result <= 0:
            table.errors.append(f"{loc}: result {clip(repr(_first(r, 'Performance_Result', 'Result')), 40)} is "
                                "not a positive number; it is not compared")
            result = None
        try:
            per_node = _count(_first(r, "a#", "accelerators_per_node"), "a#")
            nodes = _count(_first(r, "Nodes", "number_of_nodes"), "Nodes")
        except SourceError as exc:
            table.errors.append(f"{loc}: {exc}")
            per_node = nodes = None
        table.rows[loc] = Row(
            table=path, location=loc, accelerator=_text(_first(r, "Accelerator", "accelerator_model_name")),
            per_node=per_node, nodes=nodes, model=str(r.get("Model") or ""), scenario=str(r.get("Scenario") or ""),
            result=result, units=units, inferred=str(r.get("inferred", "0")).strip() in ("1", "True", "true"),
            power=_float(r.get("Power_Result")), power_units=_text(r.get("Power_Units")),
            accuracy=_text(r.get("Accuracy")), weight_data_types=_text(r.get("weight_data_types")),
            version=_text(r.get("version")))
    return table


def _parse_accuracy_txt(text: str, model: str) -> list[tuple[str, float]]:
    names = ACCURACY_METRICS.get(model, tuple(ACC_PATTERN))
    found: dict[str, float] = {}
    lines = text.splitlines()
    for name in names:
        pattern = re.compile(ACC_PATTERN[name])
        for line in lines:
            m = pattern.match(line)
            if m and _float(m.group(1)) is not None:
                found[name] = float(m.group(1))
                break
    return list(found.items())


def _parse_accuracy_string(text: str, model: str) -> list[tuple[str, float]]:
    """The table's Accuracy (``ROUGE1: 44.45  ROUGE2: 22.04`` or a bare score)."""
    pairs = re.findall(r"([A-Za-z_][\w\-]*)\s*:\s*(-?\d+(?:\.\d+)?(?:e-?\d+)?)", text)
    if pairs:
        return [(k, float(v)) for k, v in pairs]
    number = _float(text.strip())
    if number is None:
        return []
    return [((ACCURACY_METRICS.get(model) or ("score",))[0], number)]


def _power(run_dir: Path, log: dict[str, Any]) -> float | None:
    """Mean watts of the analyser's samples between LoadGen's power_begin and power_end (spl.txt)."""
    spl = run_dir / "spl.txt"
    if not spl.is_file() or not log.get("power_begin") or not log.get("power_end"):
        return None
    layout = "%m-%d-%Y %H:%M:%S.%f"
    try:
        begin = dt.datetime.strptime(str(log["power_begin"]), layout)
        end = dt.datetime.strptime(str(log["power_end"]), layout)
    except ValueError:
        raise SourceError(f"power_begin/power_end {log['power_begin']!r} are not LoadGen times") from None
    watts = []
    with spl.open(encoding="utf-8", errors="replace") as fh:
        for line in fh:
            if not line.startswith("Time,"):
                continue
            cells = line.split(",", 5)
            try:
                when = dt.datetime.strptime(cells[1], layout)
                value = float(cells[3])
            except (IndexError, ValueError):
                continue
            if begin < when < end and value > 0:
                watts.append(value)
    if not watts:
        raise SourceError(f"{spl.name} has no power samples between power_begin and power_end")
    return sum(watts) / len(watts)


_SUMMARY_BLOCKS = {"ttft": ("ttft_s", "s", 1e-9), "tpot": ("tpot_s", "s", 1e-9), "latency": ("latency_s", "s", 1e-9),
                   "output_sequence_lengths": ("output_tokens", "tokens", 1.0)}


def read_endpoints(path: Path) -> tuple[dict[str, Any], list[tuple[str, str, str, float]]]:
    """A v6.x ``result_summary.json``: the document and its figures as statistics."""
    from benchdb.interop import load_json

    doc = load_json(path)
    if not isinstance(doc, dict) or not any(k in doc for k in ("qps", "tps", "latency")):
        raise SourceError("not an MLPerf result_summary.json (no qps, tps or latency)")
    stats: list[tuple[str, str, str, float]] = []
    for block, (metric, unit, factor) in _SUMMARY_BLOCKS.items():
        figures = doc.get(block)
        if not isinstance(figures, dict):
            continue
        for name, stat in (("min", "min"), ("max", "max"), ("median", "median"), ("avg", "mean"), ("std_dev", "std")):
            v = _float(figures.get(name))
            if v is not None:
                stats.append((metric, unit, stat, v * factor))
        for group, prefix in (("percentiles", "p"), ("early_stopping_percentiles", "early_stopping_p")):
            for pct, value in (figures.get(group) or {}).items():
                v, p = _float(value), _float(pct)
                if v is not None and p is not None:
                    stats.append((metric, unit, f"{prefix}{p:g}", v * factor))
    for name, metric, unit in (("n_samples_completed", "requests", "count"),
                               ("n_samples_failed", "failed_requests", "count")):
        v = _float(doc.get(name))
        if v is not None:
            stats.append((metric, unit, "value", v))
    return doc, stats


@dataclass
class Checked:
    """What importing one run found against the published tables."""

    rows: list[Row] = field(default_factory=list)
    disagreements: list[str] = field(default_factory=list)


class Repository:
    """One results repository: its systems and tables, read once."""

    def __init__(self, root: Path):
        self.root = root
        self._systems: dict[Path, System | SourceError] = {}
        self.tables: dict[Path, Table | SourceError | None] = {}

    def table(self, path: Path) -> Table | SourceError | None:
        if path not in self.tables:
            try:
                self.tables[path] = read_table(path) if path.is_file() else None
            except SourceError as exc:
                self.tables[path] = exc
            except OSError as exc:
                self.tables[path] = SourceError(f"cannot read it: {exc.strerror or exc}")
        return self.tables[path]

    def tables_for(self, loc: Located) -> list[Table]:
        paths = [self.root / name for name in ROOT_TABLES]
        paths.append(self.root / loc.division / loc.submitter / "summary.csv")
        return [t for t in (self.table(p) for p in paths) if isinstance(t, Table)]

    def system(self, loc: Located) -> System:
        path = loc.systems_json
        if path not in self._systems:
            try:
                self._systems[path] = read_system(path)
            except SourceError as exc:
                self._systems[path] = exc
        got = self._systems[path]
        if isinstance(got, SourceError):
            raise SystemsJsonError(path, str(got))
        return got

    def version(self, rows: list[Row]) -> str | None:
        for row in rows:
            if row.version:
                return row.version
        m = re.search(r"inference_results_(v\d+\.\d+)", str(self.root))
        return m.group(1) if m else None

    def run(self, loc: Located) -> Imported:
        return self.check(loc)[0]

    def check(self, loc: Located) -> tuple[Imported, Checked]:
        """The run at ``loc`` as a benchdb result, and how it compares with the published tables."""
        sysinfo = self.system(loc)
        checked = Checked(rows=[t.rows[loc.location] for t in self.tables_for(loc) if loc.location in t.rows])
        version = self.version(checked.rows)
        model = mlperf.canonical_model(loc.benchmark)
        scenario = mlperf.canonical_scenario(loc.scenario_folder)
        run_dir = loc.path.parent
        settings: dict[str, Any] = {"division": loc.division, "submitter": loc.submitter,
                                    "mlperf_round": version, "location": loc.location}
        if loc.path.name == SUMMARY:
            lg = mlperf.read_run(loc.path)
            # a repository named by neither a table nor its folder: the round of the LoadGen that ran
            version = version or (f"v{'.'.join(lg.version.split('.')[:2])}" if lg.version else None)
            settings["mlperf_round"] = version
            head = mlperf.headline(lg.log, model, scenario, version)
            stats = mlperf.with_headline(lg.statistics, head)
            effective, mode, verdict, reasons = lg.effective_scenario, lg.mode, lg.verdict, lg.reasons
            settings.update(lg.settings)
            started, tool_version = utc_iso(lg.log.get("test_datetime")), lg.version
            power = _power(run_dir, lg.log)
        else:
            doc, stats = read_endpoints(loc.path)
            pattern = ((doc.get("run_config") or {}).get("load_pattern") or {}) if isinstance(doc.get("run_config"),
                                                                                           dict) else {}
            effective = {"max_throughput": "Offline", "poisson": "Server"}.get(str(pattern.get("type")), scenario)
            head = self._endpoint_headline(doc, model, scenario, stats)
            stats = [*stats, (head.metric, head.unit, "value", head.value)]
            complete = bool(doc.get("complete")) and not _float(doc.get("n_samples_failed"))
            verdict = "VALID" if complete else "INVALID"
            reasons = [] if complete else [f"mlperf: state {doc.get('state')!r}, "
                                           f"{doc.get('n_samples_failed')} sample(s) failed"]
            mode, started, tool_version, power = "PerformanceOnly", None, _text(doc.get("version")), None
            started_ns = _float(doc.get("test_started_at"))
            if started_ns:
                started = utc_iso(started_ns / 1e9 if started_ns > 1e14 else started_ns)
            settings.update({"load_pattern": pattern or None, "duration_ns": doc.get("duration_ns")})
        if power is not None:
            stats.append(("power_w", "W", "mean", power))
        stats += self._accuracy(loc, model, checked.rows)
        if head.inferred_from:
            settings.update(inferred=True, inferred_from=head.inferred_from)
        for row in checked.rows:
            checked.disagreements += self._compare(loc, row, sysinfo, model, scenario, head, power)
            if row.result is not None and row.units is not None:
                stats.append((head.metric, head.unit, "published", row.result * mlperf.UNITS[row.units]))
            if row.power is not None and (row.power_units or "").lower() in ("watts", "w"):
                stats.append(("power_w", "W", "published", row.power))
            elif row.power is not None and (row.power_units or "").lower() == "millijoules":
                stats.append(("energy_per_query_j", "J", "published", row.power / 1e3))
            if row.inferred:
                settings["inferred"] = True
                settings.setdefault("inferred_from", "the published table")
        weights = next((r.weight_data_types for r in checked.rows if r.weight_data_types), None) \
            or sysinfo.weight_data_types
        settings["weight_data_types"] = weights
        digest = hashlib.sha256(json.dumps([loc.location, sysinfo.hardware, sysinfo.software, stats,
                                            sorted(settings.items(), key=str)], sort_keys=True,
                                           default=str).encode()).hexdigest()
        hw = sysinfo.hardware
        kind = str(hw.get("kind"))
        item = Imported(
            model_id=f"mlperf:{model}", backend=mlperf.FORMAT_ID, device=f"{kind}:0" if kind in ("cuda", "rocm", "xpu")
            else kind, mode=scenario, precision=precision_of(weights), batch_size=1,
            input_shape=f"scenario={scenario},mode={mode or 'unknown'}", primary_metric=head.metric,
            options={"scenario": scenario, "effective_scenario": effective, "test_mode": mode,
                     "division": loc.division, "submitter": loc.submitter, "system": loc.system,
                     "accelerators": sysinfo.per_node * sysinfo.nodes},
            hardware=dict(hw), model={"family": "mlperf", "task": loc.benchmark},
            started_at=started, run_key=f"{loc.location}|{digest}",
            validity="valid" if verdict == "VALID" else "invalid", validity_reasons=reasons,
            timing_method="loadgen", tool="mlcommons-loadgen", tool_version=tool_version,
            summary_only=True, percentile_method="nearest_rank" if loc.path.name == SUMMARY else None,
            statistics=stats, settings={k: v for k, v in settings.items() if v is not None},
            software={**sysinfo.software, **({"mlcommons-loadgen": tool_version} if tool_version else {})},
        )
        return item, checked

    @staticmethod
    def _endpoint_headline(doc: dict[str, Any], model: str, scenario: str,
                           stats: list[tuple[str, str, str, float]]) -> mlperf.Headline:
        tokens = (mlperf.SPECIAL_UNIT_DICT.get(model, {}).get(scenario) == "Tokens/s")
        if scenario in ("SingleStream", "MultiStream"):
            p = "early_stopping_p90" if scenario == "SingleStream" else "early_stopping_p99"
            value = next((s[3] for s in stats if s[0] == "latency_s" and s[2] == p), None)
            key, kind = f"latency.{p}", "latency"
        else:
            key, kind = ("tps", "tokens") if tokens else ("qps", "samples")
            value = _float(doc.get(key))
        if value is None or value <= 0:
            raise SourceError(f"the headline {key} = {value!r} is not a positive number")
        return mlperf.make_headline(value, kind, model, scenario, key)

    @staticmethod
    def _accuracy(loc: Located, model: str, rows: list[Row]) -> list[tuple[str, str, str, float]]:
        folder = loc.root / loc.location / "accuracy"
        found: list[tuple[str, float]] = []
        txt, results = folder / "accuracy.txt", folder / "accuracy_results.json"
        if txt.is_file():
            found = _parse_accuracy_txt(txt.read_text(encoding="utf-8", errors="replace"), model)
        elif results.is_file():
            try:
                doc = json.loads(results.read_text(encoding="utf-8"))
            except ValueError:
                raise SourceError(f"{results}: not valid JSON") from None
            if _float(doc.get("average_accuracy")) is not None:
                found.append(("average", float(doc["average_accuracy"])))
            for score in doc.get("accuracy_scores") or []:
                if isinstance(score, dict) and _float(score.get("score")) is not None:
                    found.append((str(score.get("dataset_name") or "score"), float(score["score"])))
                    subsets = ((score.get("breakdown") or {}).get("subset_scores") or {})
                    found += [(f"{score.get('dataset_name')}/{k}", float(v)) for k, v in subsets.items()
                              if _float(v) is not None]
        if not found:
            for row in rows:
                if row.accuracy:
                    found = _parse_accuracy_string(row.accuracy, model)
                    break
        return [(f"accuracy:{name.lower()}", "score", "value", value) for name, value in found]

    @staticmethod
    def _compare(loc: Located, row: Row, sysinfo: System, model: str, scenario: str, head: mlperf.Headline,
                 power: float | None) -> list[str]:
        out = []

        def differ(what: str, table: Any, ours: Any) -> None:
            out.append(f"{row.table.name}: {loc.location}: {what}: table {table!r}, logs {ours!r}")

        if (row.accelerator or "") != (sysinfo.accelerator or ""):
            differ("accelerator", row.accelerator or "", sysinfo.accelerator or "")
        if (row.per_node or 0) != sysinfo.per_node:
            differ("accelerators per node (a#)", row.per_node, sysinfo.per_node)
        if row.nodes is not None and row.nodes != sysinfo.nodes:
            differ("nodes", row.nodes, sysinfo.nodes)
        if mlperf.canonical_model(row.model) != model:
            differ("model", row.model, model)
        if mlperf.canonical_scenario(row.scenario) != scenario:
            differ("scenario", row.scenario, scenario)
        if row.units is not None and row.units != head.table_unit:
            differ("units", row.units, head.table_unit)
        elif row.result is not None and abs(head.table_value - row.result) > TOLERANCE * abs(row.result):
            # significant digits, not decimals: a bogus 6.9e-09 in a log must not print as 0.0
            differ(f"result ({row.units})", row.result, float(f"{head.table_value:.7g}"))
        if row.power is not None and (row.power_units or "").lower() in ("watts", "w"):
            if power is None:
                differ("power (W)", row.power, None)
            elif abs(power - row.power) > TOLERANCE * abs(row.power):
                differ("power (W)", row.power, float(f"{power:.7g}"))
        return out


class SystemsJsonError(SourceError):
    """A run's systems JSON cannot be read: reported once for the file, not for each of its runs."""

    def __init__(self, path: Path, problem: str):
        super().__init__(problem)
        self.path = path


def discover(paths: list[str]) -> tuple[list[Path], int]:
    """Performance runs' files under ``paths`` (summary logs, v6.x result_summary.json) and how many
    compliance audit runs were passed over. Folders under ``accuracy`` or ``ranging`` are not runs."""
    found: list[Path] = []
    compliance = 0
    for given in map(Path, paths):
        if given.is_file():
            found.append(given)
            continue
        if not given.is_dir():
            raise SourceError(f"{given}: no such file or folder")
        for folder, dirs, files in os.walk(given):
            dirs.sort()
            here = Path(folder)
            names = set(files)
            if SUMMARY not in names and ENDPOINTS not in names:
                continue
            parts = here.relative_to(given).parts if here != given else ()
            if "compliance" in parts or any(_COMPLIANCE.match(p) for p in parts):
                compliance += SUMMARY in names
                continue
            if {"accuracy", "ranging", "code", "measurements"} & {*parts, here.name}:
                continue
            if SUMMARY in names:
                found.append(here / SUMMARY)
            elif here.name == "performance" or (here.name == "run_1" and here.parent.name == "performance"):
                found.append(here / ENDPOINTS)
    return list(dict.fromkeys(found)), compliance


@dataclass
class Report:
    """What `benchdb import mlperf` tells beyond the files it wrote."""

    runs: int = 0
    systems: set[str] = field(default_factory=set)
    compliance: int = 0
    unchanged: int = 0
    checked: int = 0
    reproduced: int = 0
    disagreements: list[str] = field(default_factory=list)
    rows_without_log: list[str] = field(default_factory=list)
    tables: list[Path] = field(default_factory=list)


def import_paths(paths: list[str], out: Path, declared: Any) -> Any:
    """Import every run under ``paths`` into contract files under ``out``: the ImportSummary, with the
    table's disagreements as notes and the counts in its ``detail``."""
    from benchdb.interop import ImportSummary

    summary = ImportSummary()
    report = Report()
    sources, report.compliance = discover(paths)
    if not sources:
        raise SourceError(f"no MLPerf runs ({SUMMARY} under performance/run_1, or {ENDPOINTS}) under "
                          f"{', '.join(paths)}")
    repos: dict[Path, Repository] = {}
    bad_systems: dict[Path, int] = {}
    seen: dict[Path, set[str]] = {}
    for src in sources:
        try:
            _import_one(src, out, declared, repos, seen, summary, report)
        except SystemsJsonError as exc:
            if exc.path not in bad_systems:
                summary.failed.append((exc.path, str(exc)))
            bad_systems[exc.path] = bad_systems.get(exc.path, 0) + 1
        except SourceError as exc:
            summary.failed.append((src, str(exc)))
        except OSError as exc:
            summary.failed.append((src, f"cannot read it: {exc.strerror or exc}"))
        except (KeyError, TypeError, ValueError, AttributeError, IndexError, ArithmeticError) as exc:
            summary.failed.append((src, f"unexpected content for mlperf ({type(exc).__name__}: {clip(str(exc))})"))
    scope = [Path(os.path.abspath(p)) for p in paths if Path(p).is_dir()]
    for root, repo in repos.items():
        _check_tables(root, repo, seen[root], scope, summary, report)
    for path, n in bad_systems.items():
        if n > 1:
            summary.notes.append(f"mlperf: {n} run(s) of {path.name} not imported (its systems JSON is unreadable)")
    summary.notes += [f"mlperf: table disagrees: {line}" for line in report.disagreements]
    summary.notes += [f"mlperf: table row without a performance log: {line}" for line in report.rows_without_log]
    summary.detail = _detail(report)
    return summary


def _import_one(src: Path, out: Path, declared: Any, repos: dict[Path, Repository], seen: dict[Path, set[str]],
                summary: Any, report: Report) -> None:
    """One run's files into contract files (nothing written when it fails)."""
    from benchdb.interop import check_size, writer

    loc = locate(src)
    check_size(src)
    if loc is None:
        if src.name != SUMMARY:
            raise SourceError(f"a {ENDPOINTS} outside a results repository's "
                              "<division>/<submitter>/results/<system>/<benchmark>/<scenario>/performance/")
        items, checked = mlperf.parse_log(src), Checked()
    else:
        repo = repos.setdefault(loc.root, Repository(loc.root))
        seen.setdefault(loc.root, set()).add(loc.location)
        item, checked = repo.check(loc)
        items = [item]
    for item in items:
        declared.apply(item)
    planned = writer.plan_files(items, mlperf.FORMAT_ID, src, out)
    fresh = [p for p in planned if not _unchanged(p)]
    report.unchanged += len(planned) - len(fresh)
    summary.written += writer.write_all(fresh)
    summary.imported.append((src, len(planned)))
    report.runs += 1
    report.systems.update(json.dumps(item.hardware, sort_keys=True) for item in items)
    report.checked += bool(checked.rows)
    report.reproduced += bool(checked.rows) and not checked.disagreements
    report.disagreements += checked.disagreements


def _check_tables(root: Path, repo: Repository, seen: set[str], scope: list[Path], summary: Any,
                  report: Report) -> None:
    """A repository's tables: unreadable ones and bad rows as failures, rows in scope with no run."""
    for path, table in repo.tables.items():
        if isinstance(table, SourceError):
            summary.failed.append((path, str(table)))
            continue
        if table is None:
            continue
        report.tables.append(path)
        summary.failed += [(path, problem) for problem in table.errors]
        for location in table.rows:
            where = root / location
            if location not in seen and any(s == where or s in where.parents for s in scope):
                report.rows_without_log.append(f"{path.name}: {location}")


def _unchanged(planned: tuple[Path, dict, list]) -> bool:
    """True when the file exists with this very result (a summary-only result is its metadata)."""
    import pyarrow.parquet as pq

    from benchdb.schema import contract

    path, meta, rows = planned
    if rows or not path.is_file():
        return False
    try:
        stored = (pq.read_schema(path).metadata or {}).get(contract.METADATA_KEY)
    except (OSError, ValueError):
        return False
    return stored == contract.encode_metadata(meta)


def _detail(report: Report) -> str:
    parts = [f"{report.runs} run(s) on {len(report.systems)} system(s)"]
    if report.unchanged:
        parts.append(f"{report.unchanged} unchanged (already written)")
    parts.append(f"skipped {report.compliance} compliance run(s)")
    names = ", ".join(sorted({p.name for p in report.tables}))
    if report.tables and not report.checked:
        parts.append(f"no run has a row in {names}")
    elif report.tables:
        parts.append(f"{report.reproduced} of {report.checked} checked run(s) reproduce {names}, "
                     f"{len(report.disagreements)} disagreement(s), "
                     f"{len(report.rows_without_log)} table row(s) without a performance log")
    else:
        parts.append("no published table to check against")
    return "; ".join(parts)


def parse(path: Path) -> list[Imported]:
    """One summary log: inside a results repository it is that repository's run (its system, table
    row, accuracy and power); elsewhere a lone log with hardware unknown."""
    located = locate(path)
    if located is not None:
        return [Repository(located.root).run(located)]
    return mlperf.parse_log(path)

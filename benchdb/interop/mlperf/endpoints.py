"""MLPerf Endpoints (v1.0, rolling submissions): a system published as a Pareto curve of load points.

A submission is ``<org>/<submission>/results/<system>/<model>/r<N>/``, one folder per point (N its
concurrency): ``point.yaml`` (concurrency, region, ``offline``, ``max_supported_concurrency``,
steady state), ``result_summary.json`` (the endpoints client's figures), ``system_desc.json`` and
``accuracy_results.json``; ``results/<system>/system_power.json`` holds the system's provisioned power.
Each point becomes one summary-only serving result; the points of one system and model are one curve
(``settings.curve``), drawn as the rules draw it: a step function, no interpolation.

What the rules define, benchdb computes the same way (and says where its figure and the file's differ):

- ``system_tps`` = ``output_sequence_lengths.total`` / (``duration_ns`` / 1e9); ``tps_per_user`` =
  1000 / ``tpot_p90_ms``; ``ttft_p90_ms`` from ``ttft.percentiles`` (keys ``"90"`` or ``"90.0"``, in ns).
  A stored ``system_tps`` or ``tps_per_user`` that differs by more than 1 % is a disagreement.
- Regions (rules §5.4): ultra low 1-32; with C_min the curve's lowest concurrency and C_max its
  ``max_supported_concurrency``, I = log2(C_max - C_min) / 3, low ends at round(C_min + 2^I), medium
  at round(C_min + 2^2I), high at C_max, and a margin up to ceil(1.10 C_max) that is not high.
  Python's round (half to even) and float ceil, as the checker computes them. A point.yaml region
  that differs is a disagreement.
- Accuracy (the compliance checker's gate): a point's ``accuracy_results.json`` is gated by
  ``score >= factor x golden accuracy`` for the models the checker gates (``ACCURACY_GATES``); a point
  that fails is invalid, with the figures in its reason; every score is kept as ``accuracy:<dataset>``.
- Provisioned power (rules §4.5.2): (CPU + accelerators + scale-up switches) x (1 + overhead), the
  overhead 0.30 for liquid and 0.50 for air cooling; a declared ``provisioned_power_w`` /
  ``provisioned_power_kw`` wins; ``system_tps_per_kw`` = system_tps / provisioned kW. Power filled in
  by MLCommons (``mlc_estimated_power``) or a component without its count and TDP is marked
  ``power_estimated`` ("MLC Estimated Power").
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchdb.interop import formats
from benchdb.interop.mlperf.endpoints_rules import Power, accuracy_gate, positive, provisioned_power, region_of, regions
from benchdb.interop.writer import Imported, SourceError, utc_iso

FORMAT_ID = formats.importer("mlperf-endpoints").source
POINT = "point.yaml"
SUMMARY = "result_summary.json"
ACCURACY = "accuracy_results.json"
#: Stored figures and benchdb's may differ by this much (the checker's own tolerance).
TOLERANCE = 0.01
_POINT_DIR = re.compile(r"^r(\d+)$")


def _percentile(block: Any, p: str) -> float | None:
    """A percentile (ns) of a result_summary.json block, keyed ``"90"`` or ``"90.0"``."""
    pct = (block or {}).get("percentiles") if isinstance(block, dict) else None
    if not isinstance(pct, dict):
        return None
    for key in (p, f"{p}.0"):
        if key in pct:
            return positive(pct[key])
    return None


@dataclass
class _Point:
    folder: Path
    concurrency: int
    config: dict[str, Any]
    summary: dict[str, Any] | None
    desc: dict[str, Any]
    accuracy: dict[str, Any] | None
    problems: list[str] = field(default_factory=list)


def discover(paths: list[str]) -> list[Path]:
    """The point folders (``r<N>`` holding a point.yaml) under ``paths``."""
    found = []
    for given in map(Path, paths):
        if given.is_file() and given.name == POINT:
            if not _POINT_DIR.match(given.parent.name):
                raise SourceError(
                    f"{given}: a point's folder is results/<system>/<model>/r<concurrency>, not {given.parent.name}"
                )
            found.append(given.parent)
            continue
        if not given.is_dir():
            raise SourceError(f"{given}: no such file or folder")
        for folder, dirs, files in os.walk(given):
            dirs.sort()
            if POINT in files and _POINT_DIR.match(Path(folder).name):
                found.append(Path(folder))
    return list(dict.fromkeys(found))


def _read(path: Path, root: Path) -> Any:
    from benchdb.schema import documents

    try:
        return documents.read_document(path, within=root)
    except documents.DocumentError as exc:
        raise SourceError(f"{path.name}: {exc.problem}") from None


def _load_point(folder: Path, root: Path) -> _Point:
    config = _read(folder / POINT, root)
    if not isinstance(config, dict):
        raise SourceError(f"{POINT} is not a mapping of settings")
    try:
        concurrency = int(config["concurrency"])
    except (KeyError, TypeError, ValueError):
        raise SourceError(f"{POINT} names no whole concurrency") from None
    problems = []
    named = int(_POINT_DIR.match(folder.name).group(1))  # type: ignore[union-attr]
    if named != concurrency:
        problems.append(f"folder {folder.name} but point.yaml concurrency {concurrency}")
    summary = _read(folder / SUMMARY, root) if (folder / SUMMARY).is_file() else None
    desc = _read(folder / "system_desc.json", root) if (folder / "system_desc.json").is_file() else {}
    # the point's folder, or the endpoints client's report layout (accuracy/accuracy_results.json)
    found = next((f for f in (folder / ACCURACY, folder / "accuracy" / ACCURACY) if f.is_file()), None)
    accuracy = _read(found, root) if found else None
    return _Point(folder, concurrency, config, summary, desc if isinstance(desc, dict) else {}, accuracy, problems)


def _figures(point: _Point) -> tuple[list[tuple[str, str, str, float]], float | None, list[str]]:
    """(statistics, system_tps, disagreements) of one point's result_summary.json."""
    doc = point.summary
    if not isinstance(doc, dict):
        raise SourceError(f"no {SUMMARY} beside {POINT} (the point's figures)")
    problems = []
    duration = positive(doc.get("duration_ns"))
    total = positive((doc.get("output_sequence_lengths") or {}).get("total"))
    if duration is None or total is None:
        raise SourceError(f"{SUMMARY} has no duration_ns and output_sequence_lengths.total (system_tps)")
    system_tps = total / (duration / 1e9)
    stats = [("output_throughput", "tokens/s", "value", system_tps)]
    tpot90 = _percentile(doc.get("tpot"), "90")
    if tpot90 is None:
        raise SourceError(f"{SUMMARY} has no tpot p90 (tps_per_user = 1000 / tpot_p90_ms)")
    tps_per_user = 1000 / (tpot90 / 1e6)
    stats.append(("tps_per_user", "tokens/s", "value", tps_per_user))
    for metric, block in (("ttft_s", doc.get("ttft")), ("tpot_s", doc.get("tpot")), ("e2e_s", doc.get("latency"))):
        for p, stat in (("50", "median"), ("90", "p90"), ("95", "p95"), ("99", "p99")):
            v = _percentile(block, p)
            if v is not None:
                stats.append((metric, "s", stat, v / 1e9))
    for name, ours in (("system_tps", system_tps), ("tps_per_user", tps_per_user)):
        stored = positive(doc.get(name))
        if stored is not None and abs(stored - ours) > TOLERANCE * ours:
            problems.append(f"{SUMMARY}: {name}: file {stored:g}, rules' formula {ours:.6g}")
    return stats, system_tps, problems


def _groups(desc: dict[str, Any], power_doc: dict[str, Any] | None) -> list[tuple[Any, Any, Any]]:
    """(accelerator name, accelerators per node, nodes) per group of nodes: system_desc.json's node
    types, else system_power.json's node sets."""
    out = []
    for node in desc.get("node_types") or []:
        if isinstance(node, dict):
            info = node.get("accelerator_info")
            acc = info[0] if isinstance(info, list) and info and isinstance(info[0], dict) else node
            out.append(
                (acc.get("accelerator_model_name"), acc.get("accelerators_per_node"), node.get("number_of_nodes"))
            )
    if not any(g[0] and g[1] for g in out) and power_doc and isinstance(power_doc.get("node_sets"), list):
        out = []
        for s in power_doc["node_sets"]:
            acc = ((s.get("components") or {}).get("accelerator") or {}) if isinstance(s, dict) else {}
            out.append(
                (
                    acc.get("model"),
                    acc.get("count_per_node"),
                    s.get("nodes_provisioned") if isinstance(s, dict) else None,
                )
            )
    return out


def _hardware(point: _Point, power_doc: dict[str, Any] | None) -> tuple[dict[str, Any], int]:
    """(hardware record, accelerators): each group's accelerators per node x its nodes (a group
    without accelerators, a head node, counts none)."""
    from benchdb.interop.mlperf.system_desc import count_or_none, text
    from benchdb.schema.system import vendor_kind

    name, per_node, nodes, total = None, None, 0, 0
    for model, count_text, nodes_text in _groups(point.desc, power_doc):
        count = count_or_none(count_text)
        if not count:
            continue
        name, per_node = name or text(model), per_node or count
        n = count_or_none(nodes_text) or 1
        nodes, total = nodes + n, total + count * n
    if not name or not total:
        raise SourceError("neither system_desc.json nor system_power.json names the accelerators and their count")
    vendor, kind = vendor_kind(name)
    hardware = {
        "kind": kind,
        "vendor": vendor,
        "device_name": name,
        "system_name": text(point.desc.get("system_name")) or point.folder.parent.parent.name,
        "accelerators_per_node": per_node,
        "nodes": nodes,
    }
    return hardware, total


def _curve(
    folders: list[Path],
    root: Path,
    power_doc: dict[str, Any] | None,
    power_err: str | None,
    failed: list[tuple[Path, str]],
) -> list[tuple[Imported, Path]]:
    """The curve of one system and model: one result per point (a point whose figures cannot be
    read is added to ``failed``)."""
    loaded = []
    for f in folders:
        try:
            loaded.append(_load_point(f, root))
        except (SourceError, OSError) as exc:  # this point alone: the curve's others stand
            failed.append((f, str(exc) if isinstance(exc, SourceError) else f"cannot read it: {exc}"))
    if not loaded:
        return []
    points = sorted(loaded, key=lambda p: p.concurrency)
    c_max = next(
        (int(p.config["max_supported_concurrency"]) for p in points if p.config.get("max_supported_concurrency")), None
    )
    if c_max is None:
        raise SourceError(f"no point.yaml of {folders[0].parent} names max_supported_concurrency (C_max)")
    steps = [p for p in points if str(p.config.get("offline") or "none").lower() != "dedicated"]
    c_min = min(p.concurrency for p in steps) if steps else c_max
    bounds = regions(c_min, c_max) if c_max > c_min else {}
    system, model = folders[0].parent.parent.name, folders[0].parent.name
    power = None
    if power_doc is not None:
        cooling = next((p.desc.get("cooling") for p in points if p.desc.get("cooling")), None)
        try:
            power = provisioned_power(power_doc, cooling)
        except SourceError as exc:
            power_err = str(exc)
    curve = _Curve(f"{system}/{model}", root, c_min, c_max, bounds, power, power_err, power_doc)
    out = []
    for p in points:
        try:
            stats, system_tps, problems = _figures(p)
        except SourceError as exc:  # this point alone: the curve's others stand
            failed.append((p.folder, str(exc)))
            continue
        out.append((_point_result(p, curve, stats, system_tps, problems), p.folder))
    return out


def _started(summary: Any) -> str | None:
    """The point's start from result_summary.json's ``test_started_at`` (ns or s since the epoch)."""
    ns = positive((summary or {}).get("test_started_at")) if isinstance(summary, dict) else None
    return utc_iso(ns / 1e9 if ns and ns > 1e14 else ns) if ns else None


def import_paths(paths: list[str], out: Path, declared: Any) -> Any:
    """Every curve under ``paths`` (the points of one system and model) into contract files."""
    from benchdb.interop import ImportSummary, writer
    from benchdb.schema.documents import DocumentError

    summary = ImportSummary()
    folders = discover(paths)
    if not folders:
        raise SourceError(f"no MLPerf Endpoints points (r<N>/{POINT}) under {', '.join(paths)}")
    curves: dict[Path, list[Path]] = {}
    for f in folders:
        curves.setdefault(f.parent, []).append(f)
    points = disagreements = 0
    estimated: set[str] = set()
    for model_dir, members in curves.items():
        system_dir = model_dir.parent
        root = system_dir.parent
        power_doc: dict[str, Any] | None = None
        power_err: str | None = f"no system_power.json in {system_dir.name}"
        if (system_dir / "system_power.json").is_file():
            try:
                got = _read(system_dir / "system_power.json", root)
                power_doc, power_err = (
                    (got, None) if isinstance(got, dict) else (None, "system_power.json is not an object")
                )
            except SourceError as exc:
                power_err = str(exc)
        if power_err:
            summary.notes.append(f"mlperf-endpoints: {system_dir.name}: {power_err}; no tokens/s per kW")
        try:
            pairs = _curve(members, root, power_doc, power_err, summary.failed)
            items = [item for item, _ in pairs]
            for item in items:
                declared.apply(item)
            planned = [writer.plan_files([item], FORMAT_ID, folder / POINT, out) for item, folder in pairs]
        except (SourceError, DocumentError) as exc:
            summary.failed.append((model_dir, str(exc)))
            continue
        except OSError as exc:
            summary.failed.append((model_dir, f"cannot read it: {exc.strerror or exc}"))
            continue
        except (KeyError, TypeError, ValueError, AttributeError, IndexError, ArithmeticError) as exc:
            summary.failed.append((model_dir, f"unexpected content for mlperf-endpoints ({type(exc).__name__}: {exc})"))
            continue
        for item, plan in zip(items, planned, strict=True):
            summary.written += writer.write_all(plan)
            summary.imported.append((Path(item.settings["location"]), len(plan)))
            for line in item.settings.get("source_disagreements") or []:
                summary.notes.append(f"mlperf-endpoints: disagrees: {item.settings['location']}: {line}")
                disagreements += 1
            if item.validity != "valid":
                summary.notes.append(
                    f"mlperf-endpoints: invalid: {item.settings['location']}: {'; '.join(item.validity_reasons)}"
                )
            if item.settings.get("power_estimated"):
                estimated.add(item.settings["curve"])
        points += len(items)
    summary.detail = f"{points} point(s) on {len(curves)} curve(s); {disagreements} disagreement(s)" + (
        f"; MLC Estimated Power: {', '.join(sorted(estimated))}" if estimated else ""
    )
    return summary


@dataclass(frozen=True)
class _Curve:
    """What every point of one curve shares: its name (system/model), where the tree is, its
    concurrency bounds and regions, and the system's provisioned power (or why there is none)."""

    name: str
    root: Path
    c_min: int
    c_max: int
    bounds: dict
    power: Power | None
    power_err: str | None
    power_doc: dict[str, Any] | None


def _point_result(p: _Point, curve: _Curve, stats: list, system_tps: float | None, problems: list[str]) -> Imported:
    """One point of a curve as a benchdb result."""
    root, bounds, power, power_err, power_doc = curve.root, curve.bounds, curve.power, curve.power_err, curve.power_doc
    c_min, c_max = curve.c_min, curve.c_max
    system, model = curve.name.split("/", 1)
    problems = p.problems + problems
    hardware, accelerators = _hardware(p, power_doc)
    stats.append(("output_throughput_per_gpu", "tokens/s", "value", system_tps / accelerators))  # type: ignore[operator]
    offline = str(p.config.get("offline") or "none").lower()
    region = "offline" if offline == "dedicated" else region_of(p.concurrency, bounds) if bounds else None
    declared = p.config.get("region")
    if declared and region not in (None, "offline") and declared not in (region, "submitters_choice"):
        problems.append(f"{POINT}: region {declared!r}, the rules' regions give {region!r}")
    if power is not None:
        stats.append(("power_w", "W", "provisioned", power.watts))
        stats.append(("system_tps_per_kw", "tokens/s/kW", "value", system_tps / (power.watts / 1000)))  # type: ignore[operator]
    for score in (p.accuracy or {}).get("accuracy_scores") or []:
        value = score.get("score") if isinstance(score, dict) else None
        if isinstance(value, (int, float)) and math.isfinite(value):
            stats.append((f"accuracy:{score.get('dataset_name') or 'score'}", "score", "value", float(value)))
    model_id = str(p.config.get("model_name") or model)
    gate = accuracy_gate(model_id, p.accuracy) if p.accuracy is not None else None
    gate_failed = gate is not None and not gate[0]
    steady = (p.config.get("steady_state") or {}) if isinstance(p.config.get("steady_state"), dict) else {}
    settings: dict[str, Any] = {
        "curve": f"{system}/{model}",
        "region": region,
        "region_declared": declared,
        "offline": offline if offline != "none" else None,
        "c_min": c_min,
        "c_max": c_max,
        "steady_state": steady.get("status"),
        "power_estimated": power.estimated if power else None,
        "power_method": power.how if power else power_err,
        "location": str(p.folder.relative_to(root)),
        "source_disagreements": problems or None,
        "accuracy_gate": None if gate is None else ("passed: " if gate[0] else "failed: ") + "; ".join(gate[1]),
    }
    return Imported(
        model_id=model_id,
        backend=FORMAT_ID,
        device=f"remote:{system}",
        mode="completions",
        precision=str(p.config.get("model_precision") or "unknown").lower(),
        batch_size=p.concurrency,
        input_shape=f"concurrency={p.concurrency}",
        primary_metric="output_throughput",
        options={"accelerators": accelerators, "system": system, "division": p.config.get("division")},
        hardware=hardware,
        model={"model_type": "llm", "task": "text-generation"},
        started_at=_started(p.summary),
        run_key=f"{system}/{model}",
        timing_method="source-client",
        tool="MLPerf Endpoints",
        summary_only=True,
        percentile_method="linear",
        statistics=stats,
        settings={k: v for k, v in settings.items() if v is not None},
        validity="invalid" if gate_failed else "valid",
        validity_reasons=[f"accuracy gate failed: {'; '.join(gate[1])}"] if gate and gate_failed else [],
    )

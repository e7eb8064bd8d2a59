"""MLPerf Endpoints v1.0 rules benchdb computes as the rules define them: a curve's concurrency regions
(§5.4) and a system's provisioned power (§4.5.2), from the v1.0 draft rules
(mlcommons/endpoints-submission-docs) and the submission checker (mlcommons/endpoints-submission-cli)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from benchdb.interop.writer import SourceError

ULTRA_LOW = (1, 32)
OVERHEAD = {"liquid": 0.30, "air": 0.50}


def regions(c_min: int, c_max: int) -> dict[str, tuple[int, int]]:
    """The rules' concurrency regions (§5.4) of a curve whose lowest point is ``c_min`` and whose
    ``max_supported_concurrency`` is ``c_max``: name -> (first, last)."""
    step = math.log2(c_max - c_min) / 3
    low_end, med_end = round(c_min + 2**step), round(c_min + 2 ** (2 * step))
    return {
        "low_latency": (ULTRA_LOW[0], c_min),
        "low_concurrency": (c_min + 1, low_end),
        "med_concurrency": (low_end + 1, med_end),
        "high_concurrency": (med_end + 1, c_max),
        "margin": (c_max + 1, math.ceil(1.10 * c_max)),
    }


def region_of(concurrency: int, bounds: dict[str, tuple[int, int]]) -> str | None:
    """The region ``concurrency`` falls in (None: above the margin)."""
    return next((name for name, (lo, hi) in bounds.items() if lo <= concurrency <= hi), None)


@dataclass
class Power:
    watts: float
    estimated: bool
    how: str


def _sourced(value: Any) -> float | None:
    """A figure given bare or as ``{"value_w": ...}`` / ``{"value_kw": ...}``."""
    if isinstance(value, dict):
        kw = positive(value.get("value_kw"))
        return kw * 1000 if kw is not None else positive(value.get("value_w"))
    return positive(value)


def positive(value: Any) -> float | None:
    """A finite number above zero, else None (a figure a file does not give, or gives badly)."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) and number > 0 else None


def provisioned_power(doc: dict[str, Any], cooling: str | None) -> Power:
    """A system's provisioned power from its ``system_power.json`` (the flat schema or the node-set
    one), ``cooling`` from the file or the system description."""
    for key, scale in (
        ("provisioned_power_w", 1.0),
        ("provisioned_power_watts", 1.0),
        ("provisioned_power_kw", 1000.0),
    ):
        declared = positive(doc.get(key))
        if declared:
            return Power(declared * scale, bool(doc.get("mlc_estimated_power")), f"declared {key}")
    cooling = str(doc.get("cooling") or cooling or "").lower()
    kind = (
        "liquid" if any(w in cooling for w in ("liquid", "water", "immersion")) else "air" if "air" in cooling else None
    )
    if kind is None:
        raise SourceError(f"system_power.json: cooling {cooling or 'not given'!r} is neither liquid nor air")
    missing: list[str] = []
    major = 0.0
    sets = doc.get("node_sets")
    if isinstance(sets, list):  # Appendix E: node sets of components, every figure sourced
        for s in sets:
            nodes = positive(s.get("nodes_provisioned")) or 1
            parts = s.get("components") or {}
            for name in ("cpu", "accelerator"):
                part = parts.get(name) or {}
                count, tdp = positive(part.get("count_per_node")), _sourced(part.get("tdp_per_unit"))
                if count is None or tdp is None:
                    missing.append(name)
                else:
                    major += nodes * count * tdp
            up = parts.get("scale_up_network") or {}
            switches, tdp = positive(up.get("switch_count")), _sourced(up.get("tdp_per_switch"))
            if switches and tdp:
                major += switches * tdp
    else:  # the flat schema: groups of count x TDP
        for name, count_key, tdp_key in (
            ("cpu", "num_cpu", "tdp_per_cpu"),
            ("accelerator", "num_accelerator", "tdp_per_accelerator"),
            ("scale_up_network", "num_switches", "tdp_per_switch"),
        ):
            part = doc.get(name) or {}
            count = positive(part.get("count", part.get(count_key)))
            tdp = positive(part.get("tdp_per_unit", part.get(tdp_key)))
            if count is None or tdp is None:
                if name != "scale_up_network":
                    missing.append(name)
            else:
                major += count * tdp
    if major <= 0:
        raise SourceError("system_power.json gives no component power (count and TDP per unit)")
    overhead = OVERHEAD[kind]
    return Power(
        major * (1 + overhead),
        bool(doc.get("mlc_estimated_power")) or bool(missing),
        f"(CPU + accelerators + scale-up) x {1 + overhead:.2f} ({kind} cooling)"
        + (f"; no {', '.join(missing)} figures" if missing else ""),
    )


#: The accuracy gates the endpoints compliance checker applies (mlcommons/endpoints, Apache-2.0:
#: ``compliance/checker.py`` check_accuracy over ``config/rulesets/mlcommons/models.py``, read
#: 2026-08): model -> (the accuracy_results.json breakdown key, the golden accuracy, the lower-bound
#: factor). The checker gates the BFCL metrics only; the other models' targets (ROUGE, exact match)
#: are not gated by it yet, so benchdb gates none of them either.
ACCURACY_GATES: dict[str, tuple[tuple[str, float, float], ...]] = {
    "qwen3.6-27b": (("overall_accuracy", 86.23, 0.97), ("normalized_single_turn_score", 87.96, 0.97))
}


def accuracy_gate(model: str, results: Any) -> tuple[bool, list[str]] | None:
    """(passed, one line per gated metric) of a point's accuracy_results.json by the checker's rule
    ``score >= factor x golden``; None where the checker gates no metric of ``model`` (a point with
    no accuracy file is not gated: a curve's accuracy run is a folder of its own). The first
    ``accuracy_scores`` entry with a ``breakdown`` holding ``subset_scores`` is read; the overall
    accuracy falls back to the entry's ``score``, as the checker's does. A score may be text
    ("86.23", as older files wrote it): the checker reads those too."""
    from benchdb.interop.mlperf.system_desc import finite_float

    gates = ACCURACY_GATES.get(model.rsplit("/", 1)[-1].lower())  # "Qwen/Qwen3.6-27B" is qwen3.6-27b
    if not gates:
        return None
    entries = results.get("accuracy_scores") if isinstance(results, dict) else None
    entry = next(
        (
            e
            for e in entries or []
            if isinstance(e, dict) and isinstance(e.get("breakdown"), dict) and "subset_scores" in e["breakdown"]
        ),
        None,
    )
    if entry is None:
        return False, ["no accuracy score found (accuracy_scores with a breakdown)"]
    lines, passed = [], True
    for key, golden, factor in gates:
        measured = finite_float(entry["breakdown"].get(key))
        if measured is None and key == "overall_accuracy":
            measured = finite_float(entry.get("score"))
        threshold = golden * factor
        if measured is None:
            passed = False
            lines.append(f"{key}: missing or not a number")
            continue
        ok = measured >= threshold
        passed = passed and ok
        lines.append(f"{key} {measured:.2f} {'>=' if ok else '<'} {threshold:.2f} (= {factor} x {golden})")
    return passed, lines

"""How the serving sections (:mod:`benchdb.reports.serving`) word a row: the configuration, workload and
load, 95 % intervals, a figure in its unit, and a result's parallelism (``TP8 EP8``, or prefill /
decode for a disaggregated deployment)."""

from __future__ import annotations

from typing import Any


def ci(lo: float | None, hi: float | None, scale: float = 1e3, unit: str = "ms") -> str | None:
    if lo is None or hi is None:
        return None
    return f"{lo * scale:.1f} .. {hi * scale:.1f} {unit}"


def config(r: dict) -> str:
    engine = r.get("engine") or "?"
    if r.get("engine_version"):
        engine += f" {r['engine_version']}"
    devices = f" x{r['devices']}" if (r.get("devices") or 1) > 1 else ""
    return f"{r.get('hardware_name')}{devices} / {engine} / {r.get('precision')}"


def _load(r: dict) -> str | None:
    if r.get("load_kind") == "concurrency":
        return f"c={r['concurrency']}"
    if r.get("load_kind") == "rate":
        return f"{r['request_rate']:g} req/s" + (f" {r['arrival']}" if r.get("arrival") else "")
    return None


def workload(r: dict) -> str:
    tokens = " ".join(f"{k}={r[f'{k}_tokens']}" for k in ("in", "out") if r.get(f"{k}_tokens") is not None)
    return " · ".join(str(part) for part in (r.get("model_id"), r.get("endpoint"), tokens) if part)


def point_row(r: dict) -> dict:
    return dict(
        r,
        config=config(r),
        load=_load(r),
        workload=workload(r),
        ttft_ci=ci(r.get("ttft_p50_ci_low_s"), r.get("ttft_p50_ci_high_s")),
        tpot_ci=ci(r.get("tpot_p50_ci_low_s"), r.get("tpot_p50_ci_high_s")),
        options_text=str(r.get("options") or ""),
    )


def slo_load(r: dict) -> str | None:
    v = r.get("load_at_slo")
    if v is None:
        return None
    return f"c={v:.3g}" if r.get("load_kind") == "concurrency" else f"{v:.3g} req/s"


def figure(metric: str, value: float | None) -> str | None:
    if value is None:
        return None
    return f"{value * 1e3:.2f} ms" if metric.endswith("_s") else f"{value:.4g}"


def _phase_text(d: dict) -> str:
    parts = [
        f"TP{d['tp']}" if d.get("tp") else "",
        f"EP{d['ep']}" if (d.get("ep") or 1) > 1 else "",
        "DPA" if d.get("dp_attention") else "",
    ]
    text = " ".join(p for p in parts if p)
    return f"{d['workers']}x {text}" if d.get("workers") else text


def parallelism_text(value: Any) -> str | None:
    """A result's parallelism (results.parallelism, JSON) in a few words: ``TP8 EP8``, or for a
    disaggregated deployment ``P 2x TP4 EP4 DPA / D 1x TP8 EP8 DPA``."""
    import json

    doc = json.loads(value) if isinstance(value, str) else value
    if not isinstance(doc, dict) or not doc:
        return None
    if doc.get("disaggregated"):
        return (f"P {_phase_text(doc.get('prefill') or {})} / D {_phase_text(doc.get('decode') or {})}").strip()
    return _phase_text(doc) or None


def published_row(r: dict) -> dict:
    spec = f" +{r['speculative_decoding']}" if r.get("speculative_decoding") else ""
    return dict(
        r,
        system=f"{r.get('hardware_name')} / {r.get('engine')} / {r.get('precision')}{spec}",
        workload=workload(r),
        load=f"c={r['concurrency']}" if r.get("concurrency") else None,
        parallelism_text=parallelism_text(r.get("parallelism")),
        figures=f"{r.get('measured_by')}: published summary, no interval",
    )

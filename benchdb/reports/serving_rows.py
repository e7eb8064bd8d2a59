"""How the serving sections (:mod:`benchdb.reports.serving_sections`) word a row: the configuration, workload and
load, 95 % intervals, a figure in its unit, and a result's parallelism (``TP8 EP8``, or prefill /
decode for a disaggregated deployment)."""

from __future__ import annotations

from typing import Any

from benchdb.text import plural


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
    parts = (r.get("model_id"), r.get("endpoint"), tokens, r.get("workload_kind"))
    return " · ".join(str(part) for part in parts if part)


def window(r: dict) -> str | None:
    """Which requests a load point's headline figures are over: its steady-state window (its bounds,
    seconds from the measurement window's start), or the whole window and, where one was sought and
    none found, why."""
    if r.get("figures_window") == "steady state":
        lo, hi = r.get("steady_start_s"), r.get("steady_end_s")
        return "steady" + (f" {lo:.1f}-{hi:.1f} s" if lo is not None and hi is not None else "")
    if r.get("steady_state") == "none":
        return "whole: no steady state"
    return "whole" if r.get("figures_window") else None


def curve_place(r: dict) -> str | None:
    """A `--curve` point's place: ``3/8 low``."""
    if r.get("curve_point") is None:
        return None
    return f"{r['curve_point']}/{r.get('curve_points')} {r.get('curve_region') or ''}".strip()


def point_row(r: dict) -> dict:
    return dict(
        r,
        config=config(r),
        load=_load(r),
        workload=workload(r),
        ttft_ci=ci(r.get("ttft_p50_ci_low_s"), r.get("ttft_p50_ci_high_s")),
        tpot_ci=ci(r.get("tpot_p50_ci_low_s"), r.get("tpot_p50_ci_high_s")),
        options_text=str(r.get("options") or ""),
        window=window(r),
        curve=curve_place(r),
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


def window_notes(rows: list[dict]) -> list[str]:
    """Which load points are read over their steady-state window, and which sought one and found none."""
    steady = [r for r in rows if r.get("figures_window") == "steady state"]
    none = [r for r in rows if r.get("steady_state") == "none"]
    if not steady and not none:
        return []
    text = (
        f"{plural(len(steady), 'load point')} of {len(rows)} found a steady-state window: their TTFT, TPOT, "
        "interactivity and throughputs are over it (figures over: its bounds, seconds from the window's "
        "start; MLPerf Endpoints' method: warm-up crop, drain cut, plateau and level-shift tests); ITL, "
        "E2E and goodput are the whole window's."
    )
    if none:
        reasons = sorted({str(r.get("steady_state_reason") or "no plateau") for r in none})
        text += f" {plural(len(none), 'load point')} found none ({'; '.join(reasons)}): whole window."
    return [text]


def curve_notes(rows: list[dict]) -> list[str]:
    """Each `--curve`'s points by region and the probe's highest useful concurrency."""
    curves: dict[tuple, list[dict]] = {}
    for r in rows:
        if r.get("curve_point") is not None:
            curves.setdefault((r["workload"], r["config"], r.get("options_id")), []).append(r)
    out = []
    for (head, cfg, _), pts in curves.items():
        regions: dict[str, list[str]] = {}
        for p in sorted(pts, key=lambda p: p["curve_point"]):
            regions.setdefault(str(p.get("curve_region")), []).append(str(p.get("concurrency")))
        spread = "; ".join(f"{k} {', '.join(v)}" for k, v in regions.items())
        out.append(
            f"Curve ({head}, {cfg}): {len(pts)} of its {pts[0].get('curve_points')} points by region, "
            f"concurrency {spread}; the probe's highest useful concurrency {pts[0].get('curve_highest_useful')}."
        )
    return out

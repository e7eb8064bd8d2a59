"""How wrong the performance model's predictions are (`benchdb predict --evaluate`): grouped
cross-validation of every method of :mod:`benchdb.perfmodel.predict` on the warehouse's results."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Hashable

import numpy as np

from benchdb.perfmodel.habitat import Habitat, hw_key
from benchdb.perfmodel.predict import METHODS, Learned, predict_all


def _spearman(a: list[float], b: list[float]) -> float | None:
    if len(a) < 3:
        return None
    ra, rb = np.argsort(np.argsort(a)), np.argsort(np.argsort(b))
    if np.all(ra == ra[0]) or np.all(rb == rb[0]):
        return None
    return float(np.corrcoef(ra, rb)[0, 1])


def groupings(rows: list[dict]) -> list[tuple[str, Callable[[dict], Hashable]]]:
    out: list[tuple[str, Callable[[dict], Hashable]]] = [
        ("model", lambda r: r["model_id"]),
        ("batch size", lambda r: r["batch_size"]),
    ]
    if len({hw_key(r) for r in rows}) >= 3:
        out.append(("hardware", hw_key))
    return out


def evaluate(rows: list[dict]) -> list[dict]:
    """Grouped cross-validation: for each grouping, every group is held out in turn, every method
    predicts its results from the others only. Per grouping and method: MdAPE over the results it
    answered, coverage, and the median Spearman correlation between predicted and measured order
    of the (hardware, backend, mode) configurations of each model x batch x shape x precision
    with at least 3 of them (the order optimal-hardware ranks)."""
    out = []
    for name, key in groupings(rows):
        groups = sorted({key(r) for r in rows}, key=str)
        preds: dict[str, list] = defaultdict(list)  # method -> [(row, predicted)]
        for g in groups:
            test = [r for r in rows if key(r) == g]
            train = [r for r in rows if key(r) != g]
            learned, hab_model = Learned(train), Habitat(train)
            for t in test:
                for method, value in predict_all(train, learned, hab_model, t).items():
                    preds[method].append((t, value))
        for method in METHODS:
            pairs = preds[method]
            answered = [(t, v) for t, v in pairs if v is not None and v > 0]
            ape = [abs(v - t["latency_s"]) / t["latency_s"] for t, v in answered]
            orders = defaultdict(list)
            for t, v in answered:
                orders[(t["model_id"], t["batch_size"], t["input_shape"], t["precision"])].append((v, t["latency_s"]))
            rho = [
                s for s in (_spearman([p for p, _ in o], [m for _, m in o]) for o in orders.values()) if s is not None
            ]
            out.append(
                {
                    "grouping": f"leave one {name} out",
                    "folds": len(groups),
                    "method": method,
                    "results": len(pairs),
                    "answered": len(answered),
                    "mdape_pct": float(np.median(ape) * 100) if ape else None,
                    "rank_corr": float(np.median(rho)) if rho else None,
                    "rank_groups": len(rho),
                }
            )
    return out


def format_evaluation(table: list[dict], rows: list[dict]) -> str:
    hws = sorted({r["hardware_config"] for r in rows})
    lines = [
        f"{len(rows)} results, {len({r['model_id'] for r in rows})} models, {len(hws)} hardware "
        f"configurations ({'; '.join(hws)})",
        f"{'cross-validation':<24}{'folds':>6}  {'method':<10}{'answered':>12}{'MdAPE':>10}"
        f"{'rank corr':>11}{'(groups)':>10}",
    ]
    if len(hws) < 3:
        lines.append("leave one hardware out: not run (needs at least 3 hardware configurations)")
    for e in table:
        mdape = f"{e['mdape_pct']:.1f} %" if e["mdape_pct"] is not None else "-"
        rho = f"{e['rank_corr']:+.2f}" if e["rank_corr"] is not None else "-"
        lines.append(
            f"{e['grouping']:<24}{e['folds']:>6}  {e['method']:<10}"
            f"{e['answered']:>6}/{e['results']:<5}{mdape:>10}{rho:>11}{e['rank_groups']:>10}"
        )
    lines.append(
        "MdAPE: median absolute percentage error of latency over the results a method answered; rank "
        "corr: median Spearman correlation of predicted vs measured (hardware, backend, mode) order per "
        "model x batch x shape x precision; model = habitat where the scenario was measured elsewhere, "
        "else learned"
    )
    return "\n".join(lines)

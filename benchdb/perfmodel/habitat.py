"""The methods that carry measurements across hardware: what makes two results the same scenario
or the same hardware (the keys every method uses), ``habitat`` (the same scenario measured
elsewhere, scaled by the ratio of roofline times) and the ``nearest`` baseline."""

from __future__ import annotations

import math
from collections import defaultdict


def hw_key(r: dict) -> tuple:
    return (r["hardware_id"], r.get("threads"))


def scenario_key(r: dict) -> tuple:
    return (r["model_id"], r["backend"], r["mode"], r["precision"], r["batch_size"], r["input_shape"])


def usable(r: dict) -> bool:
    return bool(r.get("roofline_s")) and r["roofline_s"] > 0 and bool(r.get("flops")) and bool(r.get("peak_flops"))


MIN_PAIRS = 5  # cross-hardware pairs the habitat exponent needs


class Habitat:
    """The same scenario measured on other hardware, scaled by the ratio of roofline times raised to
    an exponent fitted on the training data's own cross-hardware pairs: latency_a / latency_b =
    (roofline_a / roofline_b) ** alpha, least squares through the origin in logs, clamped to [0, 2].
    alpha = 1 is Habitat's pure scaling; small models that barely speed up with more threads fit
    alpha << 1. The model's own pairs on the backend (other batch sizes and shapes, >= 2 pairs) give
    its alpha; else all pairs do; with fewer than MIN_PAIRS of those alpha stays 1."""

    def __init__(self, train: list[dict]):
        self.by_scenario: dict[tuple, list[dict]] = defaultdict(list)
        for s in train:
            if usable(s):
                self.by_scenario[scenario_key(s)].append(s)
        sxy = sxx = 0.0
        self.pairs = 0
        own: dict[tuple, list[float]] = defaultdict(lambda: [0.0, 0.0, 0])
        for group in self.by_scenario.values():
            for i, a in enumerate(group):
                for b in group[i + 1 :]:
                    if hw_key(a) == hw_key(b):
                        continue
                    x = math.log(a["roofline_s"] / b["roofline_s"])
                    if abs(x) < 1e-3:
                        continue
                    y = math.log(a["latency_s"] / b["latency_s"])
                    sxy += x * y
                    sxx += x * x
                    self.pairs += 1
                    o = own[(a["model_id"], a["backend"])]
                    o[0] += x * y
                    o[1] += x * x
                    o[2] += 1
        self.alpha = min(max(sxy / sxx, 0.0), 2.0) if self.pairs >= MIN_PAIRS else 1.0
        self.own = {k: min(max(xy / xx, 0.0), 2.0) for k, (xy, xx, n) in own.items() if n >= 2}

    def exponent(self, t: dict) -> tuple[float, str]:
        """The alpha that scales towards ``t``, and where it came from."""
        own = self.own.get((t["model_id"], t["backend"]))
        if own is not None:
            return own, f"raised to {own:.2f}, fitted on this model's own cross-hardware pairs"
        if self.pairs >= MIN_PAIRS:
            return self.alpha, f"raised to {self.alpha:.2f}, fitted on {self.pairs} cross-hardware pairs"
        return self.alpha, f"unscaled exponent 1 (only {self.pairs} cross-hardware pair(s) to fit one)"

    def predict(self, t: dict) -> tuple[float | None, list[dict]]:
        if not usable(t):
            return None, []
        hw = hw_key(t)
        sources = [s for s in self.by_scenario.get(scenario_key(t), ()) if hw_key(s) != hw]
        if not sources:
            return None, []
        alpha, _ = self.exponent(t)
        logs = [math.log(s["latency_s"]) + alpha * math.log(t["roofline_s"] / s["roofline_s"]) for s in sources]
        return float(math.exp(sum(logs) / len(logs))), sources


def nearest(train: list[dict], t: dict) -> tuple[float | None, dict | None]:
    """The nearest measured result scaled by the FLOPs ratio."""
    best, best_d = None, math.inf
    for s in train:
        d = (
            4 * (s["model_id"] != t["model_id"])
            + 2 * (hw_key(s) != hw_key(t))
            + 2 * (s["backend"] != t["backend"])
            + (s["precision"] != t["precision"])
            + (s["mode"] != t["mode"])
            + (s["input_shape"] != t["input_shape"])
        )
        if s.get("flops") and t.get("flops"):
            d += abs(math.log(t["flops"] / s["flops"]))
        else:
            d += abs(math.log(t["batch_size"] / s["batch_size"]))
        if d < best_d:
            best, best_d = s, d
    if best is None:
        return None, None
    if best.get("flops") and t.get("flops"):
        ratio = t["flops"] / best["flops"]
    else:
        ratio = t["batch_size"] / best["batch_size"]
    return float(best["latency_s"] * ratio), best

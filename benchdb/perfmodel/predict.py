"""Predicting latency on hardware that was not measured (`benchdb predict`); how wrong those
predictions are (`benchdb predict --evaluate`) is measured by :mod:`benchdb.perfmodel.evaluate`.

Every method reads the ``roofline`` view: each latest valid result with its FLOPs, bytes and its
hardware's measured peaks (``benchdb calibrate``). A "hardware" here is a hardware configuration:
a device at a thread count (a CPU at 1 thread and at 2 threads are two; their peaks are calibrated
at each).

Methods (each says which data it used, or why it cannot answer):

- ``roofline``: ``max(FLOPs / peak FLOP/s, bytes / bandwidth)``, nothing learned (a baseline).
- ``learned``: the roofline term times a learned correction: a ridge regression of
  ``log(latency / roofline)`` on the log roofline terms, log batch, log parameters, the hardware's
  log peaks, and backend, family, precision and mode (one-hot), fitted on the warehouse's results.
- ``habitat``: the same scenario (model, backend, mode, precision, batch, shape) measured on other
  hardware, scaled by the ratio of the two hardware's roofline times (Habitat's idea, Yu et al.,
  USENIX ATC 2021, at the level of a whole forward: FLOPs over the peak for compute-bound work,
  bytes over the bandwidth for memory-bound), raised to an exponent fitted on the warehouse's
  cross-hardware pairs (small models gain less from a bigger peak than the ratio says). Several
  sources: the geometric mean.
- ``nearest``: the nearest measured result (same model, then hardware, backend, precision, mode,
  then closest FLOPs), scaled by the FLOPs ratio (a baseline).
- ``model`` (what `benchdb predict` answers): ``habitat`` when the scenario was measured on other
  hardware, else ``learned``.

Intervals are empirical: the 10th and 90th percentiles of the method's cross-validated log errors
on the warehouse (an 80 % interval), when at least 5 such errors exist.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np

from benchdb.errors import BenchdbError
from benchdb.perfmodel.habitat import Habitat, hw_key, nearest, scenario_key, usable

METHODS = ("model", "learned", "habitat", "roofline", "nearest")
MIN_TRAIN = 8  # results (with FLOPs and peaks) the learned correction needs
MIN_MODELS = 2  # distinct models among them
_BPE = {"fp64": 8, "fp32": 4, "fp16": 2, "bf16": 2, "int8": 1}
_CATEGORICAL = ("backend", "family", "precision", "mode")


@dataclass
class Answer:
    """A prediction, or ``value is None`` with ``reason`` ("insufficient data: ...")."""

    method: str
    value: float | None = None  # latency (s)
    low: float | None = None
    high: float | None = None
    detail: str = ""
    reason: str = ""
    data: dict = field(default_factory=dict)


class Learned:
    """Ridge regression of log(latency / roofline) on standardised features."""

    def __init__(self, rows: list[dict], ridge: float = 0.1):
        self.rows = [r for r in rows if usable(r)]
        self.models = {r["model_id"] for r in self.rows}
        self.hardware = {hw_key(r) for r in self.rows}
        self.ok = len(self.rows) >= MIN_TRAIN and len(self.models) >= MIN_MODELS
        if not self.ok:
            self.why = (
                f"insufficient data: the learned correction needs at least {MIN_TRAIN} results of "
                f"{MIN_MODELS} models with FLOPs and calibrated peaks; the warehouse has "
                f"{len(self.rows)} of {len(self.models)} model(s)"
            )
            return
        self.vocab = {c: sorted({str(r.get(c)) for r in self.rows}) for c in _CATEGORICAL}
        x = np.array([self._numeric(r) for r in self.rows])
        self.mu, self.sd = x.mean(axis=0), x.std(axis=0)
        # A feature constant in training (all results at batch 4: its sd is float noise, 1e-15) says
        # nothing; standardising by that noise turned a batch-1 target into a z of 1e15 and the
        # prediction into 1e176 x the truth. Such a feature is left out (its z is 0 everywhere).
        self.constant = self.sd <= 1e-9 * np.maximum(1.0, np.abs(self.mu))
        self.sd[self.constant] = 1.0
        X = self._design(self.rows)
        y = np.array([math.log(r["latency_s"] / r["roofline_s"]) for r in self.rows])
        # The correction is not extrapolated past what training saw: a target far outside the
        # training features gets at most the largest (or smallest) correction measured.
        self.y_range = (float(y.min()), float(y.max()))
        penalty = ridge * np.eye(X.shape[1])
        penalty[0, 0] = 0.0  # the intercept is not shrunk
        self.coef = np.linalg.solve(X.T @ X + penalty, X.T @ y)

    @staticmethod
    def _numeric(r: dict) -> list[float]:
        compute = r["flops"] / r["peak_flops"]
        memory = (r["bytes"] / r["peak_bandwidth"]) if r.get("bytes") and r.get("peak_bandwidth") else compute
        return [
            math.log(r["roofline_s"]),
            math.log(compute),
            math.log(memory),
            math.log(r["batch_size"]),
            math.log(max(r.get("num_parameters") or 1, 1)),
            math.log(r["peak_flops"]),
            math.log(r.get("peak_bandwidth") or r["peak_flops"]),
        ]

    def _design(self, rows: list[dict]) -> np.ndarray:
        out = []
        for r in rows:
            num = (np.array(self._numeric(r)) - self.mu) / self.sd
            num[self.constant] = 0.0
            cat = [1.0 if str(r.get(c)) == v else 0.0 for c in _CATEGORICAL for v in self.vocab[c]]
            out.append(np.concatenate([[1.0], num, cat]))
        return np.array(out)

    def predict(self, r: dict) -> float | None:
        if not self.ok or not usable(r):
            return None
        correction = float(self._design([r])[0] @ self.coef)
        return float(r["roofline_s"] * math.exp(min(max(correction, self.y_range[0]), self.y_range[1])))


def predict_all(train: list[dict], learned: Learned, hab_model: Habitat, t: dict) -> dict[str, float | None]:
    """Every method's latency for target ``t`` from ``train`` only."""
    hab, _ = hab_model.predict(t)
    lrn = learned.predict(t)
    return {
        "model": hab if hab is not None else lrn,
        "learned": lrn,
        "habitat": hab,
        "roofline": t["roofline_s"] if usable(t) else None,
        "nearest": nearest(train, t)[0],
    }


# ------------------------------------------------------------------------------ predicting
def _interval(method: str, rows: list[dict]) -> tuple[float, float] | None:
    """10th/90th percentile of the method's log errors, each result predicted without its model's
    (learned) or its hardware's (habitat) results."""
    errs = []
    if method == "learned":
        for m in sorted({r["model_id"] for r in rows}):
            train = [r for r in rows if r["model_id"] != m]
            lrn = Learned(train)
            for t in rows:
                if t["model_id"] == m:
                    v = lrn.predict(t)
                    if v:
                        errs.append(math.log(v / t["latency_s"]))
    else:
        for hw in sorted({hw_key(r) for r in rows}, key=str):
            hab_model = Habitat([r for r in rows if hw_key(r) != hw])
            for t in rows:
                if hw_key(t) == hw:
                    v, _ = hab_model.predict(t)
                    if v:
                        errs.append(math.log(v / t["latency_s"]))
    if len(errs) < 5:
        return None
    lo, hi = np.quantile(errs, [0.1, 0.9])
    return float(math.exp(-hi)), float(math.exp(-lo))  # multiply the prediction by these


def _target_bytes(num_parameters, precision, batch, shape) -> float | None:
    """The roofline view's bytes: parameters x bytes per element (+ input and output for matmul:N)."""
    bpe = _BPE.get(precision)
    if not num_parameters or not bpe:
        return None
    extra = 0.0
    if shape.startswith("n=") and shape[2:].isdigit():
        extra = 2.0 * batch * int(shape[2:]) ** 2 * bpe
    return num_parameters * bpe + extra


def targets(
    rows: list[dict],
    peaks: list[dict],
    model: str,
    hardware: str,
    *,
    threads: int | None,
    batch_size: int | None,
    shape: str | None,
    backend: str | None,
    precision: str | None,
    mode: str | None,
) -> tuple[list[dict], str]:
    """The scenarios to predict for the options (one per backend and calibrated thread count when
    not given), with FLOPs, bytes and peaks filled in; or ([], reason)."""
    mine = [r for r in rows if r["model_id"] == model]
    if not mine:
        return [], (
            f"insufficient data: model {model!r} has no valid results in the warehouse, so its FLOPs "
            "and parameters are unknown; measure it on any hardware first (benchdb run)"
        )
    h = hardware.lower()
    match = [p for p in peaks if p["hardware_id"].startswith(h) or h in (p["hardware_name"] or "").lower()]
    if not match:
        names = sorted({f"{p['hardware_name']} ({p['hardware_id']})" for p in peaks}) or ["none"]
        return [], (
            f"insufficient data: hardware {hardware!r} has no calibration (`benchdb calibrate` on it); "
            f"calibrated: {', '.join(names)}"
        )
    if len({p["hardware_id"] for p in match}) > 1:
        raise BenchdbError(
            f"--hardware {hardware!r} matches several hardware records "
            f"({', '.join(sorted({p['hardware_id'] for p in match}))}); give more of the id"
        )
    hid, hname, hkind = match[0]["hardware_id"], match[0]["hardware_name"], match[0]["hardware_kind"]
    thread_counts = sorted({p["threads"] for p in match}, key=lambda t: t or 0)
    if threads is not None:
        thread_counts = [min(thread_counts, key=lambda t: abs((t or 0) - threads))]
    shapes: dict[str, int] = defaultdict(int)
    for r in mine:
        shapes[r["input_shape"]] += 1
    shape = shape or max(sorted(shapes), key=lambda s: shapes[s])
    batch = batch_size or min(r["batch_size"] for r in mine)
    precision = precision or "fp32"
    backends = [backend] if backend else sorted({r["backend"] for r in mine})
    out = []

    def peak(th: int | None, kind: str, prec: str | None = None) -> float | None:
        vals = [
            p["value"]
            for p in match
            if p["threads"] == th and p["kind"] == kind and (prec is None or p["precision"] == prec)
        ]
        return max(vals) if vals else None

    for th in thread_counts:
        pf, bw = peak(th, "matmul", precision), peak(th, "triad")
        for b in backends:
            same = [r for r in mine if r["backend"] == b] or mine
            md = mode or same[0]["mode"]
            exact = [r["flops"] for r in mine if r["batch_size"] == batch and r["input_shape"] == shape and r["flops"]]
            scaled = [r["flops"] * batch / r["batch_size"] for r in mine if r["input_shape"] == shape and r["flops"]]
            flops = (exact or scaled or [None])[0]
            nbytes = _target_bytes(mine[0]["num_parameters"], precision, batch, shape)
            roof = None
            if flops and pf:
                roof = max(flops / pf, (nbytes / bw) if nbytes and bw else 0.0)
            label = f"{hname} x{th} threads" if hkind == "cpu" and th is not None else hname
            out.append(
                {
                    "model_id": model,
                    "family": mine[0]["family"],
                    "num_parameters": mine[0]["num_parameters"],
                    "hardware_id": hid,
                    "hardware_name": hname,
                    "hardware_config": label,
                    "threads": th,
                    "backend": b,
                    "device": same[0]["device"],
                    "mode": md,
                    "precision": precision,
                    "batch_size": batch,
                    "input_shape": shape,
                    "flops": flops,
                    "bytes": nbytes,
                    "peak_flops": pf,
                    "peak_bandwidth": bw,
                    "roofline_s": roof,
                    "measured": next(
                        (
                            r["latency_s"]
                            for r in rows
                            if hw_key(r) == (hid, th) and scenario_key(r) == (model, b, md, precision, batch, shape)
                        ),
                        None,
                    ),
                }
            )
    return out, ""


def _bounds(value: float, iv: tuple[float, float] | None) -> tuple[float | None, float | None]:
    """The interval around ``value`` (None, None when there are too few errors for one)."""
    return (value * iv[0], value * iv[1]) if iv else (None, None)


def answer(rows: list[dict], t: dict, learned: Learned | None = None) -> Answer:
    """The ``model`` method for one target: habitat when possible, else learned, else why not."""
    if not t.get("flops"):
        return Answer(
            "model",
            reason=f"insufficient data: no FLOPs known for {t['model_id']} at shape "
            f"{t['input_shape']} (no result of that shape)",
        )
    if not t.get("peak_flops"):
        return Answer(
            "model",
            reason=f"insufficient data: {t['hardware_config']} has no {t['precision']} matmul peak (benchdb calibrate)",
        )
    train = [r for r in rows if not (hw_key(r) == hw_key(t) and scenario_key(r) == scenario_key(t))]
    hab_model = Habitat(train)
    value, sources = hab_model.predict(t)
    if value is not None:
        names = sorted({s["hardware_config"] for s in sources})
        bound = (
            "compute"
            if t["flops"] / t["peak_flops"]
            >= (t["bytes"] / t["peak_bandwidth"] if t.get("bytes") and t.get("peak_bandwidth") else 0)
            else "memory"
        )
        low, high = _bounds(value, _interval("habitat", train))
        return Answer(
            "habitat",
            value,
            low,
            high,
            detail=(
                f"habitat: the same scenario measured on {', '.join(names)} ({len(sources)} "
                f"result(s)), scaled by the ratio of roofline times ({bound}-bound here), "
                f"{hab_model.exponent(t)[1]}"
            ),
            data={"sources": [s["result_id"] for s in sources if s.get("result_id")]},
        )
    learned = learned or Learned(train)
    if not learned.ok:
        return Answer("learned", reason=learned.why)
    value = learned.predict(t)
    if value is None:
        # Learned.predict needs a positive roofline term (FLOPs and peak are checked above, but a
        # target built elsewhere may lack roofline_s); scaling None by the interval used to crash.
        return Answer(
            "learned", reason=f"insufficient data: no roofline term for {t['model_id']} on {t['hardware_config']}"
        )
    low, high = _bounds(value, _interval("learned", learned.rows))
    return Answer(
        "learned",
        value,
        low,
        high,
        detail=(
            f"roofline + learned correction (ridge regression on {len(learned.rows)} results of "
            f"{len(learned.models)} models on {len(learned.hardware)} hardware configuration(s); "
            f"roofline term {t['roofline_s']:.3g} s)"
        ),
        data={"results": len(learned.rows), "models": len(learned.models)},
    )


def load(con) -> tuple[list[dict], list[dict]]:
    """(training rows, peaks) from an open warehouse connection."""
    from benchdb import sql

    return (
        sql.rows(con.execute(sql.load("perfmodel/training.sql"))),
        sql.rows(con.execute(sql.load("perfmodel/peaks.sql"))),
    )

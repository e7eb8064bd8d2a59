"""The performance model through one call each, the Python API of `benchdb calibrate` and `benchdb
predict`: a device's peaks measured and stored, the calibrations stored, a model's predicted
latency on calibrated hardware and how wrong each method has been; and each answer's forms for a
person (lines of text) and for scripts (JSON)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from benchdb.perfmodel.calibrate import Peak


def si(value: float | None, unit: str) -> str:
    """A figure in SI prefixes: ``1.2 TFLOP/s``, ``-`` when unknown."""
    if value is None:
        return "-"
    for factor, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= factor:
            return f"{value / factor:.3g} {prefix}{unit}"
    return f"{value:.3g} {unit}"


def _ms(v: float | None) -> str:
    return "-" if v is None else (f"{v * 1e3:.3g} ms" if v < 1 else f"{v:.3g} s")


# --- calibrate ---------------------------------------------------------------------------------


@dataclass
class Calibrated:
    """One calibration: its peaks, the stored record's ids and name, and the warehouse that holds it."""

    peaks: list[Peak]
    stored: dict
    path: Any

    def as_json(self) -> str:
        from benchdb.perfmodel.calibrate import as_dicts

        return json.dumps({**self.stored, "peaks": as_dicts(self.peaks)}, indent=1, default=str)

    def lines(self) -> list[str]:
        """For a person: a table of the peaks with their intervals, then where they went."""
        lines = [f"{'backend':<9}{'kind':<8}{'precision':<11}{'median':>14}  95% CI"]
        for p in self.peaks:
            ci = f"[{si(p.ci_low, p.unit)}, {si(p.ci_high, p.unit)}]" if p.ci_low is not None else "- (too few trials)"
            lines.append(f"{p.backend:<9}{p.kind:<8}{p.precision:<11}{si(p.value, p.unit):>14}  {ci}")
        s = self.stored
        lines.append(
            f"calibration {s['calibration_id']} added to hardware {s['hardware_name']} "
            f"({s['hardware_id']}, threads={s['threads']}) in {self.path}"
        )
        return lines


def calibrate(
    db: Any = None,
    device: str = "cpu",
    backends: tuple[str, ...] = ("numpy", "pytorch"),
    *,
    threads: int | None = None,
    trials: int = 10,
    trial_time: float = 0.2,
    matmul_n: int = 1024,
    stream_bytes: int = 128 * 2**20,
    progress: Callable[[str], None] | None = None,
) -> Calibrated:
    """Measure ``device``'s peak FLOP/s and memory bandwidth with ``backends`` (``trials`` of
    ``trial_time`` seconds each, matrices from order ``matmul_n``, arrays of ``stream_bytes``) and
    add them to warehouse ``db``'s hardware record (recalibrating adds, never overwrites)."""
    from benchdb.perfmodel import calibrate as cal
    from benchdb.warehouse import Warehouse

    wh = Warehouse(db)
    device, threads = cal.target(device, threads)
    settings = cal.Settings(
        trials=trials, trial_time=trial_time, matmul_n=matmul_n, stream_bytes=stream_bytes, threads=threads
    )
    peaks = cal.measure(device, tuple(backends), settings, progress=progress)
    return Calibrated(peaks, cal.store(wh, peaks, device, settings), wh.path)


def calibrations(db: Any = None) -> tuple[list[dict], Any]:
    """Every calibration stored in warehouse ``db``, oldest first, and the warehouse's path."""
    from benchdb.perfmodel import calibrate as cal
    from benchdb.warehouse import Warehouse

    wh = Warehouse(db)
    return cal.calibrations(wh), wh.path


def calibration_lines(rows: list[dict], path: Any) -> list[str]:
    """The stored calibrations (:func:`benchdb.perfmodel.calibrate.calibrations`), one line each."""
    if not rows:
        return [f"no calibrations in {path}; run `benchdb calibrate`"]
    return [
        f"{str(r['calibrated_at'])[:19]}  {r['hardware_name']} ({r['hardware_id']}) "
        f"threads={r['threads']}  {r['backend']:<8} {r['kind']:<6} {r['precision']:<5} "
        f"{si(r['value'], r['unit'])}"
        for r in rows
    ]


# --- predict -----------------------------------------------------------------------------------


@dataclass
class Predictions:
    """Each target's answer (the model on each matching calibrated hardware and setting), or why
    there is nothing to predict from (``reason``, no answers)."""

    answers: list[tuple[dict, Any]] = field(default_factory=list)
    reason: str = ""

    def answered(self) -> bool:
        """Whether any target has a prediction."""
        return any(a.value is not None for _, a in self.answers)


@dataclass
class Data:
    """What the model learns from: the warehouse's measured results and calibrated peaks."""

    rows: list[dict]
    peaks: list[dict]


def load(db: Any = None) -> Data:
    """Warehouse ``db``'s results and peaks, read once for :func:`predict` and :func:`evaluation`."""
    from benchdb.perfmodel import predict as pr
    from benchdb.warehouse import Warehouse

    with Warehouse(db).reading() as con:
        return Data(*pr.load(con))


def predict(data: Data, model: str, hardware: str, **narrow: Any) -> Predictions:
    """``model``'s latency and throughput on calibrated ``hardware`` (an id prefix or part of its
    name), from :func:`load`'s data, each with an 80 % interval and the method and data used;
    ``narrow``: threads, batch_size, shape, backend, precision, mode (default: each measured)."""
    from benchdb.perfmodel import predict as pr

    targets, reason = pr.targets(data.rows, data.peaks, model, hardware, **narrow)
    if not targets:
        return Predictions(reason=reason)
    learned = pr.Learned(data.rows)
    return Predictions([(t, pr.answer(data.rows, t, learned)) for t in targets])


def evaluation(data: Data) -> tuple[list[dict] | None, list[dict]]:
    """How wrong each method has been on :func:`load`'s data (grouped cross-validation): (the table,
    the results it used); results of under 3 models give no table (None)."""
    from benchdb.perfmodel import evaluate as ev

    usable = [r for r in data.rows if r["latency_s"]]
    if len({r["model_id"] for r in usable}) < 3:
        return None, usable
    return ev.evaluate(usable), usable


def predictions_json(found: Predictions) -> str:
    return json.dumps(
        [
            {
                "target": {k: v for k, v in t.items()},
                "method": a.method,
                "latency_s": a.value,
                "low_s": a.low,
                "high_s": a.high,
                "throughput_items_s": t["batch_size"] / a.value if a.value else None,
                "detail": a.detail,
                "reason": a.reason,
                "data": a.data,
            }
            for t, a in found.answers
        ],
        indent=1,
        default=str,
    )


def prediction_lines(found: Predictions) -> list[str]:
    """Each target's prediction for a person: latency and throughput with their interval, then the method."""
    lines = []
    for t, a in found.answers:
        head = (
            f"{t['model_id']} on {t['hardware_config']}, {t['backend']} {t['mode']} {t['precision']}, "
            f"batch {t['batch_size']}, {t['input_shape']}:"
        )
        if a.value is None:
            lines.append(f"{head} {a.reason}")
            continue
        interval = (
            f" [{_ms(a.low)}, {_ms(a.high)}] (80 % interval)"
            if a.low is not None
            else " (no interval: fewer than 5 cross-validated errors)"
        )
        tput = t["batch_size"] / a.value
        tput_iv = f" [{t['batch_size'] / a.high:.4g}, {t['batch_size'] / a.low:.4g}]" if a.low is not None else ""
        measured = f"; measured {_ms(t['measured'])}" if t.get("measured") else ""
        lines.append(f"{head} latency {_ms(a.value)}{interval}, throughput {tput:.4g}{tput_iv} items/s{measured}")
        lines.append(f"  method: {a.detail}")
    return lines

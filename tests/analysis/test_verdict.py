"""One series' verdict (benchdb.analysis.verdict.judge): a side's status, validity or sample count
decides it before any interval; otherwise the interval of the change is read against the threshold,
in the direction the unit is worse, and a difference that cannot be told from unknown run-to-run
noise is inconclusive with the remedy named. The history's noise widens the threshold."""

from __future__ import annotations

import numpy as np
import pytest

from benchdb.analysis.gate import MIN_SAMPLES, SideSamples
from benchdb.analysis.verdict import judge

pytestmark = pytest.mark.core


def _side(status="ok", validity="valid", reasons=(), unit="s", values=None, processes=None, error=None):
    return SideSamples(status, validity, tuple(reasons), error, unit, values if values is not None else [], processes)


def _procs(level: float, seed: int, k: int = 4, n: int = 200):
    rng = np.random.default_rng(seed)
    return [rng.normal(level, level * 0.002, n) for _ in range(k)]


def _verdict(b: SideSamples, c: SideSamples, **kw):
    return judge({}, b, c, threshold=0.05, **kw)


def test_status_validity_and_sample_count_decide_before_any_interval():
    ok = _side(values=np.ones(50))
    failed = _side("failed", None, error="boom")
    invalid = _side(validity="invalid", reasons=("noisy",), values=np.ones(50))
    got = {
        "broken": _verdict(ok, failed),
        "still_broken": _verdict(failed, failed),
        "fixed": _verdict(failed, invalid),
        "invalid": _verdict(ok, invalid),
        "few": _verdict(ok, _side(values=np.ones(MIN_SAMPLES - 1))),
        "none": _verdict(_side(), _side()),
    }
    assert {k: v.verdict for k, v in got.items()} == {
        "broken": "broken",
        "still_broken": "still_broken",
        "fixed": "fixed",
        "invalid": "inconclusive",
        "few": "inconclusive",
        "none": "inconclusive",
    }
    assert got["broken"].reason.startswith("candidate is failed") and got["broken"].reason.endswith(
        "the baseline was ok"
    )
    assert got["fixed"].reason.endswith("candidate is ok (invalid: noisy)")
    assert got["invalid"].reason == "candidate result is invalid: noisy"
    assert got["few"].reason == f"too few samples (50 vs {MIN_SAMPLES - 1}; need {MIN_SAMPLES})"
    assert got["none"].reason == "metric not measured on either side"
    assert got["broken"].change is None and got["broken"].base_median == 1.0


def test_an_interleaved_run_reads_its_interval_in_the_direction_the_unit_is_worse():
    base, slower = _procs(1.0, 1), _procs(1.2, 2)
    reg = _verdict(_side(processes=base), _side(processes=slower), interleaved=True)
    assert reg.verdict == "regressed" and reg.change == pytest.approx(0.2, abs=0.01) and reg.ci_low > 0.05
    assert reg.processes is None or reg.processes == (4, 4)
    tput = _verdict(_side(unit="items/s", processes=base), _side(unit="items/s", processes=slower), interleaved=True)
    assert tput.verdict == "improved"  # more items a second is better
    same = _verdict(_side(processes=base), _side(processes=_procs(1.0, 3)), interleaved=True)
    assert same.verdict == "unchanged" and "within +-5.0%" in same.reason


def test_unknown_run_to_run_noise_is_inconclusive_and_a_noisy_history_widens_the_threshold():
    base, slower = _procs(1.0, 1), _procs(1.2, 2)
    apart = _verdict(_side(processes=base), _side(processes=slower))  # separate invocations, no history
    assert apart.verdict == "inconclusive" and "`benchdb run --ab`" in apart.reason
    one = _verdict(_side(values=base[0]), _side(values=slower[0]), interleaved=True)
    assert one.verdict == "inconclusive" and "1 process on a side" in one.reason
    quiet = _verdict(_side(processes=base), _side(processes=slower), history=[1.0, 1.001, 0.999] * 3)
    assert quiet.verdict == "regressed" and quiet.threshold == 0.05 and quiet.noise is not None
    noisy = _verdict(
        _side(processes=base), _side(processes=slower), history=[1.0, 1.2, 0.85, 1.1, 0.9, 1.15, 0.8, 1.05]
    )
    assert noisy.threshold > 0.2 and noisy.verdict != "regressed"

"""What a measurement's outcome says: its validity under the conditions it was taken in, its rows
in the contract, and the outcome of a scenario that could not run."""

from __future__ import annotations

import traceback
from pathlib import Path
from typing import Any

from benchdb.harness.scenario import Conditions, Outcome, Row, Scenario
from benchdb.harness.timing import Measurement, StopRule


def measurement_rows(m: Measurement, metric: str = "latency_s") -> list[Row]:
    """Samples of a measurement as contract rows, plus its first call as its own metric."""
    rows: list[Row] = [(metric, "s", i, o, v) for i, (o, v) in enumerate(zip(m.offsets, m.samples, strict=True))]
    rows.append(("first_call_s", "s", 0, 0.0, m.first_call_s))
    return rows


def judge(m: Measurement, rule: StopRule, cond: Conditions, max_background_cpu: float) -> list[str]:
    """Validity reasons of a measurement taken under the given conditions.

    A busy machine (other processes used more than ``max_background_cpu`` percent CPU just
    before the scenario) is not fatal on its own: when the measurement converged (its 95 % CI
    of the median is within the stopping rule's ``target_ci``) the load did not spoil the
    interval, so the result stays valid and the busy machine is recorded as a warning on
    ``cond.warnings`` (an Outcome carries it in ``extra["warnings"]``). When it did not
    converge, the interval is too wide and the load is the likely cause: ``busy_machine`` is a
    validity reason and the result is invalid. Both texts start with ``busy_machine:`` and
    name the CPU use and the limit.
    """
    reasons = m.validity_reasons(rule)
    if cond.background_cpu_pct > max_background_cpu:
        busy = (
            f"busy_machine: other processes used {cond.background_cpu_pct:.0f}% CPU "
            f"before the scenario (limit {max_background_cpu:.0f}%)"
        )
        ci = m.ci_rel
        ci_text = "no CI" if ci is None else f"CI of the median +-{ci:.1%}"
        if _converged(m, rule):
            warning = f"{busy}; {ci_text} met the target +-{rule.target_ci:.1%}, so the result stays valid"
            if warning not in cond.warnings:
                cond.warnings.append(warning)
        else:
            reasons.append(f"{busy}; {ci_text} did not converge to the target +-{rule.target_ci:.1%}")
    return reasons


def _converged(m: Measurement, rule: StopRule) -> bool:
    """The stopping rule's convergence: the CI of the median within ``target_ci``."""
    ci = m.ci_rel
    return m.stop_reason == "converged" or (ci is not None and ci <= rule.target_ci)


def error_text(exc: BaseException) -> str:
    """One line naming the exception, plus the innermost frame for the record."""
    tb = traceback.extract_tb(exc.__traceback__)
    where = f" (at {Path(tb[-1].filename).name}:{tb[-1].lineno})" if tb else ""
    return f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}{where}"


def fail_all(scenarios: list[Scenario], info: dict[str, Any], exc: BaseException, on_start=None):
    """One outcome per scenario when the model itself could not be loaded."""
    from datetime import datetime, timezone

    for i, sc in enumerate(scenarios):
        if on_start:
            on_start(i)
        yield Outcome(
            sc,
            info,
            status=status_of(exc),
            error=f"model load failed: {error_text(exc)}",
            started_at=datetime.now(timezone.utc).isoformat(),
        )


def status_of(exc: BaseException) -> str:
    text = f"{type(exc).__name__} {exc}".lower()
    if isinstance(exc, MemoryError) or "out of memory" in text or "outofmemory" in text:
        return "oom"
    return "failed"

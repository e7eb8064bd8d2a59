"""What every runner shares: options, scenarios, outcomes, measurement conditions.

What a backend provides is :class:`benchdb.backends.api.Backend`; the options a run takes are
declared in :mod:`benchdb.backends.options` (core) and by each backend (its own).
"""

from __future__ import annotations

import os
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchdb.harness import hardware
from benchdb.harness.timing import Measurement, StopRule

#: metric, unit, iteration, t_offset_s, value; and the repeat (process) once repeats are merged
Row = tuple[str, str, int, float, float] | tuple[str, str, int, float, float, int]


@dataclass(frozen=True)
class RunOptions:
    backend: str
    models: tuple[str, ...]
    device: str = "cpu"
    batch_sizes: tuple[int, ...] = (1,)
    seq_lens: tuple[int, ...] = (128,)
    modes: tuple[str, ...] = ("eager",)
    precisions: tuple[str, ...] = ("fp32",)
    threads: int | None = None
    rule: StopRule = field(default_factory=StopRule)
    out: Path = Path("results")
    tags: tuple[str, ...] = ()
    #: Other processes' CPU use (percent of the whole machine) above which a result is invalid.
    max_background_cpu: float = 30.0
    task: str | None = None
    #: Tokens each generate call must produce (forced: no early end of sequence).
    gen_tokens: int = 16
    #: Run each model's scenarios in a child process with per-scenario timeouts.
    isolate: bool = True
    timeout_s: float = 900.0
    load_timeout_s: float = 900.0
    #: Check outputs against PyTorch fp32 without timing (exported-graph backends).
    verify_only: bool = False
    #: Processes each scenario is measured in, interleaved with the other scenarios' processes.
    repeats: int = 1
    #: Measurements running at the same time beside this run's (set by --parallel and --duet).
    co_runners: int | None = None
    #: How int8/int4 precisions are made (benchdb.backends.shared.quantize): None for the backend's default.
    quantization: str | None = None
    #: A sentence-similarity file (benchdb.backends.shared.similarity): each result records sts_spearman.
    sts: str | None = None
    #: The backend's own options (:attr:`benchdb.backends.api.BackendInfo.options`) that were set.
    backend_options: dict[str, Any] = field(default_factory=dict, hash=False)

    @property
    def thread_count(self) -> int:
        return self.threads or hardware.default_threads()

    def option(self, name: str) -> Any:
        """The value of one of the backend's own options (its declared default when not set)."""
        from benchdb.backends import options

        for opt in options.of_backend(self.backend):
            if opt.name == name:
                return options.value_of(self, opt)
        raise KeyError(f"backend {self.backend} declares no option {name!r}")

    @classmethod
    def from_config(cls, cfg: dict[str, Any], out: Path | str) -> RunOptions:
        """The options a run recorded with :meth:`config` (``benchdb run --resume``)."""
        tuples = ("models", "batch_sizes", "seq_lens", "modes", "precisions", "tags")
        known = {f for f in cls.__dataclass_fields__ if f not in ("rule", "out", "backend_options")}
        kwargs: dict[str, Any] = {k: (tuple(v) if k in tuples else v) for k, v in cfg.items() if k in known}
        rule = StopRule(**{k: v for k, v in (cfg.get("stop_rule") or {}).items()
                           if k in StopRule.__dataclass_fields__})
        extra = dict(cfg.get("backend_options") or {})
        if "providers" in cfg and cfg.get("backend") == "onnxruntime":    # recorded by benchdb 0.2
            extra.setdefault("providers", cfg["providers"])
        extra = {k: (tuple(v) if isinstance(v, list) else v) for k, v in extra.items()}
        return cls(**kwargs, rule=rule, out=Path(out), backend_options=extra)

    def config(self) -> dict[str, Any]:
        """The run's configuration as recorded in every file it writes."""
        return {"backend": self.backend, "models": list(self.models), "device": self.device,
                "batch_sizes": list(self.batch_sizes), "seq_lens": list(self.seq_lens),
                "modes": list(self.modes), "precisions": list(self.precisions),
                "threads": self.thread_count, "stop_rule": self.rule.__dict__.copy(),
                "max_background_cpu": self.max_background_cpu, "tags": list(self.tags),
                "task": self.task, "gen_tokens": self.gen_tokens, "isolate": self.isolate,
                "timeout_s": self.timeout_s, "load_timeout_s": self.load_timeout_s,
                "verify_only": self.verify_only, "repeats": self.repeats,
                **({"co_runners": self.co_runners} if self.co_runners else {}),
                **({"quantization": self.quantization} if self.quantization else {}),
                **({"sts": self.sts} if self.sts else {}),
                "backend_options": self.effective_backend_options()}

    def effective_backend_options(self) -> dict[str, Any]:
        """Every option the backend declares with its value in this run (JSON-plain)."""
        from benchdb.backends import options

        values = {**{o.name: options.value_of(self, o) for o in options.of_backend(self.backend)},
                  **self.backend_options}
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in sorted(values.items())}


@dataclass
class Scenario:
    model_id: str
    backend: str
    device: str
    mode: str
    precision: str
    batch_size: int
    input_shape: str
    #: The backend's typed option set (benchdb.schema.options) as a dict: part of the identity.
    options: dict[str, Any] = field(default_factory=dict)
    #: Everything else the runner needs or records (seq_len, task, torch device): not identity.
    settings: dict[str, Any] = field(default_factory=dict)

    def key(self) -> dict[str, Any]:
        """The scenario key fields plus its options (see benchdb.schema.identity)."""
        return {"model_id": self.model_id, "backend": self.backend, "device": self.device,
                "mode": self.mode, "precision": self.precision, "batch_size": self.batch_size,
                "input_shape": self.input_shape, "options": dict(self.options)}

    def label(self) -> str:
        threads = self.options.get("threads")
        method = self.options.get("quantization")
        precision = f"{self.precision}({method})" if method else self.precision
        return (f"{self.model_id} {self.backend}/{self.device} {self.mode} {precision} "
                f"bs={self.batch_size} {self.input_shape}" + (f" threads={threads}" if threads else ""))


@dataclass
class Conditions:
    """The state of the machine just before a scenario is measured.

    ``warnings``: what :func:`judge` found about these conditions that is recorded but does not
    make the result invalid (a busy machine under which the measurement still converged); an
    :class:`Outcome` built with these conditions carries them in ``extra["warnings"]``.
    """

    load_avg_1m: float | None
    background_cpu_pct: float
    threads: int
    warnings: list[str] = field(default_factory=list)

    @classmethod
    def now(cls, threads: int) -> Conditions:
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
        return cls(load, hardware.background_cpu_pct(), threads)


@dataclass
class Outcome:
    scenario: Scenario
    model: dict[str, Any]                      # contract metadata.model
    status: str = "ok"
    error: str | None = None
    rows: list[Row] = field(default_factory=list)
    validity_reasons: list[str] = field(default_factory=list)
    timing_method: str = "host_clock"
    stop_reason: str | None = None
    conditions: Conditions | None = None
    started_at: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    primary_metric: str = "latency_s"

    def __post_init__(self) -> None:
        # warnings judge() left on the conditions (busy machine, converged anyway) travel in extra
        warnings = self.conditions.warnings if self.conditions is not None else []
        if warnings:
            known = list(self.extra.get("warnings") or [])
            self.extra = {**self.extra, "warnings": list(dict.fromkeys(known + warnings))}

    @property
    def validity(self) -> str:
        """valid when it ran and no validity reason holds (warnings never invalidate)."""
        return "valid" if self.status == "ok" and not self.validity_reasons else "invalid"


def merge_repeats(outcomes: list[Outcome]) -> Outcome:
    """One outcome from the K processes a scenario was measured in: every sample tagged with its
    process (``repeat``), the first failure's status, every error and validity reason, and the
    busiest conditions seen."""
    from dataclasses import replace

    first = outcomes[0]
    failed = [o for o in outcomes if o.status != "ok"]
    errors = [f"repeat {r}: {o.error}" for r, o in enumerate(outcomes) if o.error]
    conds = [o.conditions for o in outcomes if o.conditions is not None]
    return replace(
        first, status=failed[0].status if failed else "ok", error="; ".join(errors) or None,
        rows=[(*row[:5], r) for r, o in enumerate(outcomes) for row in o.rows],
        validity_reasons=list(dict.fromkeys(why for o in outcomes for why in o.validity_reasons)),
        conditions=max(conds, key=lambda c: c.background_cpu_pct) if conds else None,
        extra={**{k: v for k, v in first.extra.items() if k != "placement"},
               "repeat_status": [o.status for o in outcomes],
               "warnings": list(dict.fromkeys(w for o in outcomes for w in o.extra.get("warnings") or [])),
               **({"placements": [o.extra.get("placement") for o in outcomes]}
                  if any("placement" in o.extra for o in outcomes) else {})})


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
        busy = (f"busy_machine: other processes used {cond.background_cpu_pct:.0f}% CPU "
                f"before the scenario (limit {max_background_cpu:.0f}%)")
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


def fail_all(scenarios: list[Scenario], info: dict[str, Any], exc: BaseException,
             on_start=None):
    """One outcome per scenario when the model itself could not be loaded."""
    from datetime import datetime, timezone

    for i, sc in enumerate(scenarios):
        if on_start:
            on_start(i)
        yield Outcome(sc, info, status=status_of(exc), error=f"model load failed: {error_text(exc)}",
                      started_at=datetime.now(timezone.utc).isoformat())


def status_of(exc: BaseException) -> str:
    text = f"{type(exc).__name__} {exc}".lower()
    if isinstance(exc, MemoryError) or "out of memory" in text or "outofmemory" in text:
        return "oom"
    return "failed"

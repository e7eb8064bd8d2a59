"""What every run shares: its options, its scenarios, their outcomes and the measurement conditions.

The harness owns these types; the backends build and fill them (a backend imports the harness,
never the reverse). What a backend provides is :class:`benchdb.backends.protocol.Backend`; the flags,
config keys and docs of the options are declared in :mod:`benchdb.backends.core_options` (core,
its defaults read from the fields here) and by each backend (its own).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchdb.harness import background, hardware
from benchdb.harness.timing import StopRule
from benchdb.schema.identity import SCENARIO_FIELDS

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
    #: The backend's own options (:attr:`benchdb.backends.protocol.BackendInfo.options`) that were set.
    backend_options: dict[str, Any] = field(default_factory=dict, hash=False)

    @property
    def thread_count(self) -> int:
        return self.threads or hardware.default_threads()

    @classmethod
    def from_config(cls, cfg: dict[str, Any], out: Path | str) -> RunOptions:
        """The options a run recorded with :meth:`config` (``benchdb run --resume``)."""
        tuples = ("models", "batch_sizes", "seq_lens", "modes", "precisions", "tags")
        known = {f for f in cls.__dataclass_fields__ if f not in ("rule", "out", "backend_options")}
        kwargs: dict[str, Any] = {k: (tuple(v) if k in tuples else v) for k, v in cfg.items() if k in known}
        rule = StopRule(**{k: v for k, v in (cfg.get("stop_rule") or {}).items() if k in StopRule.__dataclass_fields__})
        extra = dict(cfg.get("backend_options") or {})
        if "providers" in cfg and cfg.get("backend") == "onnxruntime":  # recorded by benchdb 0.2
            extra.setdefault("providers", cfg["providers"])
        extra = {k: (tuple(v) if isinstance(v, list) else v) for k, v in extra.items()}
        return cls(**kwargs, rule=rule, out=Path(out), backend_options=extra)


@dataclass
class Scenario:
    # the key's fields (identity.SCENARIO_FIELDS), in its order
    model_id: str
    backend: str
    device: str
    mode: str
    precision: str
    batch_size: int
    input_shape: str
    #: The backend's typed option set (benchdb.schema.optionsets) as a dict: part of the identity.
    options: dict[str, Any] = field(default_factory=dict)
    #: Everything else the runner needs or records (seq_len, task, torch device): not identity.
    settings: dict[str, Any] = field(default_factory=dict)

    def key(self) -> dict[str, Any]:
        """The scenario key fields plus its options (see benchdb.schema.identity)."""
        return {**{k: getattr(self, k) for k in SCENARIO_FIELDS}, "options": dict(self.options)}

    def label(self) -> str:
        threads = self.options.get("threads")
        method = self.options.get("quantization")
        precision = f"{self.precision}({method})" if method else self.precision
        return (
            f"{self.model_id} {self.backend}/{self.device} {self.mode} {precision} "
            f"bs={self.batch_size} {self.input_shape}" + (f" threads={threads}" if threads else "")
        )


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
        return cls(load, background.background_cpu_pct(), threads)


@dataclass
class Outcome:
    scenario: Scenario
    model: dict[str, Any]  # contract metadata.model
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
        first,
        status=failed[0].status if failed else "ok",
        error="; ".join(errors) or None,
        rows=[(*row[:5], r) for r, o in enumerate(outcomes) for row in o.rows],
        validity_reasons=list(dict.fromkeys(why for o in outcomes for why in o.validity_reasons)),
        conditions=max(conds, key=lambda c: c.background_cpu_pct) if conds else None,
        extra={
            **{k: v for k, v in first.extra.items() if k != "placement"},
            "repeat_status": [o.status for o in outcomes],
            "warnings": list(dict.fromkeys(w for o in outcomes for w in o.extra.get("warnings") or [])),
            **(
                {"placements": [o.extra.get("placement") for o in outcomes]}
                if any("placement" in o.extra for o in outcomes)
                else {}
            ),
            **_steady_state(outcomes),
        },
    )


def _steady_state(outcomes: list[Outcome]) -> dict:
    """A serving load point's steady-state window over its processes: found only where every process
    found its own (each process's window, in its own clock, is kept under ``processes``); else the
    first process's reason for none. One process's description stands as it is."""
    found = [o.extra.get("steady_state") for o in outcomes]
    if len(outcomes) < 2 or not any(found):
        return {}
    every = all(isinstance(d, dict) and d.get("found") for d in found)
    out = {k: v for k, v in (found[0] or {}).items() if k in ("method", "buckets")}
    out.update(found=every, processes=found)
    if not every:
        r, why = next((r, d) for r, d in enumerate(found) if not (isinstance(d, dict) and d.get("found")))
        out["reason"] = f"process {r}: " + (why.get("reason", "none found") if isinstance(why, dict) else "not sought")
    return {"steady_state": out}

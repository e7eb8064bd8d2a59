"""What `benchdb report` is asked for, as a notebook would ask it: the reports chosen and their
filters, checked together (an option that applies to a report not chosen is refused, naming it)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from benchdb.errors import BenchdbError
from benchdb.reports.build import ALL
from benchdb.reports.document import Filters

#: Every report a command line can name, in the order the refusal lists them.
CHOICES = (*ALL, "serving", "sources")


def request(
    kinds: Iterable[str] = (),
    *,
    every: bool = False,
    models: Iterable[str] = (),
    hardware: Iterable[str] = (),
    objective: str = "throughput",
    max_latency_ms: float | None = None,
    max_memory_mb: float | None = None,
    max_accuracy_drop: float | None = None,
    per: str | None = None,
    prices: Path | None = None,
    slo: str | None = None,
    cost_at: float | None = None,
    chassis: Path | None = None,
) -> tuple[list[str], Filters]:
    """The reports to build (``every``: all but serving and sources) and their :class:`Filters`.
    ``prices``: a prices file or folder (:func:`benchdb.reports.optimal.price_filters`); ``slo``:
    ``ttft:500ms,tpot:50ms`` (:func:`benchdb.reports.serving_sections.parse_slo`)."""
    from benchdb.reports.optimal import price_filters
    from benchdb.reports.serving_sections import parse_slo

    chosen = list(ALL) if every else list(dict.fromkeys(kinds))
    if not chosen:
        raise BenchdbError(f"choose a report: {', '.join('--' + k for k in CHOICES)} or --all")
    wants = {"--slo": (slo, "serving"), "--cost-at": (cost_at, "serving"), "--per": (per, "optimal-hardware")}
    for flag, (given, needs) in wants.items():
        if given is not None and needs not in chosen:
            raise BenchdbError(f"{flag} applies to --{needs}")
    if chassis is not None and cost_at is None:
        raise BenchdbError("--chassis applies to --serving --cost-at")
    side_by_side = cost_at is not None and chosen == ["serving"] and slo is None
    filters = Filters(
        models=tuple(models),
        hardware=tuple(hardware),
        objective=objective,
        max_latency_ms=max_latency_ms,
        max_memory_mb=max_memory_mb,
        max_accuracy_drop=max_accuracy_drop,
        **price_filters(prices, side_by_side=side_by_side),
        per=per,
        slo=parse_slo(slo),
        cost_at=cost_at,
        chassis=chassis,
    )
    return chosen, filters

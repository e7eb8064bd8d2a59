"""The dashboard's data: named views with the URL filters each takes, as JSON-ready rows.

A view is a SQL file ``benchdb/sql/dashboard/<name>.sql`` whose parameters are its filters
(``$model``, ``$hardware``, ...); an absent filter binds NULL (no restriction). Nothing else can
be asked: an unknown view or filter is refused, and the connection is read-only and sandboxed.
"""

from __future__ import annotations

import datetime as _dt
import math
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from benchdb import sql
from benchdb.errors import BenchdbError


@dataclass(frozen=True)
class View:
    name: str
    title: str
    #: URL parameters it takes; the required ones must be given.
    filters: tuple[str, ...] = ()
    required: tuple[str, ...] = ()
    #: The column each filter matches (the static site filters in the browser with it).
    columns: tuple[tuple[str, str], ...] = ()
    #: Filters that take one of a few values.
    choices: tuple[tuple[str, tuple[str, ...]], ...] = ()


VIEWS = {v.name: v for v in (
    View("runs", "Latest runs"),
    View("change_points", "Change points", ("model", "hardware"),
         columns=(("model", "model_id"), ("hardware", "hardware_name"))),
    View("flagged", "Flagged results", ("model", "hardware"),
         columns=(("model", "model_id"), ("hardware", "hardware_name"))),
    View("matrix", "Compatibility matrix", ("family",), columns=(("family", "family"),)),
    View("optimal", "Optimal hardware", ("model", "family", "batch", "precision", "objective", "max_latency_ms"),
         columns=(("model", "model_id"), ("family", "family"), ("batch", "batch_size"),
                  ("precision", "best_precision")),
         choices=(("objective", ("throughput", "latency", "energy")),)),
    View("results", "Latest results", ("model", "hardware", "backend", "family"),
         columns=(("model", "model_id"), ("hardware", "hardware_name"), ("backend", "backend"),
                  ("family", "family"))),
    View("trends", "History of a series", ("series",), ("series",), (("series", "series_id"),)),
    View("samples", "Raw samples of a result", ("result",), ("result",)),
    View("serving", "Serving load points", ("model", "hardware"),
         columns=(("model", "model_id"), ("hardware", "hardware_name"))),
    View("frontier", "Serving frontiers", ("model", "hardware"),
         columns=(("model", "model_id"), ("hardware", "hardware_name"))),
    View("slo", "Serving at an SLO", ("model", "ttft_ms", "tpot_ms", "interactivity"), ("ttft_ms",)),
    View("compare", "Compare two runs", ("base", "cand"), ("base", "cand")),
    View("environment", "How two runs' environments differ", ("base", "cand"), ("base", "cand")),
)}


#: Rows a page receives at most (a view's first rows in its order); ``truncated`` says there are more.
MAX_ROWS = 5000
#: The raw samples of one result can be many more, and a histogram wants them all.
MAX_SAMPLES = 200_000


class UnknownView(BenchdbError):
    """A request for a view or filter the dashboard does not have (HTTP 404 / 400)."""


def _plain(v: Any) -> Any:
    if isinstance(v, (_dt.datetime, _dt.date)):
        return v.isoformat()
    if isinstance(v, Decimal):
        return float(v)
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    return v


def query(con, name: str, params: dict[str, str], limit: int | None = None) -> dict[str, Any]:
    """``{"view", "title", "filters", "columns", "rows", "truncated"}`` of view ``name`` under
    ``params``: at most ``limit`` rows (default :data:`MAX_ROWS`, :data:`MAX_SAMPLES` for samples)."""
    view = VIEWS.get(name)
    if view is None:
        raise UnknownView(f"no dashboard view {name!r}; the views: {', '.join(VIEWS)}")
    extra = sorted(set(params) - set(view.filters))
    if extra:
        raise UnknownView(f"view {name} takes no filter {extra[0]!r} (it takes: {', '.join(view.filters) or 'none'})")
    missing = [f for f in view.required if not params.get(f)]
    if missing:
        raise UnknownView(f"view {name} needs {missing[0]}=...")
    for f, allowed in view.choices:
        if params.get(f) and params[f] not in allowed:
            raise UnknownView(f"view {name}: {f} is one of {', '.join(allowed)}, not {params[f]!r}")
    for f in ("batch", "max_latency_ms", "ttft_ms", "tpot_ms", "interactivity"):
        if params.get(f) and f in view.filters:
            try:
                float(params[f])
            except ValueError:
                raise UnknownView(f"view {name}: {f} must be a number, not {params[f]!r}") from None
    cur = con.execute(sql.load(f"dashboard/{name}.sql"), {f: (params.get(f) or None) for f in view.filters})
    columns = [d[0] for d in cur.description]
    limit = limit or (MAX_SAMPLES if name == "samples" else MAX_ROWS)
    rows = [[_plain(v) for v in row] for row in cur.fetchmany(limit + 1)]
    doc = {"view": name, "title": view.title, "filters": {f: params.get(f) for f in view.filters},
           "columns": columns, "rows": rows[:limit], "truncated": len(rows) > limit}
    if name == "samples" and rows:
        from benchdb.reports.build import reproduce_command

        doc["command"] = reproduce_command(dict(zip(columns, rows[0], strict=True)))
    return doc


def catalog() -> dict[str, Any]:
    """What the page needs to draw its navigation and filter fields."""
    return {"views": [{"name": v.name, "title": v.title, "filters": list(v.filters), "required": list(v.required),
                       "columns": dict(v.columns), "choices": {f: list(c) for f, c in v.choices}}
                      for v in VIEWS.values()]}

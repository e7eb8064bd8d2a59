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
    #: The column the static site's export groups by (the first column), left out of the rows when
    #: it repeats on every row of a page (the raw samples of one result).
    hidden: str | None = None
    #: Takes ?per=, a normalisation (reports.optimal.normalisations: the SQL's one list of them):
    #: "unpriced", those that need no price; "all", every one, and prices too, bound as lists:
    #: ?price:<accelerator>= USD per accelerator-hour, ?system_price:<system or hardware>= USD per hour.
    per: str | None = None


VIEWS = {
    v.name: v
    for v in (
        View("runs", "Runs"),
        View(
            "change_points",
            "Change points",
            ("model", "hardware"),
            columns=(("model", "model_id"), ("hardware", "hardware_name")),
        ),
        View(
            "flagged",
            "Flagged results",
            ("model", "hardware"),
            columns=(("model", "model_id"), ("hardware", "hardware_name")),
        ),
        View("matrix", "Compatibility matrix", ("family",), columns=(("family", "family"),)),
        View(
            "optimal",
            "Optimal hardware",
            ("model", "family", "batch", "precision", "objective", "per", "max_latency_ms"),
            columns=(
                ("model", "model_id"),
                ("family", "family"),
                ("batch", "batch_size"),
                ("precision", "best_precision"),
            ),
            choices=(("objective", ("throughput", "latency", "energy")),),
            per="unpriced",
        ),
        View(
            "results",
            "Latest results",
            ("model", "hardware", "backend", "family", "run"),
            columns=(
                ("model", "model_id"),
                ("hardware", "hardware_name"),
                ("backend", "backend"),
                ("family", "family"),
                ("run", "run_id"),
            ),
        ),
        View("trends", "History of a series", ("series",), ("series",), (("series", "series_id"),)),
        View("samples", "Raw samples of a result", ("result",), ("result",), hidden="result_id"),
        View(
            "serving",
            "Serving load points",
            ("model", "hardware", "ttft_ms", "tpot_ms"),
            columns=(("model", "model_id"), ("hardware", "hardware_name")),
        ),
        View(
            "frontier",
            "Serving frontiers",
            ("model", "hardware"),
            columns=(("model", "model_id"), ("hardware", "hardware_name")),
        ),
        View(
            "systems",
            "Systems side by side",
            ("model", "scenario", "in", "out", "per"),
            columns=(("model", "model_id"), ("scenario", "scenario"), ("in", "in_tokens"), ("out", "out_tokens")),
            per="all",
        ),
        View("slo", "Serving at an SLO", ("model", "ttft_ms", "tpot_ms", "interactivity"), ("ttft_ms",)),
        View("sources", "Sources"),
        View("compare", "Compare two runs", ("base", "cand"), ("base", "cand")),
        View("compare_samples", "Samples of two runs, per scenario", ("base", "cand"), ("base", "cand")),
        View("environment", "How two runs' environments differ", ("base", "cand"), ("base", "cand")),
    )
}


#: The views the page asks with no filter (its navigation: every view without a required filter), the
#: home page's first (optimal, change_points, matrix), then the slowest to compute: the server computes
#: their answers of each new snapshot before anyone asks (:func:`benchdb.web.server.warm_jobs`).
_FIRST = ("optimal", "change_points", "matrix", "results")
DEFAULT_VIEWS = _FIRST + tuple(v.name for v in VIEWS.values() if not v.required and v.name not in _FIRST)

#: Rows a page receives at most (a view's first rows in its order); ``truncated`` says there are more.
MAX_ROWS = 5000
#: The raw samples of one result can be many more, and a histogram wants them all.
MAX_SAMPLES = 200_000
SAMPLE_VIEWS = ("samples", "compare_samples")


class UnknownView(BenchdbError):
    """A request for a view or filter the dashboard does not have (HTTP 404 / 400)."""


#: The URL filters that price a system (USD per hour), each followed by a name: an accelerator's price per
#: accelerator-hour, and a system's (or hardware's) per hour; bound as the SQL's lists of names and prices.
PRICES = {"price:": "accelerator_price", "system_price:": "price"}


def choices(view: View) -> dict[str, tuple[str, ...]]:
    """The values each filter of ``view`` that takes one of a few takes; ?per='s are the normalisations."""
    out = dict(view.choices)
    if view.per is not None:
        from benchdb.reports.optimal import normalisations

        out["per"] = tuple(n.name for n in normalisations() if view.per == "all" or not n.priced)
    return out


def _prices(view: View, params: dict[str, str]) -> dict[str, list]:
    """The SQL parameters of the prices among ``params`` (none unless ``view`` takes every normalisation)."""
    if view.per != "all":
        return {}
    bound: dict[str, list] = {f"{name}_{part}": [] for name in PRICES.values() for part in ("names", "values")}
    for key, text in params.items():
        prefix = next((p for p in PRICES if key.startswith(p)), None)
        if prefix is None or not text:
            continue
        try:
            usd = float(text)
        except ValueError:
            usd = math.nan
        if not (math.isfinite(usd) and usd > 0):
            raise UnknownView(f"view {view.name}: {key} is a price, a positive number of USD per hour, not {text!r}")
        bound[f"{PRICES[prefix]}_names"].append(key.removeprefix(prefix))
        bound[f"{PRICES[prefix]}_values"].append(usd)
    return bound


def plain(v: Any) -> Any:
    if isinstance(v, _dt.datetime) and v.tzinfo is None:  # the warehouse keeps UTC (macros.sql): say so
        return v.replace(tzinfo=_dt.timezone.utc).isoformat()
    if isinstance(v, (_dt.datetime, _dt.date)):
        return v.isoformat()
    if isinstance(v, Decimal):
        return float(v)
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    return v


#: Column types whose Python values are JSON as they are: :func:`plain` is skipped for them (a view of
#: thousands of rows spent most of its answer in it). Any other type, or a name an older DuckDB gives, goes
#: through it.
_AS_IS = frozenset(
    ("VARCHAR", "BOOLEAN", "TINYINT", "SMALLINT", "INTEGER", "BIGINT", "UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT")
)


def _finite(v: Any) -> Any:
    """A DOUBLE's value as :func:`plain` gives it: NaN and the infinities (no JSON) as None."""
    return v if v is None or -math.inf < v < math.inf else None


def _once_each(fn):
    """``fn`` computed once per distinct value: a view's timestamps repeat (each result of a run has its
    start), and an ISO string is the costliest of :func:`plain`'s conversions."""
    seen: dict = {}

    def once(v):
        out = seen.get(v, seen)
        if out is seen:
            out = seen[v] = fn(v)
        return out

    return once


def _plain_row(description, skip: int):
    """A function of a row: it without its first ``skip`` columns, every value JSON-ready (:func:`plain`)."""
    convert = [
        (
            i - skip,
            _finite
            if str(d[1]) in ("DOUBLE", "FLOAT")
            else _once_each(plain)
            if str(d[1]) in ("TIMESTAMP", "DATE")  # (two aware datetimes of one instant are equal: not kept)
            else plain,
        )
        for i, d in enumerate(description)
        if i >= skip and str(d[1]) not in _AS_IS
    ]

    def row_of(row) -> list:
        values = list(row[skip:])
        for i, fn in convert:
            values[i] = fn(values[i])
        return values

    return row_of


def checked(name: str, params: dict[str, str]) -> tuple[View, dict[str, Any]]:
    """View ``name`` and the SQL parameters of ``params``; :class:`UnknownView` for a view or filter
    it does not have, a required filter missing or a value it does not take."""
    view = VIEWS.get(name)
    if view is None:
        raise UnknownView(f"no dashboard view {name!r}; the views: {', '.join(VIEWS)}")
    priced = _prices(view, params)
    extra = sorted(
        f for f in set(params) - set(view.filters) if not (view.per == "all" and f.startswith(tuple(PRICES)))
    )
    if extra:
        raise UnknownView(f"view {name} takes no filter {extra[0]!r} (it takes: {', '.join(view.filters) or 'none'})")
    missing = [f for f in view.required if not params.get(f)]
    if missing:
        raise UnknownView(f"view {name} needs {missing[0]}=...")
    for f, allowed in choices(view).items():
        if params.get(f) and params[f] not in allowed:
            raise UnknownView(f"view {name}: {f} is one of {', '.join(allowed)}, not {params[f]!r}")
    for f in ("batch", "max_latency_ms", "ttft_ms", "tpot_ms", "interactivity", "in", "out"):
        if params.get(f) and f in view.filters:
            try:
                float(params[f])
            except ValueError:
                raise UnknownView(f"view {name}: {f} must be a number, not {params[f]!r}") from None
    return view, {**{f: (params.get(f) or None) for f in view.filters}, **priced}


def query(con, name: str, params: dict[str, str], limit: int | None = None) -> dict[str, Any]:
    """``{"view", "title", "filters", "columns", "rows", "truncated"}`` of view ``name`` under
    ``params``: at most ``limit`` rows (default :data:`MAX_ROWS`, :data:`MAX_SAMPLES` for samples)."""
    view, bound = checked(name, params)
    cur = con.execute(sql.load(f"dashboard/{name}.sql"), bound)
    columns = [d[0] for d in cur.description]
    limit = limit or (MAX_SAMPLES if name in SAMPLE_VIEWS else MAX_ROWS)
    skip = 1 if view.hidden else 0
    row_of = _plain_row(cur.description, skip)
    rows = [row_of(row) for row in cur.fetchmany(limit + 1)]
    columns = columns[skip:]
    doc = {
        "view": name,
        "title": view.title,
        "filters": {f: params.get(f) for f in view.filters},
        "columns": columns,
        "rows": rows[:limit],
        "truncated": len(rows) > limit,
    }
    if name == "samples":
        stats = con.execute(sql.load("dashboard/sample_statistics.sql"), {"result": params["result"]})
        stat_columns = [d[0] for d in stats.description]
        doc.update(about_result(stat_columns, [[plain(v) for v in row] for row in stats.fetchall()]))
    return doc


def about_result(columns: list[str], rows: list[list]) -> dict[str, Any]:
    """The samples page's header for one result, from its sample_statistics rows: ``statistics``
    per metric and ``command``, the `benchdb run` line that measures it again."""
    if not rows:
        return {"statistics": None, "command": None}
    from benchdb.backends.run_command import reproduce_command

    command = reproduce_command(dict(zip(columns, rows[0], strict=True)))
    shown = [i for i, c in enumerate(columns) if c not in ("options_json", "run_config")]
    return {
        "statistics": {"columns": [columns[i] for i in shown], "rows": [[row[i] for i in shown] for row in rows]},
        "command": command,
    }


def grouped(con, name: str, key: str, limit: int | None = None):
    """Every group of view ``name`` with its required filter left open (the static site's export):
    yields (value of column ``key``, the view's document for that value) in one pass over one
    query, rather than one query per value. The view's SQL orders its rows by ``key``."""
    view = VIEWS[name]
    bound = dict.fromkeys(view.filters)
    cur = con.execute(sql.load(f"dashboard/{name}.sql"), bound)
    columns = [d[0] for d in cur.description]
    at = columns.index(key)
    skip = 1 if view.hidden else 0
    limit = limit or (MAX_SAMPLES if name in SAMPLE_VIEWS else MAX_ROWS)
    current, more = None, False
    rows: list[list] = []
    row_of = _plain_row(cur.description, skip)

    def doc():
        return {
            "view": name,
            "title": view.title,
            "filters": {**bound, view.required[0]: current},
            "columns": columns[skip:],
            "rows": rows,
            "truncated": more,
        }

    while batch := cur.fetchmany(10_000):
        for row in batch:
            if row[at] != current:
                if rows:
                    yield current, doc()
                current, rows, more = row[at], [], False
            if len(rows) < limit:
                rows.append(row_of(row))
            else:
                more = True
    if rows:
        yield current, doc()


def catalog() -> dict[str, Any]:
    """What the page needs to draw its navigation and filter fields, and the normalisations (the
    SQL's, in the order offered: the first is the default) with how the page says each."""
    from benchdb.reports.optimal import normalisations

    labels = {n.name: n.label for n in normalisations()}
    return {
        "views": [
            {
                "name": v.name,
                "title": v.title,
                "filters": list(v.filters),
                "required": list(v.required),
                "columns": dict(v.columns),
                "choices": {f: list(c) for f, c in choices(v).items()},
                "choice_labels": {"per": {c: labels[c] for c in choices(v)["per"]}} if v.per else {},
            }
            for v in VIEWS.values()
        ],
        "normalisations": [{"name": n.name, "label": n.label, "priced": n.priced} for n in normalisations()],
    }

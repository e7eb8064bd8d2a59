"""A view's answer as the server sends it: the JSON bytes of :func:`benchdb.web.views.query`'s document.

Most of a large view's answer went to Python rather than SQL: DuckDB handing over every value as a
Python object, :func:`benchdb.web.views.plain` on some of them, and ``json.dumps`` writing them again
(10,000 results' latest view: about 35 ms of 60). So DuckDB writes each row as a JSON array itself
(``json_array``), and Python only joins the rows. Each column's type says how: a DOUBLE that is not
finite becomes null (as :func:`plain` has it), a FLOAT is written as the DOUBLE Python would read, a
TIMESTAMP is the ISO string :func:`plain` gives (UTC, ``+00:00``), a DATE its ISO date; the other types
it takes are JSON as they are. Numbers are written in DuckDB's shortest form (``0.00001`` where Python
writes ``1e-05``): the same value once parsed. A view with a column of any other type (a list, a
decimal), or whose rows carry a hidden column (the raw samples), is written by :func:`query` in Python.
"""

from __future__ import annotations

import json
from typing import Any

from benchdb import sql
from benchdb.web import views as api

_INTEGERS = ("TINYINT", "SMALLINT", "INTEGER", "BIGINT", "UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT")
#: How DuckDB writes a value of each type it writes for the page ({c}: the column).
_AS_JSON = {
    "VARCHAR": "{c}",
    "BOOLEAN": "{c}",
    **dict.fromkeys(_INTEGERS, "{c}"),
    "DOUBLE": "CASE WHEN isfinite({c}) THEN {c} END",
    "FLOAT": "CASE WHEN isfinite({c}) THEN CAST({c} AS DOUBLE) END",
    # microsecond(): the second's microseconds too; Python's isoformat leaves a whole second's out
    "TIMESTAMP": "CASE WHEN microsecond({c}) % 1000000 = 0 THEN strftime({c}, '%Y-%m-%dT%H:%M:%S+00:00') "
    "ELSE strftime({c}, '%Y-%m-%dT%H:%M:%S.%f+00:00') END",
    "DATE": "strftime({c}, '%Y-%m-%d')",
}
#: Each view's columns (name, type), learnt once per process: a view's SQL gives the same types whatever
#: its filters' values. None: a view :func:`query` writes in Python.
_columns: dict[str, list[tuple[str, str]] | None] = {}


def answer(con, name: str, params: dict[str, str]) -> bytes:
    """The JSON of ``views.query(con, name, params)``: the same document once parsed."""
    view, bound = api.checked(name, params)
    text = sql.load(f"dashboard/{name}.sql")
    if name not in _columns:
        _columns[name] = _learn(con, view, text, bound)
    columns = _columns[name]
    if columns is None:
        return json.dumps(api.query(con, name, params), allow_nan=False).encode()
    limit = api.MAX_SAMPLES if name in api.SAMPLE_VIEWS else api.MAX_ROWS
    # a projection and a LIMIT keep the order the view's own ORDER BY gave its rows
    rows = con.execute(f"SELECT {row_json(columns)} FROM ({text}) q LIMIT {limit + 1}", bound)
    got = [r for (r,) in rows.fetchall()]
    head: dict[str, Any] = {
        "view": name,
        "title": view.title,
        "filters": {f: params.get(f) for f in view.filters},
        "columns": [c for c, _ in columns],
    }
    body = json.dumps(head, allow_nan=False)[:-1]
    truncated = json.dumps(len(got) > limit)
    return f'{body}, "rows": [{",".join(got[:limit])}], "truncated": {truncated}}}'.encode()


def row_json(columns: list[tuple[str, str]]) -> str:
    """The SQL of one row of ``q`` as JSON text, from its columns (name, type), each written as
    :func:`benchdb.web.views.plain` and ``json.dumps`` would write it."""
    values = ", ".join(_AS_JSON[kind].format(c=f"q.{sql.ident(column)}") for column, kind in columns)
    return f"CAST(json_array({values}) AS VARCHAR)"


def _learn(con, view: api.View, text: str, bound: dict) -> list[tuple[str, str]] | None:
    """The view's columns and their types (no row read), or None when DuckDB cannot write one of them."""
    if view.hidden is not None or view.name == "samples":
        return None
    # DESCRIBE names DuckDB's own types (a cursor's description gives DB-API names before DuckDB 1.3)
    columns = [(row[0], str(row[1])) for row in con.execute(f"DESCRIBE SELECT * FROM ({text}) q", bound).fetchall()]
    return columns if all(kind in _AS_JSON for _, kind in columns) else None

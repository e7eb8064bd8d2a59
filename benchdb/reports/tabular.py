"""Rows as a terminal table, CSV or JSON: one place for every command that prints rows (``render``:
values as stored, for ``benchdb query``), and tables for people (``for_people``: headings in words,
quantities in one unit per column by :mod:`benchdb.formatting`)."""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Sequence
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from benchdb import formatting
from benchdb.errors import printable
from benchdb.text import prose

#: The forms a table of rows is written in (`benchdb query --format`).
TABLE_FORMATS = ("table", "csv", "json")


def _cell(v: Any) -> str:
    return printable(_text(v)).replace("\n", "\\n").replace("\t", "\\t")


def _text(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        if math.isnan(v) or math.isinf(v):
            return str(v)
        # six significant digits (never fewer than the integer part's), never exponent notation
        decimals = 0 if v == 0 else max(0, 5 - math.floor(math.log10(abs(v))))
        text = f"{v:.{decimals}f}"
        return text.rstrip("0").rstrip(".") if "." in text else text
    if isinstance(v, (datetime, date)):
        return v.isoformat(sep=" ") if isinstance(v, datetime) else v.isoformat()
    if isinstance(v, (list, tuple)):
        return ", ".join(_text(x) for x in v)
    return str(v)


def _json_default(v: Any) -> Any:
    if isinstance(v, (datetime, date)):
        return v.isoformat()
    if isinstance(v, Decimal):
        return float(v)
    if isinstance(v, bytes):
        return v.hex()
    return str(v)


def render(columns: Sequence[str], rows: Sequence[Sequence[Any]], fmt: str = "table") -> str:
    if fmt == "json":
        return json.dumps([dict(zip(columns, r, strict=True)) for r in rows], default=_json_default, indent=1)
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(columns)
        w.writerows([[("" if v is None else v) for v in r] for r in rows])
        return buf.getvalue().rstrip("\n")
    cells = [[_cell(v) for v in r] for r in rows]
    widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(columns)]
    numeric = [
        all(isinstance(r[i], (int, float)) or r[i] is None for r in rows) and bool(rows) for i in range(len(columns))
    ]

    def line(vals: Sequence[str]) -> str:
        return "  ".join(
            v.rjust(w) if num else v.ljust(w) for v, w, num in zip(vals, widths, numeric, strict=True)
        ).rstrip()

    out = [line(columns), "  ".join("-" * w for w in widths)]
    out += [line(r) for r in cells]
    out.append(f"({len(rows)} row{'s' if len(rows) != 1 else ''})")
    return "\n".join(out)


def for_people(columns: Sequence[tuple[str, str, str]], rows: Sequence[dict[str, Any]]) -> str:
    """A terminal table for people: per column (heading, key, kind), kind one of text, int, rate,
    time (seconds) or time_ms (milliseconds, as a run's summary holds them); each quantity column in
    one unit with the decimals that tell its values apart; nothing cut."""

    def value(r: dict[str, Any], key: str, kind: str) -> Any:
        v = r.get(key)
        return v / 1e3 if kind == "time_ms" and isinstance(v, (int, float)) else v

    cells: list[list[str]] = [[] for _ in rows]
    right = []
    for _head, key, kind in columns:
        values = [value(r, key, kind) for r in rows]
        show = (
            formatting.time_scale(values)
            if kind in ("time", "time_ms")
            else formatting.rate_scale(values)
            if kind == "rate"
            else None
        )
        for out, v in zip(cells, values, strict=True):
            out.append(show(v) if show else "" if v is None else prose(_cell(v)))
        right.append(kind != "text")
    heads = [c[0] for c in columns]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(heads)]

    def line(vals: Sequence[str]) -> str:
        return "  ".join(v.rjust(w) if r else v.ljust(w) for v, w, r in zip(vals, widths, right, strict=True)).rstrip()

    return "\n".join(
        [
            line(heads),
            "  ".join("-" * w for w in widths),
            *(line(r) for r in cells),
            f"({len(rows)} row{'s' if len(rows) != 1 else ''})",
        ]
    )


#: A run's summary table: what each scenario gave (benchdb.plan.driver.summary_rows).
RUN_SUMMARY = (
    ("scenario", "scenario", "text"),
    ("status", "status", "text"),
    ("median", "median_ms", "time_ms"),
    ("p90", "p90_ms", "time_ms"),
    ("items/s", "items_per_s", "rate"),
    ("n", "n", "int"),
    ("note", "note", "text"),
)


#: An A/B run's summary: each side's status and median, and their ratio
AB_SUMMARY = (
    ("scenario", "scenario", "text"),
    ("base", "base", "text"),
    ("base median", "base_median", "time_ms"),
    ("cand", "cand", "text"),
    ("cand median", "cand_median", "time_ms"),
    ("cand/base", "ratio", "text"),
    ("note", "note", "text"),
)


def run_summary(rows: Sequence[dict[str, Any]]) -> str:
    return for_people(RUN_SUMMARY, rows)

"""Rows as a terminal table, CSV or JSON: one place for every command that prints rows."""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Sequence
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from benchdb.errors import printable

FORMATS = ("table", "csv", "json")


def _cell(v: Any) -> str:
    return printable(_text(v)).replace("\n", "\\n").replace("\t", "\\t")


def _text(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        if math.isnan(v) or math.isinf(v):
            return str(v)
        return f"{v:.6g}"
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
    numeric = [all(isinstance(r[i], (int, float)) or r[i] is None for r in rows) and bool(rows)
               for i in range(len(columns))]

    def line(vals: Sequence[str]) -> str:
        return "  ".join(v.rjust(w) if num else v.ljust(w)
                         for v, w, num in zip(vals, widths, numeric, strict=True)).rstrip()

    out = [line(columns), "  ".join("-" * w for w in widths)]
    out += [line(r) for r in cells]
    out.append(f"({len(rows)} row{'s' if len(rows) != 1 else ''})")
    return "\n".join(out)

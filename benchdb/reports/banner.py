"""The banner at the top of a report when results were measured on a busy machine."""

from __future__ import annotations

import json
import re

from benchdb import sql
from benchdb.reports.document import Banner, Column, Filters
from benchdb.startup import duckdb
from benchdb.text import plural

#: Flagged results a banner lists (the text counts them all).
BANNER_ROWS = 20


def busy_banner(con: duckdb.DuckDBPyConnection, f: Filters) -> Banner | None:
    """How many of the latest timing attempts (under the filters) were measured while other
    processes used more CPU than the run allowed, how many of them are invalid (their interval did
    not converge), the CPU range, and what to do; None when no result was flagged."""
    flagged = sql.rows(con.execute(sql.load("reports/busy.sql"), f.params()))
    if not flagged:
        return None
    row = con.execute(sql.load("reports/busy_total.sql"), f.params()).fetchone()
    assert row is not None  # count(*) without GROUP BY: always one row
    total = row[0]
    limits: set[float] = set()
    for r in flagged:
        reasons = [t for t in (r["validity_reasons"] or []) if t.startswith("busy_machine:")]
        r["busy_invalid"] = bool(reasons)
        texts = reasons + [str(t) for t in json.loads(r["warnings_json"] or "[]") if str(t).startswith("busy_machine:")]
        for t in texts:
            limits.update(float(x) for x in re.findall(r"\(limit (\d+(?:\.\d+)?)%\)", t))
        tail = texts[0].split("; ", 1)[1] if texts and "; " in texts[0] else ""
        r["verdict"] = (
            "invalid: did not converge"
            if r["busy_invalid"]
            else "valid (warning)"
            if r["validity"] == "valid" and r["status"] == "ok"
            else "invalid: " + "; ".join(t.split(":")[0] for t in r["validity_reasons"] or [])
        )
        r["detail"] = tail
    flagged.sort(key=lambda r: not r["busy_invalid"])  # stable: busiest first within each
    n, invalid = len(flagged), sum(1 for r in flagged if r["busy_invalid"])
    cpus = [r["background_cpu_pct"] for r in flagged if r["background_cpu_pct"] is not None]
    lo, hi = (min(cpus), max(cpus)) if cpus else (None, None)
    used = (
        "more CPU than allowed"
        if lo is None or hi is None
        else f"{lo:.0f} % CPU"
        if round(lo) == round(hi)
        else f"{lo:.0f}-{hi:.0f} % CPU"
    )
    limit = ""
    if limits:
        lims = sorted(limits)
        limit = f" (limit {lims[0]:g} %)" if len(lims) == 1 else f" (limits {lims[0]:g}-{lims[-1]:g} %)"
    text = (
        f"{n} of {plural(total, 'latest timing result')} {'was' if n == 1 else 'were'} measured while other processes "
        f"used {used}{limit}; "
    )
    if invalid == 0:
        text += (
            "it converged (its confidence interval met the target), so it stays valid, with a warning. "
            if n == 1
            else "all of them converged (their confidence intervals met the target), so they stay valid, "
            "with a warning. "
        )
    elif invalid == n:
        text += (
            f"{'it is' if n == 1 else 'all of them are'} invalid because "
            f"{'its' if n == 1 else 'their'} confidence interval did not converge to the target. "
        )
    else:
        text += (
            f"{invalid} of them {'is' if invalid == 1 else 'are'} invalid because "
            f"{'its' if invalid == 1 else 'their'} confidence interval did not converge to the target; "
            + (
                "the other one converged and stays valid, with a warning. "
                if n - invalid == 1
                else f"the other {n - invalid} converged and stay valid, with a warning. "
            )
        )
    text += (
        "Close other programs and measure again, or raise the limit "
        "(`benchdb run --max-background-cpu`, `max_background_cpu` in a config file's settings)."
    )
    columns = [
        Column("model", "model_id"),
        Column("hardware", "hardware_name"),
        Column("backend", "backend"),
        Column("mode", "mode"),
        Column("precision", "precision"),
        Column("batch", "batch_size", "int"),
        Column("input", "input_shape"),
        Column("background CPU", "background_cpu_pct", "points"),
        Column("validity", "verdict"),
        Column("why", "detail"),
    ]
    line = (  # one line of a 120-column terminal after "> **Busy machine:** "
        f"{n} of {plural(total, 'latest timing result')} ran while other processes used {used}{limit}; "
        + (f"{invalid} invalid." if invalid else "still valid, with a warning.")
    )
    return Banner(
        text, columns, flagged[:BANNER_ROWS], n, total, invalid, lo, hi, more=max(0, n - BANNER_ROWS), line=line
    )

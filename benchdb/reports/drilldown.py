"""The HTML report's detail: its environment rows, the results behind its figures (at most DRILL_MAX),
each with its samples per process, and the `benchdb run` command that measures its scenario again."""

from __future__ import annotations

import json
from typing import Any

from benchdb.reports.document import Report, section_rows

#: Results drilled into (HTML).
DRILL_MAX = 60


def environment_row(r: dict) -> dict:
    try:
        software = json.loads(r.pop("software_json") or "{}")
    except ValueError:
        software = {}
    flat = software if isinstance(software, dict) else {}
    r["software"] = ", ".join(f"{k} {v}" for k, v in sorted(flat.items()) if not isinstance(v, (dict, list)))
    cores = "/".join(str(x) for x in (r.get("cores_physical"), r.get("cores_logical")) if x is not None)
    r["cpu"] = " ".join(x for x in (r.get("cpu_model") or "", f"({cores} cores)" if cores else "") if x) or None
    r["platform"] = " / ".join(x for x in (r.get("os"), r.get("arch")) if x) or None
    return r


def traced_ids(rep: Report) -> list[str]:
    """The results behind the report's figures, in the order they appear (at most DRILL_MAX)."""
    ids: list[str] = []
    for s in rep.sections:
        for r in s.rows:
            for key in ("best_result_id", "runner_up_result_id", "result_id"):
                if r.get(key) is not None and s.name != "trends":
                    ids.append(r[key])
    ids += [r["result_id"] for r in rep.measured_invalid]
    return list(dict.fromkeys(ids))[:DRILL_MAX]


def drilldown(con, ids: list[str]) -> list[dict[str, Any]]:
    """Each result in ``ids``: its row (drilldown.sql), its samples per process (samples.sql) and the
    `benchdb run` command that measures its scenario again."""
    if not ids:
        return []
    from benchdb.backends.run_command import reproduce_command  # the run options' declarations: only here

    rows = section_rows(con, "drilldown", {"ids": ids})[1]
    per: dict[str, list[list[float]]] = {}
    for s in section_rows(con, "samples", {"ids": ids, "metric": None})[1]:
        per.setdefault(s["result_id"], []).append(s["vals"])
    for r in rows:
        r["samples"] = per.get(r["result_id"], [])
        r["command"] = reproduce_command(r)
    return rows

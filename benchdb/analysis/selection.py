"""What a gate's selectors pick (``--baseline`` / ``--candidate`` of ``benchdb check``): the
selector syntax, the latest result of each series among the picked runs, and the words that
describe a selection when two of them share nothing to compare."""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from benchdb import sql
from benchdb.errors import BenchdbError
from benchdb.schema.identity import SCENARIO_FIELDS
from benchdb.schema.optionsets import env_differences
from benchdb.startup import duckdb

#: What a comparison shows of its scenario (the series id, from benchdb.schema.identity, matches them).
SHOWN = (*SCENARIO_FIELDS, "options", "hardware_id")


@dataclass
class Selection:
    """What one selector picked: the latest result of each series among its results."""

    selector: str
    results: dict[str, dict] = field(default_factory=dict)  # series_id -> result row

    def runs(self) -> list[dict]:
        """The runs behind the picked results, oldest first, with how many results each gave."""
        count = Counter(r["run_id"] for r in self.results.values())
        first: dict[str, dict] = {}
        for r in self.results.values():
            first.setdefault(r["run_id"], r)
        return [
            {
                "run_id": rid,
                "started_at": r["run_started_at"],
                "git_commit": r["git_commit"],
                "host": r["host"],
                "results": count[rid],
            }
            for rid, r in sorted(first.items(), key=lambda kv: (kv[1]["run_started_at"], kv[0]))
        ]

    def by_hardware_backend(self) -> list[dict]:
        """Series per (hardware, backend); ``label`` is the hardware name, with its id prefix where
        two hardware ids share a name."""
        count = Counter((r["hardware_name"], r["hardware_id"], r["backend"]) for r in self.results.values())
        labels = hardware_labels(self)
        return [
            {"hardware_name": n, "hardware_id": h, "label": labels[h], "backend": b, "results": k}
            for (n, h, b), k in sorted(count.items())
        ]


_TIME = re.compile(r"^(\d{4}-\d{2}-\d{2}(?:[ T][\d:]+)?)?\.\.(\d{4}-\d{2}-\d{2}(?:[ T][\d:]+)?)?$")


def resolve_selector(con: duckdb.DuckDBPyConnection, selector: str) -> list[str]:
    """Result ids picked by: latest, latest~N (per hardware and backend: the results of its newest
    run, or of the N-th run before it), run:<id prefix> (or a bare id prefix), commit:<sha prefix>,
    tag:<tag>, time:<from>..<to> (ISO dates, either side open)."""
    sel = selector.strip()
    params: dict[str, Any] = {"kind": "latest", "n": 0, "value": "", "t0": None, "t1": None}
    if sel == "latest" or sel.startswith("latest~"):
        try:
            n = int(sel[7:]) if sel != "latest" else 0
        except ValueError:
            n = -1
        if n < 0:
            raise BenchdbError(
                f"selector {selector!r}: use latest or latest~N (N runs before the latest on each hardware and backend)"
            )
        params["n"] = n
    else:
        kind, _, value = sel.partition(":") if ":" in sel else ("run", "", sel)
        params.update(kind=kind, value=value)
        if kind == "time":
            m = _TIME.match(value)
            if not m:
                raise BenchdbError(f"selector {selector!r}: time ranges look like time:2026-11-01..2026-11-08")
            params["t0"] = m.group(1) or "1970-01-01"
            params["t1"] = (
                m.group(2) or (datetime.now(timezone.utc).replace(tzinfo=None) + timedelta(days=1)).isoformat()
            )
        elif kind not in ("run", "commit", "tag"):
            raise BenchdbError(
                f"selector {selector!r}: use latest, latest~N, run:ID, commit:SHA, tag:NAME or time:FROM..TO"
            )
        if not value and kind != "time":
            raise BenchdbError(f"selector {selector!r} has nothing after '{kind}:'")
    ids = [r[0] for r in con.execute(sql.load("queries/gate_select.sql"), params).fetchall()]
    if not ids:
        more = f" (no hardware and backend has {params['n'] + 1} runs)" if params["kind"] == "latest" else ""
        raise BenchdbError(
            f"selector {selector!r} matches no run in the warehouse{more}; list runs with "
            '`benchdb query "SELECT run_id, started_at, host, git_commit, tags FROM runs '
            'ORDER BY started_at"`'
        )
    return ids


def load(con: duckdb.DuckDBPyConnection, selector: str, ids: list[str]) -> Selection:
    """The latest result of each series among ``ids`` (which ``selector`` resolved to)."""
    rows = sql.rows(con.execute(sql.load("queries/gate_results.sql"), {"results": ids}))
    for r in rows:
        opts = r["options"]
        r["options"] = json.loads(opts) if isinstance(opts, str) else (opts or {})
    return Selection(selector, {r["series_id"]: r for r in rows})


def shown_order(rows: dict[str, dict]):
    """Sort series ids by what a reader sees of them (model, backend, device, ...)."""
    return lambda k: tuple(str(rows[k][f]) for f in SHOWN)


def hardware_labels(*sides: Selection) -> dict[str, str]:
    """Hardware id -> a readable label: its name, with the id prefix where two share a name."""
    names: dict[str, str] = {}
    for s in sides:
        for r in s.results.values():
            names[r["hardware_id"]] = r["hardware_name"]
    dup = {n for n, k in Counter(names.values()).items() if k > 1}
    return {h: f"{n} [{h[:8]}]" if n in dup else n for h, n in names.items()}


def _describe(side: Selection, labels: dict[str, str]) -> str:
    groups = side.by_hardware_backend()
    parts = ", ".join(f"{g['results']} on {labels[g['hardware_id']]}/{g['backend']}" for g in groups)
    runs = len(side.runs())
    return f"{len(side.results)} series from {runs} run(s): {parts}"


def check_metric(con: duckdb.DuckDBPyConnection, metric: str, base: Selection, cand: Selection) -> None:
    """Fail on a --metric that neither side measured, naming the ones they did."""
    ids = [r["result_id"] for s in (base, cand) for r in s.results.values()]
    have = [m for (m,) in con.execute(sql.load("queries/gate_metrics.sql"), {"ids": ids}).fetchall()]
    if metric in have:
        return
    # a metric without statistics may still have raw samples: only then is the samples scan needed
    if con.execute(sql.load("queries/gate_metric_sampled.sql"), {"ids": ids, "metric": metric}).fetchall()[0][0]:
        return
    if have:
        raise BenchdbError(
            f"--metric {metric!r} is not measured in the results of --baseline {base.selector!r} "
            f"or --candidate {cand.selector!r}; metrics there: {', '.join(have)}"
        )


#: A scenario on its hardware, its options left out: two sides alike in this but not in their series
#: measured with different options.
_LOOSE = (*SCENARIO_FIELDS, "hardware_id")


def _options_split(base: Selection, cand: Selection) -> str:
    """Where the two sides measured the same scenarios on the same hardware with different options
    (e.g. --ab-env on a variable a user bench declares in ENV, which is part of identity): which."""

    def loose(r: dict) -> tuple:
        return tuple(map(str, map(r.get, _LOOSE)))

    cands = {loose(r): r for r in cand.results.values()}
    differ: dict[str, set[str]] = {}
    for r in base.results.values():
        other = cands.get(loose(r))
        if other is None:
            continue
        bo, co = r.get("options") or {}, other.get("options") or {}
        for k in sorted(set(bo) | set(co)):
            if bo.get(k) != co.get(k):
                names = differ.setdefault(k, set())
                if k == "env":  # a user bench's declared ENV: name the variables, not their values
                    names.update(env_differences(bo.get(k), co.get(k)))
    if not differ:
        return ""
    parts = [f"{k} ({', '.join(sorted(v))})" if v else k for k, v in sorted(differ.items())]
    hint = (
        " -- a variable a bench declares in ENV is part of a series' identity, so --ab-env on it makes "
        "base and cand different series"
        if "env" in differ
        else ""
    )
    return f": the same scenarios were measured with different options: {', '.join(parts)}{hint}"


#: What the two deployments of one interleaved A/B (`benchdb run --ab-url`) differ in besides their
#: scenarios: the hardware the server ran on, the device its system is named by, and how the server
#: used it (scenario options).
DEPLOYMENT_FIELDS = ("device", "hardware_id")
DEPLOYMENT_OPTIONS = ("server_hardware", "accelerators", "parallelism")


def _deployment_key(r: dict) -> tuple:
    options = {k: v for k, v in (r.get("options") or {}).items() if k not in DEPLOYMENT_OPTIONS}
    return (
        *(str(r.get(k)) for k in SHOWN if k not in (*DEPLOYMENT_FIELDS, "options")),
        json.dumps(options, sort_keys=True),
    )


def deployment_pairs(base: Selection, cand: Selection) -> dict[str, str]:
    """Candidate series id -> baseline series id, for the series found on one side only that are the
    same scenario on the other side but for the deployment (hardware, device, the server's use of
    it), one to one. For the two halves of one interleaved A/B of two endpoints, whose scenarios are
    by construction the same and whose hardware is what is compared."""

    def by_key(side: Selection, other: Selection) -> dict[tuple, list[str]]:
        out: dict[tuple, list[str]] = {}
        for k, r in side.results.items():
            if k not in other.results:
                out.setdefault(_deployment_key(r), []).append(k)
        return out

    bases, cands = by_key(base, cand), by_key(cand, base)
    return {c[0]: bases[key][0] for key, c in cands.items() if len(c) == 1 and len(bases.get(key, ())) == 1}


def nothing_shared(base: Selection, cand: Selection) -> BenchdbError:
    """The error of two selections that share no series: what each holds, and why they may differ."""
    labels = hardware_labels(base, cand)
    split = _options_split(base, cand)
    return BenchdbError(
        f"nothing to compare: no series is on both sides{split}. --baseline {base.selector!r} has "
        f"{_describe(base, labels)}; --candidate {cand.selector!r} has {_describe(cand, labels)}. "
        "A series is one scenario (model, shape, backend, device, mode, precision, options) on one "
        "hardware: choose selectors whose runs measured the same scenarios on the same hardware "
        '(latest~1 vs latest, tag:, commit: or run:; list runs with `benchdb query "SELECT run_id, '
        'started_at, host, git_commit, tags FROM runs ORDER BY started_at"`)'
    )

"""`benchdb site --out DIR`: the dashboard as static files any static host serves.

The page and its scripts, and ``data/<view>.json`` for each view without a required filter (every
row: the page filters in the browser, by the columns :data:`benchdb.dashboard.api.VIEWS` names),
``data/trends/<series>.json`` for every series and ``data/samples/<result>.json`` for every
result (each written from one pass over one query, not a query per file), and
``data/{compare,compare_samples,environment}/<base>__<cand>.json`` for each run against the one
before it. Written into a
staging folder and moved into place, so a failed export leaves the previous site whole.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from benchdb import sql
from benchdb.dashboard import api, assets
from benchdb.dashboard.server import STATIC, page

#: A static page filters in the browser: every row, not the server's first ones.
ALL = 10**9
#: Views of two runs, written for each run against the one before it.
PAIR_VIEWS = ("compare", "compare_samples", "environment")


def build(db: str | None, out: str | os.PathLike) -> dict[str, int]:
    """Write the site; returns {view: rows or files written}."""
    from benchdb.warehouse import Warehouse

    out = Path(out)
    stage = out.with_name(f".{out.name}.staging")
    shutil.rmtree(stage, ignore_errors=True)
    for folder in ("trends", "samples", *PAIR_VIEWS):
        (stage / "data" / folder).mkdir(parents=True)
    (stage / "static" / "vendor").mkdir(parents=True)
    site = _Site(stage)
    try:
        with Warehouse(db).reading() as con:
            docs = site.views(con)
            site.histories(con, docs)
            site.samples(con)
            pairs = [(rec["previous_run_id"], rec["run_id"]) for rec in _records(docs["runs"])
                     if rec["previous_run_id"]]
            for base, cand in pairs:       # each run against the one before it, as the runs page links them
                for name in PAIR_VIEWS:
                    site.write(f"data/{name}/{base}__{cand}.json", api.query(con, name, {"base": base, "cand": cand}))
            site.counts["compare"] = len(pairs)
        site.write("data/views.json", api.catalog())
        (stage / "index.html").write_bytes(page("static"))
        for f in STATIC.iterdir():
            if f.is_file() and f.name != "index.html":
                shutil.copy2(f, stage / "static" / f.name)
        for name, f in assets.ensure().items():     # the charting library, checked, beside the page
            shutil.copy2(f, stage / "static" / "vendor" / name)
        old = out.with_name(f".{out.name}.old")
        shutil.rmtree(old, ignore_errors=True)
        if out.exists():
            out.rename(old)
        stage.rename(out)
        shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    return site.counts


def _records(doc) -> list[dict]:
    return [dict(zip(doc["columns"], row, strict=True)) for row in doc["rows"]]


class _Site:
    """The data files of a site being staged, and how many of each were written."""

    def __init__(self, stage: Path):
        self.stage = stage
        self.counts: dict[str, int] = {}

    def write(self, rel: str, doc) -> None:
        (self.stage / rel).write_text(json.dumps(doc, allow_nan=False), encoding="utf-8")

    def count(self, kind: str) -> None:
        self.counts[kind] = self.counts.get(kind, 0) + 1

    def views(self, con) -> dict[str, dict]:
        """Every view without a required filter, every row (the page filters them); optimal hardware
        once per objective."""
        docs = {}
        for name, view in api.VIEWS.items():
            if view.required or view.choices:
                continue
            docs[name] = api.query(con, name, {}, limit=ALL)
            self.write(f"data/{name}.json", docs[name])
            self.counts[name] = len(docs[name]["rows"])
        for objective in dict(api.VIEWS["optimal"].choices)["objective"]:
            best = api.query(con, "optimal", {"objective": objective}, limit=ALL)
            self.write(f"data/optimal__{objective}.json", best)
            self.counts[f"optimal ({objective})"] = len(best["rows"])
        return docs

    def histories(self, con, docs: dict[str, dict]) -> None:
        for series, doc in api.grouped(con, "trends", "series_id"):
            self.write(f"data/trends/{series}.json", doc)
            self.count("trends")
        linked = {rec["series_id"] for name in ("flagged", "change_points") for rec in _records(docs[name])}
        for series in linked:        # a series with no valid result has no history: an empty page, not a 404
            if not (self.stage / "data" / "trends" / f"{series}.json").exists():
                self.write(f"data/trends/{series}.json", api.query(con, "trends", {"series": series}))

    def samples(self, con) -> None:
        stats = con.execute(sql.load("dashboard/sample_statistics.sql"), {"result": None})
        columns = [d[0] for d in stats.description]
        about: dict[str, list] = {}
        for row in stats.fetchall():
            about.setdefault(row[0], []).append([api.plain(v) for v in row])
        for result, doc in api.grouped(con, "samples", "result_id"):
            self.write(f"data/samples/{result}.json", {**doc, **api.about_result(columns, about.pop(result, []))})
            self.count("samples")
        for result, rows in about.items():        # results without samples (failed, summary-only)
            self.write(f"data/samples/{result}.json", {
                "view": "samples", "title": api.VIEWS["samples"].title, "filters": {"result": result},
                "columns": [], "rows": [], "truncated": False, **api.about_result(columns, rows)})
            self.count("samples")

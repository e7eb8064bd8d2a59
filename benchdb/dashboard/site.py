"""`benchdb site --out DIR`: the dashboard as static files any static host serves.

The page and its scripts, and ``data/<view>.json`` for each view without a required filter (every
row: the page filters in the browser, by the columns :data:`benchdb.dashboard.api.VIEWS` names),
``data/trends/<series>.json`` for every series of the results view, and
``data/samples/<result>.json`` for every result in it, and ``data/compare/`` and
``data/environment/<base>__<cand>.json`` for each run against the one before it. Written into a
staging folder and moved into place, so a failed export leaves the previous site whole.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from benchdb.dashboard import api, assets
from benchdb.dashboard.server import STATIC, page

#: A static page filters in the browser: every row, not the server's first ones.
ALL = 10**9


def build(db: str | None, out: str | os.PathLike) -> dict[str, int]:
    """Write the site; returns {view: rows written}."""
    from benchdb.warehouse import Warehouse

    out = Path(out)
    stage = out.with_name(f".{out.name}.staging")
    shutil.rmtree(stage, ignore_errors=True)
    (stage / "data" / "trends").mkdir(parents=True)
    (stage / "data" / "samples").mkdir(parents=True)
    (stage / "data" / "compare").mkdir(parents=True)
    (stage / "data" / "environment").mkdir(parents=True)
    (stage / "static").mkdir()
    counts: dict[str, int] = {}

    def write(rel: str, doc) -> None:
        (stage / rel).write_text(json.dumps(doc, allow_nan=False), encoding="utf-8")

    def records(doc) -> list[dict]:
        return [dict(zip(doc["columns"], row, strict=True)) for row in doc["rows"]]

    try:
        with Warehouse(db).reading() as con:
            docs = {}
            for name, view in api.VIEWS.items():
                if view.required or view.choices:     # optimal hardware: below, once per objective
                    continue
                docs[name] = api.query(con, name, {}, limit=ALL)      # the page filters them all
                write(f"data/{name}.json", docs[name])
                counts[name] = len(docs[name]["rows"])
            for objective in dict(api.VIEWS["optimal"].choices)["objective"]:
                best = api.query(con, "optimal", {"objective": objective}, limit=ALL)
                write(f"data/optimal__{objective}.json", best)
                counts[f"optimal ({objective})"] = len(best["rows"])
            latest = records(docs["results"])
            for rec in latest:
                write(f"data/trends/{rec['series_id']}.json", api.query(con, "trends", {"series": rec["series_id"]}))
                write(f"data/samples/{rec['result_id']}.json", api.query(con, "samples", {"result": rec["result_id"]}))
            counts["trends"] = counts["samples"] = len(latest)
            pairs = [(rec["previous_run_id"], rec["run_id"]) for rec in records(docs["runs"]) if rec["previous_run_id"]]
            for base, cand in pairs:       # each run against the one before it, as the runs page links them
                for name in ("compare", "environment"):
                    write(f"data/{name}/{base}__{cand}.json", api.query(con, name, {"base": base, "cand": cand}))
            counts["compare"] = len(pairs)
        write("data/views.json", api.catalog())
        (stage / "index.html").write_bytes(page("static"))
        for f in STATIC.iterdir():
            if f.is_file() and f.name != "index.html":
                shutil.copy2(f, stage / "static" / f.name)
        (stage / "static" / "vendor").mkdir()
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
    return counts

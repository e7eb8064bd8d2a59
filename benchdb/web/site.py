"""`benchdb site --out DIR`: the dashboard as static files any static host serves.

The page and its scripts, and ``data/<view>.json`` for each view without a required filter (every
row: the page filters in the browser, by the columns :data:`benchdb.web.views.VIEWS` names), every
series' history in ``data/trends/<k>.json`` and every result's raw samples in
``data/samples/<k>.bin``, many to a file (:mod:`benchdb.web.packed`: a static host takes a few
hundred files, not one per result; the samples quantised to 16 bits), and
``data/{compare,compare_samples,environment}/<base>__<cand>.json`` for each run against the one
before it. Written into a staging folder and moved into place, so a failed export leaves the
previous site whole.

A site replaces only a site: ``--out`` must be new, empty, or a folder an earlier ``benchdb site`` wrote
whose files are all its own (:data:`MARKER` lists them), never a folder holding a warehouse. Every
file is named from a safe identifier (:func:`benchdb.paths.is_safe_name`) and checked to lie inside
the site; a page whose name from the data is not one (a run id ingested before ingest checked them)
is left out and counted.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

from benchdb import sql
from benchdb.errors import BenchdbError
from benchdb.file_lists import MARKER, all_files, listed_files
from benchdb.paths import inside, is_safe_name
from benchdb.reports.optimal import normalisations
from benchdb.web import assets, packed
from benchdb.web import views as api
from benchdb.web.server import STATIC, page

#: A static page filters in the browser: every row, not the server's first ones.
ALL = 10**9
#: Views of two runs, written for each run against the one before it.
PAIR_VIEWS = ("compare", "compare_samples", "environment")
#: The first bytes of a DuckDB database file hold this at offset 8.
DUCKDB_MAGIC = b"DUCK"


def build(db: str | None, out: str | os.PathLike) -> dict[str, int]:
    """Write the site; returns {view: rows or files written}."""
    from benchdb.warehouse import Warehouse

    out = Path(os.path.abspath(out))
    if not out.name:
        raise BenchdbError(f"--out {out}: give a folder of its own for the site, not the root")
    check_replaceable(out, Warehouse(db).path)
    # the staging and the replaced folders have names of their own (mkdtemp), so no folder of the
    # user's beside --out is ever taken for one and removed
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        stage = Path(tempfile.mkdtemp(prefix=f".{out.name}.staging-", dir=out.parent))
        umask = os.umask(0)
        os.umask(umask)
        stage.chmod(0o777 & ~umask)  # a folder as mkdir makes it (mkdtemp's is private)
    except OSError as exc:
        raise BenchdbError(
            f"--out {out}: cannot write there ({exc.strerror or exc}); give a folder you can write"
        ) from None
    site = _Site(stage)
    try:
        for folder in ("trends", "samples", *PAIR_VIEWS):
            (stage / "data" / folder).mkdir(parents=True)
        (stage / "static" / "vendor").mkdir(parents=True)
        with Warehouse(db).reading() as con:
            docs = site.views(con)
            shards = {"trends": site.histories(con), "samples": site.samples(con)}
            pairs = [
                (rec["previous_run_id"], rec["run_id"]) for rec in _records(docs["runs"]) if rec["previous_run_id"]
            ]
            site.count("compare", 0)
            for base, cand in pairs:  # each run against the one before it, as the runs page links them
                if not site.named(base, cand):
                    continue
                for name in PAIR_VIEWS:
                    site.write(f"data/{name}/{base}__{cand}.json", api.query(con, name, {"base": base, "cand": cand}))
                site.count("compare")
        # where the page finds a series or a result: the file its id hashes to (packed.shard_of)
        site.write("data/views.json", {**api.catalog(), "site": {"shards": shards, "samples": packed.FORMAT}})
        (stage / "index.html").write_bytes(page("static"))
        for f in STATIC.iterdir():
            if f.is_file() and f.name != "index.html":
                shutil.copy2(f, stage / "static" / f.name)
        for name, f in assets.ensure().items():  # the charting library, checked, beside the page
            shutil.copy2(f, stage / "static" / "vendor" / name)
        (stage / MARKER).write_text(
            json.dumps({"format": "benchdb-site", "version": 1, "files": all_files(stage)}, indent=1), encoding="utf-8"
        )
        old = None
        if out.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
            out.rename(old / "site")
        stage.rename(out)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    return site.counts


def check_replaceable(out: Path, db: Path) -> None:
    """Refuse an ``--out`` the site may not replace: a file or link, a folder holding a warehouse,
    a non-empty folder that is not an earlier site, or an earlier site holding files it did not write."""
    if out.is_symlink() or (out.exists() and not out.is_dir()):
        raise BenchdbError(f"--out {out} is a file or a link, not a folder: give a folder for the site")
    db = db.resolve()
    samples = db.with_name(db.name + ".samples")
    target = out.resolve()
    if target in db.parents or target == samples or samples in target.parents:
        raise BenchdbError(
            f"--out {out} holds the warehouse {db}: `benchdb site` replaces its folder whole, "
            "so give it a folder of its own (e.g. --out site)"
        )
    if not out.exists():
        return
    own = set(listed_files(out) or [])
    found = all_files(out)
    duck = [rel for rel in found if rel not in own and _is_duckdb(out / rel)]
    if duck:
        raise BenchdbError(
            f"--out {out} holds a warehouse ({duck[0]}): `benchdb site` never replaces it; "
            "give the site a folder of its own"
        )
    if not (out / MARKER).is_file() and any(out.iterdir()):
        raise BenchdbError(
            f"--out {out} is not empty and not a site `benchdb site` wrote (no {MARKER}): give a new or empty folder"
        )
    foreign = [rel for rel in found if rel not in own and rel != MARKER]
    if foreign:
        shown = ", ".join(foreign[:3]) + (f" and {len(foreign) - 3} more" if len(foreign) > 3 else "")
        raise BenchdbError(
            f"--out {out} holds files the earlier `benchdb site` did not write ({shown}): "
            "move them out, or give another folder"
        )


def _is_duckdb(path: Path) -> bool:
    try:
        with open(path, "rb") as fh:
            return fh.read(12)[8:12] == DUCKDB_MAGIC
    except OSError:
        return False


def _records(doc) -> list[dict]:
    return [dict(zip(doc["columns"], row, strict=True)) for row in doc["rows"]]


class _Site:
    """The data files of a site being staged, and how many of each were written."""

    def __init__(self, stage: Path):
        self.stage = stage
        self.counts: dict[str, int] = {}

    def write(self, rel: str, doc) -> None:
        path = inside(self.stage, self.stage / rel)
        Path(path).write_text(json.dumps(doc, allow_nan=False), encoding="utf-8")

    def count(self, kind: str, n: int = 1) -> None:
        self.counts[kind] = self.counts.get(kind, 0) + n

    def named(self, *names) -> bool:
        """Whether names from the data can name a file; a page that cannot is left out, counted."""
        if all(is_safe_name(n) for n in names):
            return True
        self.count("left out (unsafe names)")
        return False

    def views(self, con) -> dict[str, dict]:
        """Every view without a required filter, every row (the page filters them); optimal hardware
        once per objective (a throughput also once per other normalisation that needs no price), the
        systems side by side once per normalisation (a priced one with no prices: the page computes
        none, the server does)."""
        docs = {}
        for name, view in api.VIEWS.items():
            if view.required or api.choices(view):
                continue
            docs[name] = api.query(con, name, {}, limit=ALL)
            self.write(f"data/{name}.json", docs[name])
            self.counts[name] = len(docs[name]["rows"])
        default = normalisations()[0].name
        for objective in api.choices(api.VIEWS["optimal"])["objective"]:
            # the other objectives are not divided
            for per in api.choices(api.VIEWS["optimal"])["per"] if objective == "throughput" else (default,):
                best = api.query(con, "optimal", {"objective": objective, "per": per}, limit=ALL)
                suffix = "" if per == default else f"__{per}"
                self.write(f"data/optimal__{objective}{suffix}.json", best)
                self.counts[f"optimal ({objective}{'' if per == default else ', per ' + per})"] = len(best["rows"])
        for per in api.choices(api.VIEWS["systems"])["per"]:
            side = api.query(con, "systems", {"per": per}, limit=ALL)
            self.write(f"data/systems{'' if per == default else '__' + per}.json", side)
            self.counts[f"systems{'' if per == default else ' (per ' + per + ')'}"] = len(side["rows"])
        return docs

    def histories(self, con) -> int:
        """Every series' history, many to a file; a series absent from its file has no valid result (the
        page shows an empty history, as the server does). Returns the number of files."""
        (rows,) = con.execute(sql.load("dashboard/site_trend_rows.sql")).fetchone()
        groups = api.grouped(con, "trends", "series_id")
        shards, series = packed.write_trends(groups, self.stage / "data" / "trends", rows)
        self.count("trends", series)
        return shards

    def samples(self, con) -> int:
        """Every result's samples, many to a file, with what it is (its statistics and the command that
        measures it again), also a result without samples (failed, summary-only). Returns the number
        of files."""
        stats = con.execute(sql.load("dashboard/sample_statistics.sql"), {"result": None})
        columns = [d[0] for d in stats.description]
        by_result: dict[str, list] = {}
        for row in stats.fetchall():
            by_result.setdefault(row[0], []).append([api.plain(v) for v in row])
        about = {rid: api.about_result(columns, rows) for rid, rows in by_result.items()}
        shards = packed.write_samples(con, self.stage / "data" / "samples", about, api.MAX_SAMPLES)
        self.count("samples", len(about))
        return shards

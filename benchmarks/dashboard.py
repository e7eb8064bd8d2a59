"""Dashboard data requests on a large warehouse, against a SELECT * of the same view in the same run.

    python benchmarks/dashboard.py [--models 50] [--hardware 8] [--samples-per-result 1000] [--requests 40]
                                   [--writes 8] [--settle-s 1.0] [--db PATH] [--small]

Builds the synthetic warehouse of benchmarks/report.py (default 10,000 results, 10M samples, each
value its own: dashboard_fixture_samples.sql; --db: at PATH, or reuses the one there), starts
`benchdb dashboard`'s server in this process and times each view's API request over HTTP, p50 and p95
over --requests; beside each, the baseline: a new read-only connection fetching every row of the
warehouse view the page's query reads (results_latest, trends, samples, ...) on a connection
configured as the server's (read-only, sandboxed), in the same run. Each request computed (as the
first after a write is: BENCHDB_NO_CACHE=1), then answered as a repeated one is (the answer kept
with the snapshot). Then each view the page opens unfiltered as the first request after a write is, as a
user sees it: a write (a write session that changes nothing, published as ingest publishes: a new
snapshot), --settle-s for the server to notice it (it looks every 0.25 s) and compute those views'
answers in its warm-up thread, then the request, --writes times, beside the same request computed.
All of it twice: on a quiet machine, then with a CPU hog (a process spinning on one core) beside it.
Goals: every p95 < 100 ms quiet, < 150 ms busy.
Then `benchdb site` of the same warehouse: build time, files and size (goals: < 15 s, < 2,000 files,
< 100 MiB), against, in the same run, the raw samples written as the site wrote them before they were
packed (one JSON file per result); and each page's data request from a plain static server (fetch and
parse the file the page reads; the packed samples decoded as the page decodes them). Goal: every
p95 < 150 ms.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

from report import build

from benchdb.store import database, snapshot
from benchdb.web import views as api
from benchdb.web.server import make_server


def interleaved(a, b, n: int) -> tuple[list[float], list[float]]:
    """Seconds of ``n`` calls of ``a`` and of ``b``, alternating: both see the same machine state."""
    ta, tb = [], []
    for _ in range(n):
        for fn, times in ((a, ta), (b, tb)):
            t = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t)
    return ta, tb


def p95(xs: list[float]) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(0.95 * (len(xs) - 1)))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", type=int, default=50)
    ap.add_argument("--hardware", type=int, default=8)
    ap.add_argument("--samples-per-result", type=int, default=1000)
    ap.add_argument("--requests", type=int, default=40)
    ap.add_argument("--writes", type=int, default=8, help="writes per view for the first request after a write")
    ap.add_argument(
        "--settle-s", type=float, default=1.0, help="seconds between a write and the first request after it"
    )
    ap.add_argument("--db", help="the warehouse: reused when it exists, else built there (default: a new folder)")
    ap.add_argument(
        "--small",
        action="store_true",
        help="4 models, 2 hardware, 10 samples a result, 1 request, 1 write, 0.3 s settle: checks the script works",
    )
    args = ap.parse_args()
    if args.small:
        # each request's baseline opens a connection of its own (30-150 ms here): 1 request each
        args.models, args.hardware, args.samples_per_result, args.requests, args.writes = 4, 2, 10, 1, 1
        # each default view waits --settle-s after its write, in both phases: 1 s made the check a minute long
        args.settle_s = 0.3
    if args.db:
        db = Path(args.db)
    else:
        db = Path(tempfile.mkdtemp(prefix="benchdb-dashboard-")) / "big.duckdb"
    if db.exists():
        print(f"warehouse: {db} (reused)")
    else:
        t = time.perf_counter()
        n_results, n_samples = build(
            db, args.models, args.hardware, args.samples_per_result, "dashboard_fixture_samples.sql"
        )
        print(f"warehouse: {n_results:,} results, {n_samples:,} samples, built in {time.perf_counter() - t:.1f} s")

    srv = make_server(str(db), "127.0.0.1", 0)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{srv.server_address[1]}/api"
    # (request, the warehouse view its query reads: the baseline selects all of it)
    cases = {
        "runs": ("runs", "SELECT * FROM runs"),
        "matrix": ("matrix", "SELECT * FROM compat_matrix"),
        "optimal": ("optimal", "SELECT * FROM optimal_hardware"),
        "optimal?objective=latency&max_latency_ms=5": (
            "optimal?objective=latency&max_latency_ms=5",
            "SELECT * FROM optimal_hardware",
        ),
        "frontier": ("frontier", "SELECT * FROM serving_frontier"),
        "slo?ttft_ms=1000&tpot_ms=100": ("slo?ttft_ms=1000&tpot_ms=100", "SELECT * FROM serving_points"),
        "flagged": ("flagged", "SELECT * FROM results_current"),
        "results": ("results", "SELECT * FROM results_latest"),
        "results?model=model-1": ("results?model=model-1", "SELECT * FROM results_latest"),
        "change_points": ("change_points", "SELECT * FROM change_points"),
        "serving": ("serving", "SELECT * FROM serving_points"),
        "trends?series=...": ("trends?series=series-1-1-1-1", "SELECT * FROM trends"),
        "samples?result=r1": ("samples?result=r1", "SELECT * FROM samples WHERE result_id = 'r1'"),
        "compare?base=run18&cand=run19": ("compare?base=run18&cand=run19", "SELECT * FROM results"),
        "environment?base=run18&cand=run19": ("environment?base=run18&cand=run19", "SELECT * FROM runs"),
        "compare_samples?base=run18&cand=run19": (
            "compare_samples?base=run18&cand=run19",
            "SELECT * FROM samples WHERE result_id IN "
            "(SELECT result_id FROM results WHERE run_id IN ('run18', 'run19') "
            "ORDER BY result_id LIMIT 24)",
        ),
    }
    worst = {}
    figures: dict[str, dict[str, tuple[float, float]]] = {}
    for phase, goal in (("quiet", 100), ("busy", 150)):
        hog = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if phase == "busy" else None
        try:
            for how in ("computed", "kept"):
                print(f"\n{phase}" + (", a CPU hog spinning on one core beside it" if hog else "") + f"; {how}:")
                if how == "computed":
                    os.environ["BENCHDB_NO_CACHE"] = "1"
                else:
                    os.environ.pop("BENCHDB_NO_CACHE", None)
                figures[how] = api_requests(db, base, cases, args.requests)
                worst[phase, how] = max(p for _, p in figures[how].values())
                print(f"worst p95 {phase}, {how}: {worst[phase, how] * 1e3:.1f} ms (goal < {goal} ms)")
            print(
                f"\n{phase}" + (", a CPU hog spinning on one core beside it" if hog else "") + f"; the first request "
                f"after a write, {args.settle_s:g} s after it (the server's warm-up running meanwhile), "
                f"{args.writes} writes per view:"
            )
            defaults = {name: path for name, (path, _) in cases.items() if path in api.DEFAULT_VIEWS}
            after = after_writes(db, base, srv.latest, defaults, figures["computed"], args.writes, args.settle_s)
            worst[phase, "after a write"] = after
            print(f"worst p95 {phase}, first after a write: {after * 1e3:.1f} ms (goal < {goal} ms)")
        finally:
            if hog is not None:
                hog.kill()
                hog.wait()
    srv.shutdown()
    static_site(db, args.requests)


def after_writes(db: Path, base: str, latest, defaults: dict, computed: dict, writes: int, settle_s: float) -> float:
    """Each view's request as the first after a write (a write, ``settle_s``, the request), against the
    same request computed (``computed``: name -> (p50, p95) s, measured before); prints a row each and
    how many answers the warm-up had ready; returns the worst p95."""
    print(f"{'request':<46} {'p50 ms':>8} {'p95 ms':>8}   {'computed p95':>12}   ready")
    worst = 0.0
    for name, path in defaults.items():
        times, ready = [], 0
        for _ in range(writes):
            with snapshot.write_session(db):
                pass  # published all the same: a new snapshot, its answers not yet computed
            time.sleep(settle_s)
            before = latest.computed
            t = time.perf_counter()
            with urllib.request.urlopen(f"{base}/{path}") as resp:
                assert resp.status == 200
                resp.read()
            times.append(time.perf_counter() - t)
            ready += latest.computed == before
        worst = max(worst, p95(times))
        print(
            f"{name:<46} {statistics.median(times) * 1e3:8.1f} {p95(times) * 1e3:8.1f}   "
            f"{computed[name][1] * 1e3:12.1f}   {ready}/{writes}"
        )
    return worst


def api_requests(db: Path, base: str, cases: dict, requests: int) -> dict[str, tuple[float, float]]:
    """Each case's request against its SELECT *, interleaved; prints a row each, returns each case's
    (p50, p95) in seconds."""
    print(f"{'request':<46} {'p50 ms':>8} {'p95 ms':>8}   {'SELECT * p50':>12} {'p95':>8}   p95 ratio")
    figures = {}
    for name, (path, baseline) in cases.items():
        urllib.request.urlopen(f"{base}/{path}").read()  # warm

        def request(path=path):
            with urllib.request.urlopen(f"{base}/{path}") as resp:
                assert resp.status == 200
                resp.read()

        def select_all(baseline=baseline):
            con = database.connect(db, read_only=True, wait_s=10, sandboxed=True)  # as the server's
            con.execute(baseline).fetchall()
            con.close()

        asked, sel = interleaved(request, select_all, requests)
        figures[name] = statistics.median(asked), p95(asked)
        print(
            f"{name:<46} {statistics.median(asked) * 1e3:8.1f} {p95(asked) * 1e3:8.1f}   "
            f"{statistics.median(sel) * 1e3:12.1f} {p95(sel) * 1e3:8.1f}   {p95(asked) / p95(sel):6.2f}x"
        )
    return figures


def per_result_json(db: Path, out: Path) -> float:
    """The baseline: every result's raw samples as the site wrote them before they were packed, one
    JSON file per result (its samples view, as the server sends it). Returns seconds."""
    import json

    from benchdb.warehouse import Warehouse

    out.mkdir(parents=True)
    t = time.perf_counter()
    with Warehouse(str(db)).reading() as con:
        for result, doc in api.grouped(con, "samples", "result_id"):
            (out / f"{result}.json").write_text(json.dumps(doc, allow_nan=False), encoding="utf-8")
    return time.perf_counter() - t


def tree(folder: Path) -> tuple[int, float]:
    files = [f for f in folder.rglob("*") if f.is_file()]
    return len(files), sum(f.stat().st_size for f in files) / 2**20


def static_site(db: Path, requests: int) -> None:
    """`benchdb site` of the same warehouse: its build time and size against the per-result JSON
    baseline, then each page's data request (fetch and parse the file the page reads, from a plain
    static server) against fetching the same file unparsed, interleaved: the parse is what the page adds."""
    import json
    import shutil
    from functools import partial
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    from benchdb.web import packed
    from benchdb.web.site import build as build_site

    out = db.with_name("site")
    shutil.rmtree(out, ignore_errors=True)
    t = time.perf_counter()
    counts = build_site(str(db), out)
    took = time.perf_counter() - t
    n_files, size = tree(out)
    baseline = db.with_name("per-result-json")
    shutil.rmtree(baseline, ignore_errors=True)
    took_json = per_result_json(db, baseline)
    n_json, size_json = tree(baseline)
    n_packed, size_packed = tree(out / "data" / "samples")
    print(
        f"\nbenchdb site: {n_files:,} files, {size:,.1f} MiB, built in {took:.1f} s "
        f"({counts['trends']:,} series, {counts['samples']:,} results' samples); goals < 2,000 files, < 100 MiB, < 15 s"
    )
    print(
        f"  its raw samples: {n_packed:,} packed files, {size_packed:,.1f} MiB; as one JSON file per result "
        f"(the site before, same run): {n_json:,} files, {size_json:,.1f} MiB, written in {took_json:.1f} s "
        f"({size_json / max(size_packed, 1e-9):.1f}x the size)"
    )
    shutil.rmtree(baseline, ignore_errors=True)

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, *a):
            return

    srv = ThreadingHTTPServer(("127.0.0.1", 0), partial(Quiet, directory=str(out)))
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{srv.server_address[1]}"
    shards = json.loads((out / "data" / "views.json").read_text())["site"]["shards"]
    first = json.loads((out / "data" / "trends" / "0.json").read_text())
    series = next(iter(first["series"]), "none")
    result = "r1"
    pages = {
        "data/runs.json": json.loads,
        "data/results.json": json.loads,
        "data/matrix.json": json.loads,
        "data/optimal__throughput.json": json.loads,
        "data/change_points.json": json.loads,
        "data/flagged.json": json.loads,
        "data/serving.json": json.loads,
        f"data/trends/{packed.shard_of(series, shards['trends'])}.json": json.loads,
        f"data/samples/{packed.shard_of(result, shards['samples'])}.bin": None,
        "data/compare/run18__run19.json": json.loads,
        "data/compare_samples/run18__run19.json": json.loads,
        "data/environment/run18__run19.json": json.loads,
    }
    print(f"{'static data request':<46} {'MiB':>6} {'p50 ms':>8} {'p95 ms':>8}   {'fetch p95':>9}   p95 ratio")
    worst = 0.0
    for rel, parse in pages.items():
        if not (out / rel).is_file():
            print(f"{rel:<46} (not written)")
            continue

        def fetch(rel=rel):
            with urllib.request.urlopen(f"{base}/{rel}") as resp:
                return resp.read()

        def read(rel=rel, parse=parse):
            data = fetch(rel)
            if parse is not None:
                return parse(data)
            local = db.with_name("fetched.bin")  # packed.read_samples reads a file, as the page reads a fetch
            local.write_bytes(data)
            return packed.read_samples(local, result)

        parsed, raw = interleaved(read, fetch, requests)
        worst = max(worst, p95(parsed))
        print(
            f"{rel[:46]:<46} {os.path.getsize(out / rel) / 2**20:6.2f} {statistics.median(parsed) * 1e3:8.1f} "
            f"{p95(parsed) * 1e3:8.1f}   {p95(raw) * 1e3:9.1f}   {p95(parsed) / p95(raw):6.2f}x"
        )
    print(f"worst static p95 {worst * 1e3:.1f} ms (goal < 150 ms)")
    srv.shutdown()


if __name__ == "__main__":
    main()

"""Cost of change-point detection after an ingest, on a real warehouse.

    python benchmarks/changepoints.py [--series 100] [--runs 1000] [--window 200] [--old-n 600] [--small]

1. Builds a DuckDB warehouse through benchdb's schema (migrations, views) with --series series
   of --runs runs each: rows written directly into hardware, architectures, runs, results and
   result_metrics, ids from benchdb.schema.identity (series_id, scenario_id, hardware_id).
   Medians carry 1 % Student-t (3 dof) noise; every third series has a 6 % step somewhere in its
   history and every fifth one a 10 % step 60 runs before the end. The history's change points
   are found once with ``changepoints.update(con, None)`` (timed too: it tiles every series).
2. Adds one new run with a result in every series (what an ingest of its files loads), then times
   ``changepoints.update(con, [new run])`` in a fresh process and prints its seconds and that
   process' peak RSS. Goal: under 10 s.
3. One series of --old-n points (two steps), one ``e_divisive`` call over all of it: the code as
   it was before issue 11 (every permuted distance matrix at once; kept below, verbatim, as
   ``old_e_divisive``) against ``stats.e_divisive`` now, each in its own process (seconds, peak
   RSS), and whether both find the same change points.

Everything is measured in this run; nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import resource
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np
import pyarrow as pa

from benchdb.schema import identity
from benchdb.store import database

HARDWARE = {
    "kind": "cpu",
    "vendor": "BenchVendor",
    "device_name": "Bench CPU",
    "cpu_model": "Bench CPU",
    "cores_logical": 16,
    "memory_bytes": 64 * 2**30,
    "arch": "x86_64",
}


def medians(rng, n_series: int, n_runs: int) -> np.ndarray:
    """Per-run medians (series x runs), 10 ms with 1 % heavy-tailed noise and some steps."""
    x = 0.01 * (1 + 0.01 * rng.standard_t(3, (n_series, n_runs)))
    for s in range(n_series):
        if s % 3 == 0:
            x[s, int(rng.integers(50, n_runs - 100)) :] *= 1.06
        if s % 5 == 0:
            x[s, n_runs - 60 :] *= 1.10
    return x


def _scenarios(n_series: int) -> list[dict]:
    return [
        {
            "model_id": f"model-{s:03d}",
            "backend": "numpy",
            "device": "cpu",
            "mode": "eager",
            "precision": "fp32",
            "batch_size": 1,
            "input_shape": "n=64",
            "options": {"threads": 1},
        }
        for s in range(n_series)
    ]


def build(path: Path, values: np.ndarray) -> list[str]:
    """A new warehouse with one series per row of ``values`` (series x runs), one run per column."""
    con, _ = database.open_writable(path)
    hw = identity.hardware_id(HARDWARE)
    con.execute(
        "INSERT INTO hardware (hardware_id, kind, vendor, device_name, memory_bytes, cpu_model, "
        "cores_logical, arch, fingerprint) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            hw,
            "cpu",
            HARDWARE["vendor"],
            HARDWARE["device_name"],
            HARDWARE["memory_bytes"],
            HARDWARE["cpu_model"],
            HARDWARE["cores_logical"],
            "x86_64",
            json.dumps(HARDWARE),
        ],
    )
    con.executemany(
        "INSERT INTO architectures (arch_id, model_id, family) VALUES (?, ?, 'synthetic')",
        [[f"arch-{s['model_id']}", s["model_id"]] for s in _scenarios(len(values))],
    )
    con.close()
    return add_runs(path, values, 0)


def add_runs(path: Path, values: np.ndarray, first: int) -> list[str]:
    """Runs number ``first``, ``first + 1``, ... (one per column of ``values``, 6 hours apart),
    each with a valid result in every series. Returns their run ids."""
    n_series, n_runs = values.shape
    numbers = range(first, first + n_runs)
    runs = [f"run-{i:05d}" for i in numbers]
    hw = identity.hardware_id(HARDWARE)
    cols: dict[str, list] = {k: [] for k in ("result_id", "run_id", "model_id", "series_id", "median")}
    for s, sc in enumerate(_scenarios(n_series)):
        sid = identity.series_id(sc, hw)
        for i, run in enumerate(runs):
            cols["result_id"].append(identity.scenario_id(run, sc))
            cols["run_id"].append(run)
            cols["model_id"].append(sc["model_id"])
            cols["series_id"].append(sid)
            cols["median"].append(float(values[s, i]))
    con, _ = database.open_writable(path)
    con.register(
        "new_runs",
        pa.table(
            {
                "run_id": runs,
                "started_at": [datetime(2024, 1, 1) + timedelta(hours=6 * i) for i in numbers],
                "git_commit": [f"{i:040x}" for i in numbers],
            }
        ),
    )
    con.register("new_results", pa.table(cols))
    con.execute(
        "INSERT INTO runs (run_id, started_at, host, git_commit) "
        "SELECT run_id, started_at, 'bench', git_commit FROM new_runs"
    )
    con.execute(
        """
        INSERT INTO results (result_id, run_id, file_id, hardware_id, arch_id, model_id, backend, device, mode,
                             precision, batch_size, input_shape, status, validity, metric, unit, n, median,
                             options, options_id, series_id)
        SELECT result_id, run_id, 0, $hw, 'arch-' || model_id, model_id, 'numpy', 'cpu', 'eager', 'fp32', 1,
               'n=64', 'ok', 'valid', 'latency_s', 's', 100, median, '{"threads":1}', $opts, series_id
        FROM new_results""",
        {"hw": hw, "opts": identity.options_id({"threads": 1})},
    )
    con.execute(
        "INSERT INTO result_metrics (result_id, metric, unit, n, median) "
        "SELECT result_id, 'latency_s', 's', 100, median FROM new_results"
    )
    con.close()
    return runs


# ----------------------------------------------------------------------------- measured in child processes
def _update(path: str, runs: list[str] | None, window: int, queue) -> None:
    from benchdb.analysis import changepoints

    con, _ = database.open_writable(path)
    start = _rss_mib()
    t = time.perf_counter()
    found = changepoints.update(con, runs, window=window)
    seconds = time.perf_counter() - t
    stored = con.execute("SELECT count(*) FROM change_points").fetchall()[0][0]
    con.close()
    queue.put(
        {"seconds": seconds, "found": found, "stored": stored, "start_rss_mib": start, "peak_rss_mib": _rss_mib()}
    )


def _one_series(which: str, x: np.ndarray, queue) -> None:
    from benchdb.analysis.stats import e_divisive

    start = _rss_mib()
    t = time.perf_counter()
    found = old_e_divisive(x) if which == "old" else [(c.index, c.p_value) for c in e_divisive(x)]
    queue.put({"seconds": time.perf_counter() - t, "found": found, "start_rss_mib": start, "peak_rss_mib": _rss_mib()})


def _rss_mib() -> float:
    """Peak resident set size of this process so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _in_child(target, *args) -> dict:
    """Run target in a fresh process, so that its peak RSS is this measurement's alone."""
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    p = ctx.Process(target=target, args=(*args, queue))
    p.start()
    out = queue.get()
    p.join()
    return out


# ----------------------------------------------------------------------------- before issue 11, verbatim
def _old_q_all(d: np.ndarray, min_seg: int) -> tuple[np.ndarray, np.ndarray]:
    n = d.shape[-1]
    s = np.zeros(d.shape[:-2] + (n + 1, n + 1))
    s[..., 1:, 1:] = d.cumsum(-2).cumsum(-1)
    tau = np.arange(min_seg, n - min_seg + 1)
    m = n - tau
    diag = s[..., tau, tau]
    row = s[..., tau, n]
    between = row - diag
    left = diag / 2.0
    right = (s[..., n, n][..., None] - 2.0 * row + diag) / 2.0
    e = 2.0 * between / (tau * m) - left / (tau * (tau - 1) / 2.0) - right / (m * (m - 1) / 2.0)
    q = tau * m / n * e
    i = np.argmax(q, axis=-1)
    return tau[i], np.take_along_axis(q, i[..., None], -1)[..., 0]


def old_e_divisive(values, *, min_segment=3, min_effect=0.03, alpha=0.05, permutations=199, seed=0, offset=0):
    """stats.e_divisive before issue 11 (all permuted distance matrices at once); (index, p) pairs."""
    x = np.asarray(values, dtype=float)
    n = len(x)
    if n < 2 * min_segment:
        return []
    d = np.abs(x[:, None] - x[None, :])
    tau, q = _old_q_all(d, min_segment)
    tau = int(tau)
    rng = np.random.default_rng(seed + offset)
    perms = rng.permuted(np.tile(np.arange(n), (permutations, 1)), axis=1)
    xp = x[perms]
    _, q_perm = _old_q_all(np.abs(xp[:, :, None] - xp[:, None, :]), min_segment)
    p_value = (int(np.sum(q_perm >= q)) + 1) / (permutations + 1)
    if p_value >= alpha:
        return []
    before, after = float(np.median(x[:tau])), float(np.median(x[tau:]))
    found = []
    if before > 0 and abs(after / before - 1.0) >= min_effect:
        found.append((offset + tau, p_value))
    kw = dict(min_segment=min_segment, min_effect=min_effect, alpha=alpha, permutations=permutations, seed=seed)
    return old_e_divisive(x[:tau], offset=offset, **kw) + found + old_e_divisive(x[tau:], offset=offset + tau, **kw)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--series", type=int, default=100)
    ap.add_argument("--runs", type=int, default=1000)
    ap.add_argument("--window", type=int, default=200)
    ap.add_argument("--old-n", type=int, default=600)
    ap.add_argument(
        "--small",
        action="store_true",
        help="5 series x 150 runs, window 50, a 60-point series: checks that the script works",
    )
    args = ap.parse_args()
    if args.small:
        args.series, args.runs, args.window, args.old_n = 5, 150, 50, 60

    db = Path(tempfile.mkdtemp(prefix="benchdb-cp-")) / "w.duckdb"
    values = medians(np.random.default_rng(0), args.series, args.runs + 1)
    t = time.perf_counter()
    build(db, values[:, :-1])
    print(f"warehouse: {args.series} series x {args.runs} runs, built in {time.perf_counter() - t:.1f} s")
    r = _in_child(_update, str(db), None, args.window)
    print(
        f"history: update(con, None) over every run of every series: {r['seconds']:.1f} s, "
        f"peak RSS {r['peak_rss_mib']:.0f} MiB ({r['start_rss_mib']:.0f} before the call), "
        f"{r['found']} open change points"
    )
    (new_run,) = add_runs(db, values[:, -1:], args.runs)
    r = _in_child(_update, str(db), [new_run], args.window)
    print(
        f"ingest of 1 new run in all {args.series} series, then changepoints.update(con, [new run]), window "
        f"{args.window}: {r['seconds']:.2f} s (goal < 10 s), peak RSS {r['peak_rss_mib']:.0f} MiB "
        f"({r['start_rss_mib']:.0f} before the call); "
        f"{r['found']} open change points in those series"
    )

    rng = np.random.default_rng(1)
    x = 0.01 * (1 + 0.01 * rng.standard_t(3, args.old_n))
    x[args.old_n // 3 :] *= 1.05
    x[2 * args.old_n // 3 :] *= 1.08
    measured: dict[str, dict] = {}
    print(
        f"one {args.old_n}-point series (steps at {args.old_n // 3} and {2 * args.old_n // 3}), "
        "one e_divisive call over all of it:"
    )
    for name, which in (("before issue 11", "old"), ("now", "new")):
        r = _in_child(_one_series, which, x)
        print(
            f"  {name + ':':<16} {r['seconds']:6.2f} s, peak RSS {r['peak_rss_mib']:5.0f} MiB "
            f"({r['start_rss_mib']:.0f} before the call), found (index, p) {r['found']}"
        )
        measured[which] = r
    old, new = measured["old"], measured["new"]
    print(
        f"  old / new time: {old['seconds'] / new['seconds']:.0f}x; same change points: {old['found'] == new['found']}"
    )


if __name__ == "__main__":
    sys.exit(main())

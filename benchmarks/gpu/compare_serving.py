"""benchdb's GPU serving figures beside independent measures of the same GPU and server (issue 52).

    python benchmarks/gpu/compare_serving.py WORKDIR

WORKDIR is what benchmarks/gpu/serve.sh left (or its gpu2.tar.gz unpacked): bench.duckdb and its
samples, smi.csv (nvidia-smi's 100 ms log), independent.jsonl (benchmarks/gpu/serving_independent.py)
and steps.log. Prints:

1. serving points: per load point TTFT and TPOT p50/p90, output tokens/s per GPU, J per output token;
2. energy: benchdb's NVML energy counter over each load point's window against the integral of
   nvidia-smi's power.draw (and power.draw.instant where the driver has it) over the same window;
3. client agreement: benchdb (--url) against the independent client on the same server, TTFT and
   inter-token medians at the same concurrencies;
4. compile modes: latency medians against eager;
5. --parallel auto: four numpy models one after another and at once on disjoint cores.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parent))
from compare import pct, smi, steps  # noqa: E402  (a sibling script, not a package)


def integral(log: list[dict], t0: float, t1: float, field: str) -> float | None:
    """Trapezoid integral (J) of a power column over [t0, t1], the ends interpolated."""
    pts = [(r["t"], r[field]) for r in log if field in r]
    if len(pts) < 2 or pts[0][0] > t0 or pts[-1][0] < t1:
        return None

    def at(t: float) -> float:
        for (ta, pa), (tb, pb) in zip(pts, pts[1:], strict=False):
            if ta <= t <= tb:
                return pa + (pb - pa) * (t - ta) / (tb - ta) if tb > ta else pa
        return pts[-1][1]

    inner = [(t, p) for t, p in pts if t0 < t < t1]
    series = [(t0, at(t0)), *inner, (t1, at(t1))]
    return sum((tb - ta) * (pa + pb) / 2 for (ta, pa), (tb, pb) in zip(series, series[1:], strict=False))


def main() -> None:
    work = Path(sys.argv[1])
    con = duckdb.connect(str(work / "bench.duckdb"), read_only=True)
    log = smi(work)

    print("1. serving points (transformers serve, continuous batching; benchdb run --backend openai)")
    rows = con.execute("""
        SELECT p.input_shape || ' ' || p.precision, p.ttft_p50_s, p.ttft_p90_s, p.tpot_p50_s, p.tpot_p90_s,
               p.output_throughput_per_device, p.energy_per_output_token_j, p.errors, p.hardware_name, r.extra
        FROM serving_points p JOIN results_latest r USING (result_id)
        WHERE json_extract_string(p.options, '$.server_hardware') IS NULL
        ORDER BY p.concurrency NULLS LAST, p.request_rate""").fetchall()
    print(f"   {'load':34} {'TTFT p50/p90 ms':>17} {'TPOT p50/p90 ms':>16} {'tok/s/GPU':>9} {'J/token':>8} err")
    windows = []
    for shape, t50, t90, p50, p90, tput, jpt, err, _hw, extra in rows:
        f = [v * 1e3 if v is not None else float("nan") for v in (t50, t90, p50, p90)]
        print(
            f"   {shape:34} {f[0]:8.1f}/{f[1]:<8.1f} {f[2]:7.2f}/{f[3]:<8.2f} {tput or 0:9.0f} "
            f"{jpt if jpt is not None else float('nan'):8.4f} {err}"
        )
        window = (json.loads(extra) if isinstance(extra, str) else extra or {}).get("energy_window_s")
        if window:
            windows.append((shape.split(" ")[0], *window))

    print("\n2. energy: NVML counter (benchdb) against nvidia-smi's power integrated over the same window")
    for shape, t0, t1 in windows:
        rid = con.execute(
            "SELECT result_id FROM results_latest WHERE input_shape = ? AND backend = 'openai' "
            "AND json_extract_string(options, '$.server_hardware') IS NULL",
            [shape],
        ).fetchone()
        joules = (
            con.execute(
                "SELECT max(value) FROM samples WHERE result_id = ? AND metric = 'energy_j'", [rid[0]]
            ).fetchone()[0]
            if rid
            else None
        )
        avg = integral(log, t0, t1, "power.draw")
        inst = integral(log, t0, t1, "power.draw.instant")
        line = f"   {shape:34} {t1 - t0:6.1f} s  benchdb {joules or float('nan'):9.1f} J"
        if avg:
            line += f"  nvidia-smi power.draw {avg:9.1f} J ({pct(joules, avg) if joules else 'n/a'})"
        if inst:
            line += f"  power.draw.instant {inst:9.1f} J ({pct(joules, inst) if joules else 'n/a'})"
        print(line)

    print("\n3. the same server measured by benchdb (--url) and by an independent client (threads, http.client)")
    path = work / "independent.jsonl"
    ind = [json.loads(x) for x in path.read_text().splitlines() if x.startswith("{")] if path.exists() else []
    for conc in sorted({i["concurrency"] for i in ind}):
        mine = [i for i in ind if i["concurrency"] == conc and i["ttft_p50_ms"] is not None]
        b = con.execute(
            """SELECT ttft_p50_s, itl_p50_s FROM serving_points
                           WHERE concurrency = ? AND hardware_name = 'gpu-box'""",
            [conc],
        ).fetchone()
        if not mine or b is None:
            print(f"   concurrency {conc}: missing (independent runs {len(mine)}, benchdb point {b is not None})")
            continue
        ttft = statistics.mean(i["ttft_p50_ms"] for i in mine)
        itl = statistics.mean(i["itl_p50_ms"] for i in mine)
        ttfts = ", ".join(format(i["ttft_p50_ms"], ".2f") for i in mine)
        itls = ", ".join(format(i["itl_p50_ms"], ".3f") for i in mine)
        print(
            f"   concurrency {conc}: TTFT p50 benchdb {b[0] * 1e3:.2f} ms, independent {ttfts} ms "
            f"({pct(b[0] * 1e3, ttft)}); ITL p50 benchdb {b[1] * 1e3:.3f} ms, independent {itls} ms "
            f"({pct(b[1] * 1e3, itl)})"
        )

    print("\n4. compile modes on the GPU (latency median; generation: ttft/tpot)")
    for rec in con.execute("""SELECT model_id, mode, precision, batch_size, metric, median, status, validity
                              FROM results_latest WHERE backend = 'pytorch'
                              AND (metric IN ('latency_s', 'ttft_s', 'tpot_s') OR status <> 'ok')
                              ORDER BY model_id, metric, mode""").fetchall():
        model, mode, prec, batch, metric, med, status, validity = rec
        eager = con.execute(
            """SELECT median FROM results_latest WHERE backend = 'pytorch' AND model_id = ?
                               AND mode = 'eager' AND metric = ? AND batch_size = ? AND precision = ?""",
            [model, metric, batch, prec],
        ).fetchone()
        vs = f" ({med / eager[0]:.2f}x eager)" if med and eager and eager[0] and mode != "eager" else ""
        print(
            f"   {Path(model).name:10} {mode:26} {prec} bs{batch} {metric or '-':10} "
            f"{(med or float('nan')) * 1e3:9.3f} ms{vs} {status} {validity}"
        )

    print("\n5. --parallel auto: the same four models serially, then on disjoint cores at once")
    span = steps(work)
    for name in ("parallel-serial", "parallel"):
        if name in span:
            print(f"   {name}: {span[name][1] - span[name][0]:.1f} s wall")
    for model, serial, parallel in con.execute("""
            SELECT r.model_id, max(r.median) FILTER (WHERE list_contains(u.tags, 'gpu-serial')),
                   max(r.median) FILTER (WHERE list_contains(u.tags, 'gpu-parallel'))
            FROM results r JOIN runs u USING (run_id) WHERE r.backend = 'numpy' AND r.metric = 'latency_s'
            GROUP BY r.model_id ORDER BY r.model_id""").fetchall():
        if serial and parallel:
            print(
                f"   {model}: serial {serial * 1e3:.3f} ms, parallel {parallel * 1e3:.3f} ms ({pct(parallel, serial)})"
            )


if __name__ == "__main__":
    main()

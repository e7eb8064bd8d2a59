"""benchdb's GPU figures beside independent measures of the same GPU (issue 38).

    python benchmarks/gpu/compare.py WORKDIR

WORKDIR is what benchmarks/gpu/verify.sh left (or its gpu.tar.gz unpacked at the same path):
bench.duckdb and its samples, independent.jsonl (benchmarks/gpu/independent.py), smi.csv
(nvidia-smi's own 100 ms log) and steps.log (each step's start and end). Prints:

1. latency: benchdb's median of the BERT-base-shaped model (batch 8, seq 128) against a bare
   CUDA-event loop in separate processes before and after it (goal: within 2 %);
2. peak memory: benchdb's peak_device_allocated_bytes against torch.cuda.max_memory_allocated;
3. telemetry: benchdb's NVML power and SM clock samples against nvidia-smi's over the same
   processes (busy samples: utilisation >= 50 %), and the energy counter against the integral
   of the sampled power.
"""

from __future__ import annotations

import csv
import json
import statistics
import sys
from datetime import datetime, timezone
from pathlib import Path

import duckdb


def steps(work: Path) -> dict[str, tuple[float, float]]:
    """Step name -> (start, end) in seconds since the epoch."""
    out = {}
    for line in (work / "steps.log").read_text().splitlines():
        if line.startswith("== ") and " start=" in line:
            fields = dict(f.split("=", 1) for f in line.split()[2:])
            out[line.split()[1]] = (int(fields["start"]) / 1e9, int(fields["end"]) / 1e9)
    return out


def smi(work: Path) -> list[dict]:
    rows = []
    with open(work / "smi.csv") as f:
        reader = csv.reader(f)
        header = [h.strip().split(" ")[0].replace("clocks.current.", "clocks.") for h in next(reader)]
        for rec in reader:
            if len(rec) != len(header):
                continue
            row = dict(zip(header, (r.strip() for r in rec), strict=True))
            try:
                t = datetime.strptime(row["timestamp"], "%Y/%m/%d %H:%M:%S.%f").replace(tzinfo=timezone.utc)
                rows.append(
                    {
                        "t": t.timestamp(),
                        **{k: float(v) for k, v in row.items() if k != "timestamp" and v not in ("", "[N/A]", "N/A")},
                    }
                )
            except ValueError:
                continue
    return rows


def pct(a: float, b: float) -> str:
    return f"{(a / b - 1) * 100:+.2f} %"


def main() -> None:
    work = Path(sys.argv[1])
    con = duckdb.connect(str(work / "bench.duckdb"), read_only=True)
    bare = [json.loads(line) for line in (work / "independent.jsonl").read_text().splitlines() if line.startswith("{")]
    span = steps(work)
    print(f"GPU: {bare[0]['gpu'] if bare else '?'}; torch {bare[0]['torch'] if bare else '?'}")

    big = [b for b in bare if not b["model"].startswith("tiny:")]
    for prec in dict.fromkeys(b["precision"] for b in big):
        sides = [b for b in big if b["precision"] == prec]
        batch, seq = sides[0]["batch"], sides[0]["seq"]
        print(f"\n1. latency, BERT-base-shaped, batch {batch}, seq {seq}: benchdb against a bare CUDA-event loop")
        row = con.execute(
            """SELECT result_id, median, median_ci_low, median_ci_high, repeats, timing_method
                             FROM results_latest WHERE backend = 'pytorch' AND batch_size = ? AND model_id = ?
                             AND precision = ? AND metric = 'latency_s' AND status = 'ok'""",
            [batch, sides[0]["model"], prec],
        ).fetchone()
        if row is None or not sides:
            print(f"   {prec}: missing (benchdb result {row is not None}, bare runs {len(sides)})")
            continue
        rid, med, lo, hi, reps, method = row
        ref = statistics.mean(b["event_median_s"] for b in sides)
        each = ", ".join(f"{b['event_median_s'] * 1e3:.4f}" for b in sides)
        print(
            f"   {prec}: benchdb {med * 1e3:.4f} ms [{lo * 1e3:.4f}, {hi * 1e3:.4f}] ({reps} processes, "
            f"{method}); bare loop {each} ms "
            f"(mean {ref * 1e3:.4f}); benchdb/bare {pct(med, ref)}; pipelined "
            f"{statistics.mean(b['pipelined_mean_s'] for b in sides) * 1e3:.4f} ms"
        )
        peak = con.execute(
            """SELECT max(value) FROM samples WHERE result_id = ?
                              AND metric = 'peak_device_allocated_bytes'""",
            [rid],
        ).fetchone()[0]
        alloc = statistics.mean(b["max_memory_allocated"] for b in sides)
        if peak:
            print(
                f"      peak memory: benchdb {peak / 2**20:.1f} MiB, max_memory_allocated "
                f"{alloc / 2**20:.1f} MiB ({pct(peak, alloc)})"
            )
        tele = dict(
            con.execute(
                """SELECT metric, list(value ORDER BY repeat, iteration) FROM samples
                                   WHERE result_id = ? AND metric IN ('power_w', 'nvml_power_w',
                                   'sm_clock_mhz', 'gpu_util_pct', 'energy_j', 'throttle_reasons')
                                   GROUP BY metric""",
                [rid],
            ).fetchall()
        )
        offsets = con.execute(
            """SELECT repeat, list(t_offset_s ORDER BY iteration) FROM samples
                                 WHERE result_id = ? AND metric = ? GROUP BY repeat""",
            [rid, "nvml_power_w" if "nvml_power_w" in tele else "power_w"],
        ).fetchall()
        if "power_w" not in tele:
            print("      no NVML samples")
            continue
        busy = [i for i, u in enumerate(tele["gpu_util_pct"]) if u >= 50]
        reading = tele.get("nvml_power_w", tele["power_w"])  # NVML's own reading (older runs: power_w)
        p_nvml = statistics.median(reading[i] for i in busy) if busy else float("nan")
        c_nvml = statistics.median(tele["sm_clock_mhz"][i] for i in busy) if busy else float("nan")
        t0, t1 = span.get(f"bench-{prec}", (0, 0))
        log = [r for r in smi(work) if t0 <= r["t"] <= t1 and r.get("utilization.gpu", 0) >= 50]
        if log:
            p_smi = statistics.median(r["power.draw"] for r in log)
            c_smi = statistics.median(r["clocks.sm"] for r in log)
            print(
                f"      power reading (busy samples): NVML {p_nvml:.1f} W (n={len(busy)}), nvidia-smi {p_smi:.1f} W "
                f"(n={len(log)}) ({pct(p_nvml, p_smi)}); SM clock NVML {c_nvml:.0f} MHz, nvidia-smi "
                f"{c_smi:.0f} MHz ({pct(c_nvml, c_smi)})"
            )
            if "power.draw.instant" in log[0]:
                instant = statistics.median(r["power.draw.instant"] for r in log)
                print(f"      nvidia-smi power.draw.instant {instant:.1f} W")
        if "nvml_power_w" in tele:
            print(
                f"      benchdb power_w (from the energy counter): median {statistics.median(tele['power_w']):.1f} W "
                f"over {len(tele['power_w'])} windows"
            )
        bits = {int(b) for b in tele.get("throttle_reasons", [])}
        print(f"      throttle reason bitmasks seen: {sorted(hex(b) for b in bits)}")
        if "energy_j" in tele:
            # per process: the counter's last reading against the trapezoid integral of power
            n = 0
            for rep, offs in offsets:
                metric = "nvml_power_w" if "nvml_power_w" in tele else "power_w"
                vals = con.execute(
                    f"""SELECT list(value ORDER BY iteration) FILTER (WHERE metric = '{metric}'),
                                             max(value) FILTER (WHERE metric = 'energy_j')
                                      FROM samples WHERE result_id = ? AND repeat = ?""",
                    [rid, rep],
                ).fetchone()
                power, energy = vals
                integral = sum((offs[k + 1] - offs[k]) * (power[k] + power[k + 1]) / 2 for k in range(len(offs) - 1))
                print(
                    f"      process {rep}: energy counter {energy:.1f} J over {offs[-1]:.2f} s, "
                    f"integral of NVML's power reading {integral:.1f} J ({pct(energy, integral)})"
                )
                n += 1

    print("\n2. tiny BERT (batch 4, seq 32, fp16, eager): a launch-bound model")
    tiny = [b for b in bare if b["model"] == "tiny:bert"]
    row = con.execute("""SELECT result_id, median FROM results_latest WHERE backend = 'pytorch' AND mode = 'eager'
                         AND model_id LIKE '%bert%' AND batch_size = 4 AND precision = 'fp16'
                         AND metric = 'latency_s' AND status = 'ok' AND input_shape LIKE '%32%'""").fetchone()
    if row and tiny:
        peak = con.execute(
            """SELECT max(value) FROM samples WHERE result_id = ?
                              AND metric = 'peak_device_allocated_bytes'""",
            [row[0]],
        ).fetchone()[0]
        print(
            f"   benchdb {row[1] * 1e3:.4f} ms; bare loop {tiny[0]['event_median_s'] * 1e3:.4f} ms "
            f"({pct(row[1], tiny[0]['event_median_s'])}); pipelined {tiny[0]['pipelined_mean_s'] * 1e3:.4f} ms; "
            f"peak memory benchdb {peak / 2**20 if peak else float('nan'):.2f} MiB, max_memory_allocated "
            f"{tiny[0]['max_memory_allocated'] / 2**20:.2f} MiB"
        )

    print("\n3. results by status")
    for rec in con.execute("""SELECT backend, mode, precision, status, count(*), list(DISTINCT validity)
                              FROM results_latest WHERE metric IN ('latency_s', 'generate_s') OR status <> 'ok'
                              GROUP BY ALL ORDER BY ALL""").fetchall():
        print("  ", *rec)


if __name__ == "__main__":
    main()

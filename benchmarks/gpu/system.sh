#!/usr/bin/env bash
# The GPU machine as a system (issue 47's description) and `--parallel auto` on its CPU cores, in one
# short pass. Run from the repository root:
#
#     bash benchmarks/gpu/system.sh OUTDIR
#
# 1. `benchdb hardware` (text and the hardware-file form) on the machine itself;
# 2. four numpy matrix products measured serially and then with --parallel auto (whole physical cores
#    per worker, 4 threads each), interleaved over 2 repeats, so the two ways can be compared per model;
# 3. ingest, then the hardware rows the runs recorded (system columns) and each result's placement.
# BUDGET (default 150) caps the measuring steps' seconds. Needs what kernels.sh needs (wheels optional).
set -u
OUT=${1:?usage: system.sh OUTDIR}
source "$(dirname "$0")/lib.sh"
begin system 150

use_wheels
step hardware 30 "$PY" -m benchdb hardware
step hardware-yaml 30 "$PY" -m benchdb hardware --format yaml
cp "$W/hardware-yaml.txt" "$W/hardware.yaml"

common=(--backend numpy --model matmul:256 --model matmul:512 --model matmul:768 --model matmul:1024 --precision fp32
        --threads "${THREADS:-4}"
        --warmup 3 --min-iters 20 --min-time 0.5 --max-time 2 --repeats 2 --out "$W/results")
step serial 120 "$PY" -m benchdb run "${common[@]}" --tag serial
step parallel-auto 90 "$PY" -m benchdb run "${common[@]}" --parallel auto --tag parallel-auto

DEADLINE=$(( $(date +%s) + 90 ))
step ingest 60 "$PY" -m benchdb ingest "$W/results"
step systems 30 "$PY" -m benchdb query "SELECT hardware_id, kind, vendor, device_name, memory_bytes, \
accelerators_per_node, nodes, cpu_model, cpu_sockets, cores_physical, cores_logical, host_memory_bytes, interconnect \
FROM hardware"
step compare 30 "$PY" -m benchdb query "SELECT r.model_id, t AS tag, r.options->>'co_runners' AS co_runners, \
round(r.median * 1e3, 4) AS median_ms, round(r.p90 * 1e3, 4) AS p90_ms, \
(SELECT string_agg(p->>'cpus', ' / ') FROM unnest(CAST(r.extra->'placements' AS JSON[])) AS x(p)) AS cores \
FROM results r JOIN runs USING (run_id), unnest(runs.tags) AS u(t) WHERE r.metric = 'latency_s' \
ORDER BY r.model_id, tag"

tar -C "$W" -czf "$OUT/system.tar.gz" --exclude=site .
cp "$LOG" "$OUT/steps.log"
ls -la "$OUT"

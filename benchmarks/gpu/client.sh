#!/usr/bin/env bash
# Where one client machine saturates (issue 52, item 4): benchdb's load generator with 1, 4 and 8
# worker processes (--client-workers) against the stub, on a many-core host. Run from the repository
# root:
#
#     bash benchmarks/gpu/client.sh OUTDIR
#
# STUBS stub processes (default 8) share one port (--reuse-port) on the upper half of the cores, so the
# server side is not what saturates; the client runs on the lower half (taskset), its workers pinned
# within it. Each load point's TTFT and ITL medians are compared with the stub's truth (first token
# after TTFT_MS, then one every ITL_MS), beside the tokens per second the client read and its CPU.
# WORKERS (default 1,4,8), CONCURRENCY (64,256,1024), TTFT_MS (20), ITL_MS (10), TOKENS (64) and
# BUDGET (default 240 s for the measuring steps) change the run.
set -u
OUT=${1:?usage: client.sh OUTDIR}
source "$(dirname "$0")/lib.sh"
begin client 240

use_wheels
CORES=$(nproc)
HALF=$(( CORES / 2 ))
STUBS=${STUBS:-8}
PORT=${PORT:-18123}
TTFT_MS=${TTFT_MS:-20} ITL_MS=${ITL_MS:-10}
pids=()
for i in $(seq 0 $(( STUBS - 1 ))); do
  core=$(( HALF + i % (CORES - HALF) ))
  taskset -c "$core" "$PY" -m benchdb.testing.stub --port "$PORT" --reuse-port --ttft-ms "$TTFT_MS" \
    --itl-ms "$ITL_MS" >"$W/stub-$i.txt" 2>&1 &
  pids+=($!)
done
sleep 2
echo "stubs: $STUBS on cores $HALF-$(( CORES - 1 )), client on cores 0-$(( HALF - 1 ))" | tee -a "$LOG"

for w in ${WORKERS:-1 4 8}; do
  step "workers-$w" 120 taskset -c "0-$(( HALF - 1 ))" "$PY" -m benchdb run --backend openai \
    --url "http://127.0.0.1:$PORT" --server-hardware stub --model stub --concurrency "${CONCURRENCY:-64,256,1024}" \
    --gen-tokens "${TOKENS:-64}" --client-workers "$w" --warmup 1 --min-iters 20 --min-time 3s --max-time 6s \
    --request-timeout 60s --tag "workers-$w" --out "$W/results"
done
kill "${pids[@]}" 2>/dev/null

DEADLINE=$(( $(date +%s) + 60 ))
step ingest 30 "$PY" -m benchdb ingest "$W/results"
step compare 30 "$PY" -m benchdb query "SELECT t AS tag, r.input_shape, r.validity, \
round(any_value(m.median) FILTER (WHERE m.metric = 'ttft_s') * 1e3, 3) AS ttft_ms, \
round(any_value(m.median) FILTER (WHERE m.metric = 'itl_token_s') * 1e3, 3) AS itl_ms, \
round(any_value(m.median) FILTER (WHERE m.metric = 'output_throughput'), 0) AS tokens_per_s, \
round(any_value(m.median) FILTER (WHERE m.metric = 'client_cpu_pct'), 1) AS client_cpu_pct, round(coalesce(list_max(CAST(json_extract(any_value(r.extra), '$.client_workers[*].loop_cpu_pct') AS DOUBLE[])), CAST(any_value(r.extra)->>'client_loop_cpu_pct' AS DOUBLE)), 1) AS busiest_loop_pct, any_value(r.validity_reasons) AS why \
FROM results r JOIN result_metrics m USING (result_id) JOIN runs USING (run_id), unnest(runs.tags) AS u(t) \
GROUP BY ALL ORDER BY t, r.input_shape"
step metrics 30 "$PY" -m benchdb query "SELECT DISTINCT metric FROM result_metrics ORDER BY 1"

tar -C "$W" -czf "$OUT/client.tar.gz" --exclude=site --exclude=bench.duckdb.samples .
cp "$LOG" "$OUT/steps.log"
ls -la "$OUT"

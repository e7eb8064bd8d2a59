#!/usr/bin/env bash
# Multi-turn conversations against a real server on a GPU (issue 63): `transformers serve
# --continuous-batching` (prefix sharing on by default from transformers 5.2x) with the ~250 M-parameter
# LLaMA of tiny_llm --size small (bf16, random weights, built offline), measured by benchdb with
# --workload multi-turn, without and with a shared system prompt, then TTFT per turn. Run from the
# repository root, after `bash benchmarks/gpu/wheels.sh` on the CPU machine:
#
#     bash benchmarks/gpu/multiturn.sh OUTDIR
#
# TURNS (default 4), INPUT (256 words a turn), OUTPUT (64 tokens a reply), PREFIX (2048 words),
# CONCURRENCY (default "4 16") and BUDGET (default 240 s for the measuring steps) change the run.
set -u
OUT=${1:?usage: multiturn.sh OUTDIR}
source "$(dirname "$0")/lib.sh"
begin multiturn 240

use_wheels
"$PY" -c "import transformers, torch; print('transformers', transformers.__version__, 'torch', torch.__version__, \
torch.cuda.get_device_name(0))" 2>&1 | tee "$W/versions.txt"
serve_tiny_llm 18251

T=${TURNS:-4} IN=${INPUT:-256} GEN=${OUTPUT:-64}
for c in ${CONCURRENCY:-4 16}; do
  for shape in none prefix; do
    wl="multi-turn:turns=$T,input=$IN,output=$GEN,seed=1"
    [ "$shape" = prefix ] && wl="$wl,prefix=${PREFIX:-2048},group=100000"
    step "$shape-c$c" 60 "$PY" -m benchdb run --backend openai --url "$url" --server-hardware h200-box \
      --model "$W/llm" --precision bf16 --mode completions --seq-len "$IN" --gen-tokens "$GEN" --concurrency "$c" \
      --workload "$wl" --warmup 4 --min-iters 40 --min-time 5s --max-time 20s --tag "$shape" --out "$W/results"
  done
done
kill "$SERVER" 2>/dev/null; pkill -f "serve $W/llm" 2>/dev/null

DEADLINE=$(( $(date +%s) + 60 ))
step ingest 30 "$PY" -m benchdb ingest "$W/results"
# TTFT per turn: each request's ttft_s beside its turn and its prompt tokens (the same iteration)
step per-turn 30 "$PY" -m benchdb query "SELECT u.t AS prefix, r.batch_size AS c, CAST(t.value AS INT) AS turn, \
count(*) AS requests, round(median(s.value) * 1e3, 2) AS ttft_p50_ms, round(quantile_cont(s.value, 0.9) * 1e3, 2) \
AS ttft_p90_ms, round(median(i.value)) AS prompt_tokens, r.validity \
FROM samples s JOIN samples t ON t.result_id = s.result_id AND t.iteration = s.iteration AND t.metric = 'turn' \
JOIN samples i ON i.result_id = s.result_id AND i.iteration = s.iteration AND i.metric = 'input_tokens' \
JOIN results r ON r.result_id = s.result_id JOIN runs USING (run_id), unnest(runs.tags) AS u(t) \
WHERE s.metric = 'ttft_s' GROUP BY ALL ORDER BY c, prefix, turn"
step points 30 "$PY" -m benchdb query "SELECT u.t AS prefix, r.batch_size AS c, \
round(any_value(m.median) FILTER (WHERE m.metric = 'ttft_first_turn_s') * 1e3, 2) AS first_turn_ms, \
round(any_value(m.median) FILTER (WHERE m.metric = 'ttft_later_turns_s') * 1e3, 2) AS later_turns_ms, \
round(any_value(m.median) FILTER (WHERE m.metric = 'session_s'), 3) AS session_s, \
round(any_value(m.median) FILTER (WHERE m.metric = 'shared_prefix_pct'), 1) AS shared_pct, \
any_value(m.median) FILTER (WHERE m.metric = 'cache_hit_pct') AS server_cache_pct, \
round(any_value(m.median) FILTER (WHERE m.metric = 'output_throughput'), 0) AS out_tok_s, \
any_value(r.options->>'workload') AS workload \
FROM results r JOIN result_metrics m USING (result_id) JOIN runs USING (run_id), unnest(runs.tags) AS u(t) \
GROUP BY ALL ORDER BY c, prefix"
grep -i -m5 "prefix\|block shar" "$W/server.log" >"$W/server-prefix.txt" 2>/dev/null

tar -C "$W" -czf "$OUT/multiturn.tar.gz" --exclude=site --exclude=llm --exclude=bench.duckdb.samples .
cp "$LOG" "$OUT/steps.log"
ls -la "$OUT"

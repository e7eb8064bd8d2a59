#!/usr/bin/env bash
# benchdb's client beside GuideLLM on the same GPU server (issue 52, item 2). Run from the repository
# root, after `GUIDELLM=1 bash benchmarks/gpu/wheels.sh` on the CPU machine:
#
#     bash benchmarks/gpu/guidellm.sh OUTDIR
#
# `transformers serve --continuous-batching` with the ~250 M-parameter LLaMA of tiny_llm --size small
# (bf16, random weights, built offline), then at each concurrency (CONCURRENCY, default "4 16"):
# `benchdb run --backend openai --url` and `guidellm run` (synthetic 128-token prompts from the
# model's own tokenizer, max_tokens 64 without ignore_eos, which transformers serve refuses: as benchdb sends
# them), one after the other on the same server. Prints both
# tools' TTFT and ITL medians side by side. BUDGET (default 200) caps the measuring steps' seconds.
set -u
OUT=${1:?usage: guidellm.sh OUTDIR}
source "$(dirname "$0")/lib.sh"
begin guidellm 200

use_wheels
GL=$(command -v guidellm || echo "$PY -m guidellm")
"$PY" -c "import guidellm, transformers; print('guidellm', guidellm.__version__ if hasattr(guidellm, '__version__') \
else '?', 'transformers', transformers.__version__)" 2>&1 | tee "$W/versions.txt"
serve_tiny_llm 18241

for c in ${CONCURRENCY:-4 16}; do
  step "benchdb-$c" 60 "$PY" -m benchdb run --backend openai --url "$url" --server-hardware h200-box --model "$W/llm" \
    --precision "${PRECISION:-bf16}" \
    --concurrency "$c" --seq-len 128 --gen-tokens 64 --warmup 4 --min-iters 10 --min-time 3s --max-time 10s \
    --tag "c$c" --out "$W/results"
  step "guidellm-$c" 60 $GL run \
    --backend "kind=openai_http,target=$url,model=$W/llm,request_format=/v1/completions,http2=false,max_tokens=64" \
    --profile "kind=concurrent,streams=$c" --data "kind=synthetic_text,prompt_tokens=128" \
    --tokenizer "kind=huggingface_auto,model=$W/llm" --constraint "kind=max_requests,count=$(( c * 6 ))" \
    --output "kind=json,path=$W/guidellm-$c.json" --disable-console
done
kill "$SERVER" 2>/dev/null; pkill -f "serve $W/llm" 2>/dev/null

DEADLINE=$(( $(date +%s) + 60 ))
step ingest 30 "$PY" -m benchdb ingest "$W/results"
step compare 30 "$PY" - "$W" <<'PY'
import glob, json, os, sys
import duckdb
w = sys.argv[1]
con = duckdb.connect(os.path.join(w, "bench.duckdb"), read_only=True)
rows = con.execute("""SELECT r.batch_size AS c, r.validity,
    any_value(m.median) FILTER (WHERE m.metric = 'ttft_s') * 1e3, any_value(m.median) FILTER (WHERE m.metric = 'itl_token_s') * 1e3,
    any_value(m.n) FILTER (WHERE m.metric = 'ttft_s'), any_value(m.median) FILTER (WHERE m.metric = 'tpot_s') * 1e3
    FROM results r JOIN result_metrics m USING (result_id) GROUP BY ALL ORDER BY c""").fetchall()
print("tool       c   TTFT p50 ms  ITL p50 ms  TPOT p50 ms  requests  validity")
fmt = lambda v, w, d=2: f"{v:{w}.{d}f}" if v is not None else " " * (w - 1) + "-"
for c, validity, ttft, itl, n, tpot in rows:
    print(f"benchdb  {c:3d}  {fmt(ttft, 11)}  {fmt(itl, 10)}  {fmt(tpot, 11)}  {fmt(n, 8, 0)}  {validity}")
for path in sorted(glob.glob(os.path.join(w, "guidellm-*.json")), key=lambda p: int(p.rsplit("-", 1)[1][:-5])):
    m = json.load(open(path))["benchmarks"][-1]["metrics"]
    c = int(path.rsplit("-", 1)[1][:-5])
    print(f"guidellm {c:3d}  {m['time_to_first_token_ms']['successful']['median']:11.2f}  "
          f"{m['inter_token_latency_ms']['successful']['median']:10.2f}  "
          f"{m['time_per_output_token_ms']['successful']['median']:11.2f}  {m['request_totals']['successful']:8d}")
PY

tar -C "$W" -czf "$OUT/guidellm.tar.gz" --exclude=site --exclude=llm --exclude=bench.duckdb.samples .
cp "$LOG" "$OUT/steps.log"
ls -la "$OUT"

#!/usr/bin/env bash
# benchdb on a real NVIDIA GPU, round two (issue 52), in one pass. Run from the repository root:
#
#     bash benchmarks/gpu/serve.sh OUTDIR [STEP ...]
#
# STEPs (default all, in this order): hardware serving independent client parallel compile.
#   serving      transformers serve (continuous batching) with a ~250 M-parameter LLaMA built offline
#                (random weights, bf16), swept by `benchdb run --backend openai --server ...` over
#                closed-loop concurrencies and one open-loop rate, NVML energy per output token;
#                nvidia-smi's 100 ms power log runs beside it (benchmarks/gpu/compare_serving.py
#                integrates it over each load point's energy window)
#   independent  one more server, measured in turn by benchdb (--url) and by
#                benchmarks/gpu/serving_independent.py (threads + http.client) at two concurrencies
#   compile      eager, compile:reduce-overhead (CUDA graphs) and compile:max-autotune on a
#                BERT-base-shaped model, eager and reduce-overhead on the LLaMA's forward pass
#   client       benchmarks/serving_client.py against the stub: where one client process saturates
#   parallel     --parallel auto on the CPU side (numpy matmul)
#
# BUDGET (default 500) caps the seconds of the measuring steps. Needs python3 with a CUDA build of
# torch and nvidia-ml-py; the other packages (duckdb, pydantic, transformers[serving] without torch,
# benchdb itself) come from build/gpu-wheels when present (`bash benchmarks/gpu/wheels.sh` builds it
# on the CPU machine for the GPU machine's Python), installed with pip --target into $W/site.
set -u
OUT=${1:?usage: serve.sh OUTDIR [STEP ...]}
shift
STEPS=" ${*:-hardware serving independent client parallel compile} "
want() { [[ $STEPS == *" $1 "* ]]; }
source "$(dirname "$0")/lib.sh"
begin gpu2 500

use_wheels
machine_facts
nproc | tee "$W/nproc.txt"
smi_log
TF=$(command -v transformers || echo "$(dirname "$(command -v "$PY")")/transformers")
DEVICE=${DEVICE:-cuda:0}

want hardware && step hardware 60 "$PY" -m benchdb hardware

if want serving || want independent; then
  step build-llm 90 "$PY" -m benchdb.testing.tiny_llm --size "${LLM_SIZE:-small}" "$W/llm"
fi
SERVE="$TF serve {model} --port {port} --continuous-batching --device $DEVICE"
load=(--seq-len 128 --gen-tokens 64 --warmup 4 --min-iters 10 --min-time 3 --max-time 12 --server-timeout 180)
if want serving; then
  step serving 260 "$PY" -m benchdb run --backend openai --device $DEVICE --model "$W/llm" --server "$SERVE" \
    --concurrency ${CONCURRENCY:-1,8,32,64} --tag gpu-serving "${load[@]}" --out "$W/results"
  [ "${RATE-poisson:16}" ] && step serving-rate 120 "$PY" -m benchdb run --backend openai --device $DEVICE \
    --model "$W/llm" --server "$SERVE" --request-rate "${RATE-poisson:16}" --tag gpu-serving "${load[@]}" \
    --out "$W/results"
fi

if want independent; then
  port=18231
  $TF serve "$W/llm" --port $port --continuous-batching --device $DEVICE >"$W/server-independent.log" 2>&1 &
  SERVER=$!
  "$PY" -c "import sys, time, urllib.request as u
for _ in range(180):
    try:
        u.urlopen(sys.argv[1], timeout=2); break
    except OSError:
        time.sleep(1)" "http://127.0.0.1:$port/health"
  url=http://127.0.0.1:$port
  # both clients send the same prompts: 16 of 128 tokens of the model's own tokenizer
  "$PY" -c "import json, sys; from tokenizers import Tokenizer; from benchdb.testing.tiny_llm import sentences
t = Tokenizer.from_file(sys.argv[1] + '/tokenizer.json'); ids = t.encode(' '.join(sentences(600))).ids
[print(json.dumps({'prompt': t.decode(ids[i * 128:(i + 1) * 128])})) for i in range(16)]" "$W/llm" >"$W/prompts.jsonl"
  for c in 1 16; do
    n=$(( c == 1 ? 12 : 64 ))
    ind=("$PY" benchmarks/gpu/serving_independent.py "$url" "$W/llm" --concurrency $c --requests $n \
         --prompts "$W/prompts.jsonl" --max-tokens 64)
    step "indep-$c-a" 60 "${ind[@]}" && cat "$W/indep-$c-a.txt" >>"$W/independent.jsonl"
    step "bench-url-$c" 90 "$PY" -m benchdb run --backend openai --url "$url" --server-hardware gpu-box \
      --model "$W/llm" --concurrency $c --prompts "$W/prompts.jsonl" --tag gpu-independent "${load[@]}" \
      --out "$W/results"
    step "indep-$c-b" 60 "${ind[@]}" && cat "$W/indep-$c-b.txt" >>"$W/independent.jsonl"
  done
  kill -TERM -- $SERVER 2>/dev/null; pkill -f "serve $W/llm" 2>/dev/null; wait $SERVER 2>/dev/null
fi

want client && step client 120 "$PY" benchmarks/serving_client.py --ttft-ms 20 --itl-ms 2 --max-tokens 64 \
  --concurrency ${CLIENT_CONCURRENCY:-1,16,64,256,512}
# four models on 4 cores each: one after another, then at once on disjoint cores (--parallel auto)
par=(--backend numpy --model matmul:256 --model matmul:512 --model matmul:768 --model matmul:1024 --threads 4 \
     --min-time 1 --max-time 3 --out "$W/results")
want parallel && step parallel-serial 90 "$PY" -m benchdb run "${par[@]}" --tag gpu-serial
want parallel && step parallel 90 "$PY" -m benchdb run "${par[@]}" --parallel auto --tag gpu-parallel

if want compile; then
  "$PY" -c "import torch, transformers as T; torch.manual_seed(0); T.logging.set_verbosity_error(); \
T.BertModel(T.BertConfig()).save_pretrained('$W/bert-base')" >"$W/bert-base.txt" 2>&1
  c=(--batch-size 8 --seq-len 128 --precision bf16 --warmup 10 --min-iters 50 --min-time 1 --max-time 3 \
     --timeout 240 --tag gpu-compile --out "$W/results")
  step compile-eager 90 "$PY" -m benchdb run --backend pytorch --device cuda --model "$W/bert-base" --mode eager "${c[@]}"
  step compile-ro 150 "$PY" -m benchdb run --backend pytorch --device cuda --model "$W/bert-base" \
    --mode compile:reduce-overhead "${c[@]}"
  if [ -d "$W/llm" ]; then
    step compile-llm 200 "$PY" -m benchdb run --backend pytorch --device cuda --model "$W/llm" \
      --mode eager,compile:reduce-overhead --gen-tokens 16 "${c[@]}"
  fi
  # last: max-autotune may take minutes to tune its kernels
  step compile-ma 240 "$PY" -m benchdb run --backend pytorch --device cuda --model "$W/bert-base" \
    --mode compile:max-autotune "${c[@]}"
fi

kill $SMI 2>/dev/null

DEADLINE=$(( $(date +%s) + 120 ))   # the packing steps' own budget
step ingest 60 "$PY" -m benchdb ingest "$W/results"
step points 60 "$PY" -m benchdb report --serving
step compare 60 "$PY" benchmarks/gpu/compare_serving.py "$W"
step results 60 "$PY" -m benchdb query "SELECT model_id, backend, mode, precision, batch_size, input_shape, status, \
metric, round(median*1e3, 4) AS median_ms, validity_reasons FROM results_latest WHERE backend <> 'openai' ORDER BY ALL"

tar -C "$W" -czf "$OUT/gpu2.tar.gz" --exclude=llm --exclude=bert-base --exclude=site .
cp "$LOG" "$OUT/steps.log"
ls -la "$OUT"

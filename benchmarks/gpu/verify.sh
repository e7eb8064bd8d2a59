#!/usr/bin/env bash
# benchdb on a real NVIDIA GPU, in one pass (issue 38). Run from the repository root:
#
#     bash benchmarks/gpu/verify.sh OUTDIR [STEP ...]
#
# STEPs (default all but ttr): hardware eager agreement calibrate compile ort; ttr runs
# benchmarks/time_to_result.py on the CPU. The packing steps (ingest, reports, compare.py) always run.
# BUDGET (default 480) caps the seconds of the measuring steps.
#
# Needs python3 with a CUDA build of torch, transformers and nvidia-ml-py, and benchdb importable
# (pip install -e . or a wheel on PYTHONPATH). Every step is timed and kept going past a failure;
# OUTDIR/gpu.tar.gz holds the contract files, the warehouse (catalog and samples), the report,
# nvidia-smi's own log and the independent measures, for benchmarks/gpu/compare.py. The packages a
# GPU image lacks come from build/gpu-wheels when present (`bash benchmarks/gpu/wheels.sh`).
set -u
OUT=${1:?usage: verify.sh OUTDIR [STEP ...]}
shift
STEPS=" ${*:-hardware eager agreement calibrate compile ort} "
want() { [[ $STEPS == *" $1 "* ]]; }
source "$(dirname "$0")/lib.sh"
begin gpu 480
use_wheels
machine_facts
nvidia-smi -q -d PERFORMANCE,POWER,CLOCK >"$W/smi_q_before.txt" 2>&1
smi_log

common=(--warmup 5 --min-iters 20 --min-time 0.3 --max-time 2 --gen-tokens 8 --timeout 300 --out "$W/results")
want hardware && step hardware 120 "$PY" -m benchdb hardware
want eager && step eager 400 "$PY" -m benchdb run --backend pytorch --device cuda --model tiny:bert --model tiny:vit \
  --model tiny:llama --batch-size 1,4 --seq-len 32 --precision fp32,fp16,bf16 --tag gpu-eager "${common[@]}"
# A BERT-base-shaped model (random weights) at a size that keeps the GPU busy (batch 64, seq 512:
# ~7 Tflop a call): at batch 8, seq 128 an H200 waits for the host's launches, and the same loop
# gave 4.4 ms in one process and 7.6 ms in the next
if want agreement; then
  "$PY" -c "import torch, transformers as T; torch.manual_seed(0); T.logging.set_verbosity_error(); \
T.BertModel(T.BertConfig()).save_pretrained('$W/bert-base')" >"$W/bert-base.txt" 2>&1
  ind=("$PY" benchmarks/gpu/independent.py --model "$W/bert-base" --batch 64 --seq 512 --iters 150 --precision)
  for p in ${AGREE_PRECISIONS:-fp16 bf16}; do
    step "bare-$p-1" 120 "${ind[@]}" $p && cat "$W/bare-$p-1.txt" >>"$W/independent.jsonl"
    step "bench-$p" 200 "$PY" -m benchdb run --backend pytorch --device cuda --model "$W/bert-base" \
      --batch-size 64 --seq-len 512 --precision $p --repeats 3 --warmup 10 --min-iters 50 --min-time 2 \
      --max-time 4 --timeout 300 --tag gpu-agreement --out "$W/results"
    step "bare-$p-2" 120 "${ind[@]}" $p && cat "$W/bare-$p-2.txt" >>"$W/independent.jsonl"
  done
  step independent-tiny 120 "$PY" benchmarks/gpu/independent.py --model tiny:bert --batch 4 --seq 32 --precision fp16
  cat "$W/independent-tiny.txt" >>"$W/independent.jsonl"
fi

want calibrate && step calibrate 120 "$PY" -m benchdb calibrate --device cuda:0
if want compile; then
  step compile 300 "$PY" -m benchdb run --backend pytorch --device cuda --mode compile --model tiny:bert \
    --batch-size 4 --seq-len 32 --precision ${COMPILE_PRECISIONS:-fp32,fp16,bf16} --tag gpu-compile "${common[@]}"
fi
# time to a valid result on this machine's CPU, quiet (not a default step: CPU only, ~2 min)
want ttr && step ttr 300 "$PY" benchmarks/time_to_result.py --rounds "${TTR_ROUNDS:-5}" --threads 2
want ort && step ort-cuda 200 "$PY" -m benchdb run --backend onnxruntime --device cuda --ep CUDA --model tiny:bert \
  --batch-size 1 --seq-len 32 --tag gpu-ort "${common[@]}"

kill $SMI 2>/dev/null
nvidia-smi -q -d PERFORMANCE,POWER,CLOCK >"$W/smi_q_after.txt" 2>&1

DEADLINE=$(( $(date +%s) + 150 ))   # the packing steps' own budget
step ingest 200 "$PY" -m benchdb ingest "$W/results"
step optimal 120 "$PY" -m benchdb report --optimal-hardware
step report 200 "$PY" -m benchdb report --all --out "$W/report.html"
step results 60 "$PY" -m benchdb query "SELECT model_id, backend, mode, precision, batch_size, status, \
metric, round(median*1e3, 4) AS median_ms, validity_reasons FROM results_latest \
WHERE metric IN ('latency_s', 'generate_s') OR metric IS NULL ORDER BY ALL"
step compare 120 "$PY" benchmarks/gpu/compare.py "$W"

tar -C "$W" -czf "$OUT/gpu.tar.gz" --exclude=bert-base .
cp "$LOG" "$OUT/steps.log"
ls -la "$OUT"

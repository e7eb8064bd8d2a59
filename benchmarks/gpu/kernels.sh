#!/usr/bin/env bash
# The kernelized modes on a real NVIDIA GPU (issue 48), in one pass. Run from the repository root:
#
#     bash benchmarks/gpu/kernels.sh OUTDIR
#
# eager vs kernels vs kernels+compile on a small LLaMA-shaped model (benchdb.testing.tiny_llm --size
# small: ~250 M parameters, 16 layers, bf16, random weights, built offline), its 33 RMSNorm layers
# swapped for a Triton RMSNorm that this script writes as a local kernel repository (the layout the
# kernels library loads: build/torch-cuda/{metadata.json,__init__.py,layers.py}), since the Hub cannot
# be reached from the GPU machine. Then it ingests and prints each scenario's latency, the replaced
# modules and the agreement with the fp32 eager model (max_abs_err, max_rel_err, cosine_similarity,
# token_agreement).
#
# Needs python3 with a CUDA build of torch (and its triton), nvidia-ml-py, and the packages of
# build/gpu-wheels (`bash benchmarks/gpu/wheels.sh` on the CPU machine: benchdb, transformers, kernels,
# duckdb, ...), installed with pip --target into $W/site. BUDGET (default 420) caps the seconds of the
# measuring steps. DEVICE (default cuda), PRECISION (bf16), SIZE (small) and BATCHES (1,8) change the
# run; DEVICE=cpu PRECISION=fp32 SIZE=tiny checks the script on a CPU (the layer then computes with torch).
set -u
OUT=${1:?usage: kernels.sh OUTDIR}
DEVICE=${DEVICE:-cuda}
source "$(dirname "$0")/lib.sh"
begin kernels 420

use_wheels
"$PY" -c "import torch, transformers, kernels, benchdb; print('python', __import__('sys').version.split()[0], \
'torch', torch.__version__, 'cuda', torch.version.cuda, 'transformers', transformers.__version__, 'kernels', \
kernels.__version__, 'benchdb', benchdb.__file__)" | tee "$W/versions.txt"
{ "$PY" -c "import triton; print('triton', triton.__version__)" 2>/dev/null || echo "no triton: the layer computes with torch"; } \
  | tee -a "$W/versions.txt"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total,power.limit \
  --format=csv | tee "$W/gpu.csv"
command -v nvidia-smi >/dev/null && smi_log

step build-llm 120 "$PY" -m benchdb.testing.tiny_llm --size "${SIZE:-small}" "$W/llm"

# The local kernel repository: a noarch CUDA build (torch-cuda) and the same package as a CPU build
# (torch-cpu), where the layer computes with torch, so the script can be checked without a GPU.
KREPO=$W/triton-rmsnorm
for variant in cuda cpu; do
  mkdir -p "$KREPO/build/torch-$variant"
  printf '{"name": "triton-rmsnorm", "id": "_triton_rmsnorm_%s", "version": 1, "license": "Apache-2.0", "backend": {"type": "%s"}, "python-depends": []}\n' \
    "$variant" "$variant" >"$KREPO/build/torch-$variant/metadata.json"
  echo "from . import layers" >"$KREPO/build/torch-$variant/__init__.py"
  cat >"$KREPO/build/torch-$variant/layers.py" <<'EOF'
"""RMSNorm as LlamaRMSNorm computes it (normalise in fp32, cast to the input's dtype, times the
weight), one Triton program per row."""
import torch
from torch import nn

try:
    import triton
    import triton.language as tl
except ImportError:            # a CPU build of torch
    triton = None

if triton is not None:
    @triton.jit
    def _rmsnorm(x_ptr, w_ptr, y_ptr, stride, n_cols, eps, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        mask = cols < n_cols
        raw = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0)
        x = raw.to(tl.float32)
        rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / n_cols + eps)
        normed = (x * rstd).to(raw.dtype).to(tl.float32)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(y_ptr + row * n_cols + cols, (w * normed).to(y_ptr.dtype.element_ty), mask=mask)


class TritonRMSNorm(nn.Module):
    can_torch_compile = True

    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        if triton is None or not hidden_states.is_cuda:
            x = hidden_states.to(torch.float32)
            x = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.variance_epsilon)
            return self.weight * x.to(hidden_states.dtype)
        shape = hidden_states.shape
        x = hidden_states.reshape(-1, shape[-1]).contiguous()
        y = torch.empty(x.shape, dtype=torch.promote_types(self.weight.dtype, x.dtype), device=x.device)
        _rmsnorm[(x.shape[0],)](x, self.weight, y, x.stride(0), x.shape[1], self.variance_epsilon,
                                BLOCK=triton.next_power_of_2(x.shape[1]))
        return y.reshape(shape)
EOF
done

# the kernel alone against transformers' LlamaRMSNorm on random rows, before benchdb measures it
step kernel-check 60 "$PY" -c "
import sys, torch
from pathlib import Path
from kernels import get_local_kernel
from transformers.models.llama.modeling_llama import LlamaRMSNorm
dev = sys.argv[2]; dtype = torch.bfloat16 if dev != 'cpu' else torch.float32
ref = LlamaRMSNorm(1024).to(dev, dtype); torch.nn.init.normal_(ref.weight)
layer = get_local_kernel(Path(sys.argv[1])).layers.TritonRMSNorm
x = torch.randn(8, 128, 1024, device=dev, dtype=dtype)
got = layer.forward(ref, x)
print('kernel vs LlamaRMSNorm', dtype, 'max abs err', (got.float() - ref(x).float()).abs().max().item())
" "$KREPO" "$DEVICE"

run=(--backend pytorch --device "$DEVICE" --model "$W/llm" --precision "${PRECISION:-bf16}" --batch-size "${BATCHES:-1,8}"
     --seq-len 128 --gen-tokens 32 --warmup 5 --min-iters 20 --min-time 1 --max-time 4 --timeout 300
     --kernels "LlamaRMSNorm=$KREPO:TritonRMSNorm" --tag gpu-kernels --out "$W/results")
step eager-kernels 200 "$PY" -m benchdb run --mode eager,kernels "${run[@]}"
# last: compiling the 16-layer model takes its own minute or two
step kernels-compile 240 "$PY" -m benchdb run --mode kernels+compile "${run[@]}"

[ -n "${SMI:-}" ] && kill "$SMI" 2>/dev/null

DEADLINE=$(( $(date +%s) + 120 ))   # the packing steps' own budget
step ingest 60 "$PY" -m benchdb ingest "$W/results"
step latency 60 "$PY" -m benchdb query "SELECT r.mode, r.precision, r.batch_size, r.status, r.validity, m.metric, \
round(m.median*1e3, 4) AS median_ms, m.n FROM results r JOIN result_metrics m USING (result_id) WHERE m.metric IN \
('latency_s', 'ttft_s', 'tpot_s', 'first_call_s') ORDER BY m.metric, r.batch_size, r.mode"
step agreement 60 "$PY" -m benchdb query "SELECT r.mode, r.batch_size, r.status, m.metric, m.median AS value \
FROM results r JOIN result_metrics m USING (result_id) WHERE m.metric IN ('max_abs_err', 'max_rel_err', \
'cosine_similarity', 'token_agreement') ORDER BY r.mode, r.batch_size, m.metric"
step applied 60 "$PY" -m benchdb query "SELECT mode, batch_size, status, error, json_extract_string(options, \
'\$.kernels') AS mapping, json_extract_string(extra, '\$.kernels.replaced') AS replaced, \
json_extract_string(extra, '\$.kernels.layers[0].kernel') AS kernel FROM results WHERE mode LIKE 'kernels%' \
ORDER BY mode, batch_size"

tar -C "$W" -czf "$OUT/kernels.tar.gz" --exclude=llm --exclude=site .
cp "$LOG" "$OUT/steps.log"
ls -la "$OUT"

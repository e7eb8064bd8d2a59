# Shared by benchmarks/gpu/*.sh: the work folder and a step runner with a time budget. Source it after
# setting OUT, then call `begin NAME SECONDS`.
begin() {  # begin NAME SECONDS: W (a new work folder with results/), LOG, PY, the warehouse and the
  # offline environment, and DEADLINE: BUDGET (default SECONDS) from now for the measuring steps
  W=$(mktemp -d "/tmp/benchdb-$1.XXXX")
  mkdir -p "$OUT" "$W/results"
  export BENCHDB_DB=$W/bench.duckdb PYTHONUNBUFFERED=1 TZ=UTC HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
  PY=${PYTHON:-python3}
  LOG=$W/steps.log
  BUDGET=${BUDGET:-$2}
  DEADLINE=$(( $(date +%s) + BUDGET ))
}

step() {  # step NAME SECONDS CMD...: one timed step, its output in $W/NAME.txt and the log
  local name=$1 limit=$2; shift 2
  local t0 t1 rc left=$(( DEADLINE - $(date +%s) ))
  if [ "$left" -lt 10 ]; then echo "== $name skipped: budget spent" | tee -a "$LOG"; return; fi
  [ "$limit" -gt "$left" ] && limit=$left
  t0=$(date +%s%N)
  timeout "$limit" "$@" >"$W/$name.txt" 2>&1
  rc=$?; t1=$(date +%s%N)
  echo "== $name rc=$rc ms=$(( (t1 - t0) / 1000000 )) start=$t0 end=$t1" | tee -a "$LOG"
  tail -n 25 "$W/$name.txt"
}

machine_facts() {  # the versions benchdb runs with and the GPU, into $W/versions.txt and $W/gpu.csv
  "$PY" -c "import sys, importlib.util as u, torch, duckdb, benchdb
tf = __import__('transformers').__version__ if u.find_spec('transformers') else 'absent'
print('python', sys.version.split()[0], 'torch', torch.__version__, 'cuda', torch.version.cuda, 'transformers', tf,
      'duckdb', duckdb.__version__, 'benchdb', benchdb.__file__)" | tee "$W/versions.txt"
  nvidia-smi --query-gpu=name,driver_version,memory.total,power.limit,clocks.max.sm --format=csv | tee "$W/gpu.csv"
}

smi_log() {  # nvidia-smi's own log beside benchdb's NVML samples, every 100 ms, into $W/smi.csv
  local fields=timestamp,power.draw,clocks.sm,clocks.mem,utilization.gpu,temperature.gpu
  nvidia-smi --help-query-gpu | grep -q '"power.draw.instant"' && fields=$fields,power.draw.instant
  nvidia-smi --query-gpu=$fields --format=csv,nounits -lms 100 >"$W/smi.csv" 2>&1 &
  SMI=$!
}

use_wheels() {  # install build/gpu-wheels (when present) into $W/site and import benchdb from there
  [ -d build/gpu-wheels ] && [ -z "${NO_WHEELS:-}" ] || return 0   # NO_WHEELS=1: the current python's own packages
  step install 90 "$PY" -m pip install -q --no-deps --no-index --target "$W/site" build/gpu-wheels/*.whl
  if ! [ -d "$W/site/benchdb" ]; then   # no pip on the image: a wheel is a zip of its files
    step unzip 60 "$PY" -c "import sys, zipfile; [zipfile.ZipFile(w).extractall(sys.argv[1]) for w in sys.argv[2:]]" \
      "$W/site" build/gpu-wheels/*.whl
    mkdir -p "$W/site/bin" && printf '#!/bin/sh\nexec %s -c "from transformers.cli.transformers import main; main()" "$@"\n' \
      "$PY" >"$W/site/bin/transformers" && chmod +x "$W/site/bin/transformers"
  fi
  # the wheels' benchdb, never the working tree's (python -m would put the current folder first)
  export PYTHONPATH=$W/site PATH=$W/site/bin:$PATH PYTHONSAFEPATH=1
}

serve_tiny_llm() {  # serve_tiny_llm PORT: build tiny_llm (LLM_SIZE, default small) into $W/llm and serve it
  # with `transformers serve --continuous-batching` on DEVICE (default cuda:0); sets TF, url and SERVER
  TF=${TF:-$(command -v transformers || echo "$(dirname "$(command -v "$PY")")/transformers")}
  step build-llm 90 "$PY" -m benchdb.testing.tiny_llm --size "${LLM_SIZE:-small}" "$W/llm"
  url=http://127.0.0.1:$1
  $TF serve "$W/llm" --port "$1" --continuous-batching --device "${DEVICE:-cuda:0}" >"$W/server.log" 2>&1 &
  SERVER=$!
  step server-up 150 "$PY" -c "import os, sys, time, urllib.request as u
for _ in range(300):
    try:
        u.urlopen(sys.argv[1], timeout=2); break
    except OSError:
        os.kill(int(sys.argv[2]), 0)   # the server died: stop waiting
        time.sleep(0.5)" "$url/health" "$SERVER"
}

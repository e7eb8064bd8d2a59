# Shared by benchmarks/gpu/*.sh: a step runner with a time budget. Source it after setting W (the
# work folder), LOG and DEADLINE (epoch seconds by which every measuring step must have ended).
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

smi_log() {  # nvidia-smi's own log beside benchdb's NVML samples, every 100 ms, into $W/smi.csv
  local fields=timestamp,power.draw,clocks.sm,clocks.mem,utilization.gpu,temperature.gpu
  nvidia-smi --help-query-gpu | grep -q '"power.draw.instant"' && fields=$fields,power.draw.instant
  nvidia-smi --query-gpu=$fields --format=csv,nounits -lms 100 >"$W/smi.csv" 2>&1 &
  SMI=$!
}

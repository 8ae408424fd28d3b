#!/usr/bin/env bash
# The k = 8 rigid sphere (icosphere:L, cbie, p = 8) on the GPUs of one host, for several
# layouts of ranks x threads over a set of GPUs: the whole solve and its MatMult on one GPU
# against two (or more). Each run sees only its GPUs (CUDA_VISIBLE_DEVICES); bem_solve gives
# each rank the GPU of its node-local rank, modulo the GPUs it sees. Prints a Markdown table;
# the full output of each run and its GPU memory samples are kept in LOG_DIR.
# Needs bash, awk, sed, nvidia-smi and mpiexec (Open MPI).
#   bench/mpi_gpus.sh BEM_SOLVE "9:1x32@0 9:2x16@0 9:2x16@0,1"
# A run is LEVEL:RANKSxTHREADS@GPUS (GPUS as CUDA_VISIBLE_DEVICES takes them).
# Environment: LOG_DIR (mpi_gpus_logs), MPIEXEC (mpiexec), EXTRA (more bem_solve options),
# TIMEOUT (seconds a run, 400).
set -euo pipefail
if [ $# -lt 2 ] || [ ! -x "$1" ]; then
  echo "usage: [LOG_DIR=dir] [EXTRA=\"...\"] $0 BEM_SOLVE \"LEVEL:RANKSxTHREADS@GPUS ...\"" >&2
  exit 1
fi
bem=$1
runs=$2
log_dir=${LOG_DIR:-mpi_gpus_logs}
mpiexec=${MPIEXEC:-mpiexec}
mkdir -p "$log_dir"

echo "k = 8 rigid sphere, cbie, p = 8, FMM on the GPU; $(nvidia-smi --query-gpu=name --format=csv,noheader | sort | uniq -c | sed 's/^ *//') on ${HOSTNAME:-this host}"
echo
echo "| N | ranks x threads | GPUs | set-up s | solve s | set-up + solve s | wall s | s per MatMult | iterations | relative L2 error | FMMExchange s (max rank) | peak host GB (max rank) | peak GPU memory GB (each GPU) | densities / multipole MB received per MatMult (max rank) |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for run in $runs; do
  level=${run%%:*}
  rest=${run#*:}
  layout=${rest%@*}
  gpus=${rest#*@}
  ranks=${layout%x*}
  threads=${layout#*x}
  name="L${level}_${layout}_gpu${gpus//,/}"
  log="$log_dir/$name.txt"
  samples="$log_dir/$name.gpu_memory.csv"
  # GPU memory in use, every GPU, once a second while the run lasts.
  nvidia-smi --query-gpu=index,memory.used --format=csv,noheader,nounits -l 1 >"$samples" 2>/dev/null &
  sampler=$!
  start=$(date +%s.%N)
  status=0
  # shellcheck disable=SC2086  # EXTRA is a list of options
  # PCI order, as nvidia-smi numbers them.
  CUDA_DEVICE_ORDER=PCI_BUS_ID CUDA_VISIBLE_DEVICES=$gpus OMP_NUM_THREADS=$threads timeout "${TIMEOUT:-400}" "$mpiexec" \
    --allow-run-as-root --oversubscribe --bind-to none -x OMP_NUM_THREADS -x CUDA_VISIBLE_DEVICES -x CUDA_DEVICE_ORDER \
    -n "$ranks" "$bem" -mesh "icosphere:$level" -k 8 -bem_formulation cbie -fmm_p 8 \
    -fmm_device gpu -log_view -fmm_view ${EXTRA:-} >"$log" 2>&1 || status=$?
  wall=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
  kill "$sampler" 2>/dev/null || true
  wait "$sampler" 2>/dev/null || true
  n=$(sed -n 's/.*: N = \([0-9]*\) elements.*/\1/p' "$log")
  if [ "$status" -ne 0 ] || ! grep -q "^  times " "$log"; then
    echo "| ${n:-icosphere:$level} | $ranks x $threads | $gpus | failed (exit $status): see $log | | | | | | | | | | |"
    continue
  fi
  setup=$(sed -n 's/^  times *set-up \([0-9.]*\) s.*/\1/p' "$log")
  solve=$(sed -n 's/^  times .*, solve \([0-9.]*\) s.*/\1/p' "$log")
  per=$(sed -n 's/.*, \([0-9.e+-]*\) s per MatMult.*/\1/p' "$log")
  its=$(sed -n 's/^ *solver *\([0-9]*\) iterations.*/\1/p' "$log")
  l2=$(sed -n 's/.*relative L2 = \([0-9.e+-]*\).*/\1/p' "$log")
  exchange=$(awk '$1 == "FMMExchange" { print $4; exit }' "$log")
  peak=$(sed -n 's/.*peak host \([0-9.e+-]*\) GB.*/\1/p' "$log")
  traffic=$(sed -n 's/.*receives at most \([0-9]*\) densities and \([0-9.]*\) MB of multipoles.*/\1 \/ \2/p' "$log")
  total=$(awk -v a="$setup" -v b="$solve" 'BEGIN { printf "%.2f", a + b }')
  # The sampler numbers the host's GPUs; keep the ones this run saw.
  gpu_peak=$(awk -F', *' -v seen="$gpus" 'BEGIN { n = split(seen, s, ","); for (i = 1; i <= n; ++i) want[s[i]] = 1 }
    ($1 in want) && $2 + 0 > m[$1] { m[$1] = $2 + 0 }
    END { out = ""; for (i = 1; i <= n; ++i) out = out (i == 1 ? "" : " / ") sprintf("%.1f", m[s[i]] / 1024); print out }' "$samples")
  echo "| $n | $ranks x $threads | $gpus | $setup | $solve | $total | $wall | $per | $its | $l2 | ${exchange:--} | $peak | ${gpu_peak:--} | ${traffic:--} |"
done

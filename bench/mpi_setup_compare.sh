#!/usr/bin/env bash
# Two builds of the distributed solver side by side on one host (before and after a change to
# the set-up): per run the largest rank's peak host memory and heap held after the solve, the
# set-up and BEMPartition seconds, the seconds per MatMult, iterations and error, and the
# FMM's tree-and-lists MiB on rank 0 (-fmm_view). Prints a Markdown table; full logs in LOG_DIR.
#   bench/mpi_setup_compare.sh BEFORE_BEM_SOLVE AFTER_BEM_SOLVE
# Environment: RUNS (a ;-separated list of "ranks threads bem_solve options", default below),
# LOG_DIR (setup_compare_logs), MPIEXEC (mpiexec). Needs bash, awk, sed, Open MPI's mpiexec.
set -euo pipefail
if [ $# -ne 2 ] || [ ! -x "$1" ] || [ ! -x "$2" ]; then
  echo "usage: [RUNS=\"P T options;...\"] $0 BEFORE_BEM_SOLVE AFTER_BEM_SOLVE" >&2
  exit 1
fi
cbie="-k 8 -bem_formulation cbie -fmm_p 8 -log_view -fmm_view"
runs=${RUNS:-"16 1 -mesh icosphere:9 $cbie -fmm_device cpu -ksp_max_it 1;\
16 1 -mesh icosphere:8 $cbie -fmm_device cpu"}
log_dir=${LOG_DIR:-setup_compare_logs}
mpiexec=${MPIEXEC:-mpiexec}
mkdir -p "$log_dir"

echo "| ranks x threads | options | build | peak host GB / heap after GB (max rank) | set-up s | BEMPartition s (max rank) | s per MatMult | iterations, L2 error | FMM tree and lists MiB (rank 0) |"
echo "|---|---|---|---|---|---|---|---|---|"
IFS=';' read -ra list <<<"$runs"
n=0
for run in "${list[@]}"; do
  read -r ranks threads options <<<"$run"
  n=$((n + 1))
  for build in before after; do
    bem=$1
    [ "$build" = after ] && bem=$2
    log="$log_dir/run${n}_$build.txt"
    # shellcheck disable=SC2086  # options is a list
    OMP_NUM_THREADS=$threads "$mpiexec" --allow-run-as-root --oversubscribe --bind-to none \
      -x OMP_NUM_THREADS -n "$ranks" "$bem" $options >"$log" 2>&1 || true
    peak=$(sed -n 's/.*peak host \([0-9.e+-]*\) GB.*heap in use after it \([0-9.e+-]*\) GB.*/\1 \/ \2/p' "$log")
    setup=$(sed -n 's/.*set-up \([0-9.e+-]*\) s,.*/\1/p' "$log")
    per=$(sed -n 's/.*, \([0-9.e+-]*\) s per MatMult.*/\1/p' "$log")
    its=$(sed -n 's/^ *solver *\([0-9]*\) iterations.*/\1/p' "$log")
    l2=$(sed -n 's/.*relative L2 = \([0-9.e+-]*\).*/\1/p' "$log")
    partition=$(awk '$1 == "BEMPartition" { print $4; exit }' "$log")
    tree=$(sed -n 's/.*tree and lists \([0-9.]*\),.*/\1/p' "$log" | head -1)
    echo "| $ranks x $threads | \`$options\` | $build | ${peak:-failed: $log} | $setup | ${partition:--} | $per | $its, $l2 | ${tree:--} |"
  done
done

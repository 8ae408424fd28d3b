#!/usr/bin/env bash
# The k = 8 rigid sphere (icosphere:L, p = 8) on one host for several layouts of
# ranks x threads: MatMult and near-field time, near-field point pairs summed
# over ranks, iterations and error. Prints a Markdown table; the full output of
# each run is kept in LOG_DIR. Needs only bash, awk, sed, mpiexec (Open MPI).
#   bench/mpi_ranks.sh BEM_SOLVE                      # L = 7, 1x16 2x8 4x4 16x1
#   L=4 LAYOUTS="1x2 2x1" bench/mpi_ranks.sh build/bin/bem_solve
# Environment: L (mesh level, 7), LAYOUTS ("1x16 2x8 4x4 16x1"), LOG_DIR
# (mpi_ranks_logs), MPIEXEC (mpiexec), EXTRA (more bem_solve options; on more than one rank
# the FMM is distributed unless EXTRA has -fmm_distribute false). A run stopped by
# -ksp_max_it in EXTRA (DIVERGED_ITS: a non-zero exit) is read all the same: only a run without
# the summary's times failed.
set -euo pipefail
if [ $# -lt 1 ] || [ ! -x "$1" ]; then
  echo "usage: [L=7] [LAYOUTS=\"1x16 2x8 4x4 16x1\"] $0 BEM_SOLVE" >&2
  exit 1
fi
bem=$1
level=${L:-7}
layouts=${LAYOUTS:-"1x16 2x8 4x4 16x1"}
log_dir=${LOG_DIR:-mpi_ranks_logs}
mpiexec=${MPIEXEC:-mpiexec}
mkdir -p "$log_dir"

echo "icosphere:$level, k = 8, p = 8, on ${HOSTNAME:-this host}"
echo
echo "| ranks x threads | s per MatMult | vs first row | FMMNear s (max over ranks) | near-field point pairs (all ranks) | iterations | relative L2 error | FMMExchange s (max over ranks) | peak host GB (max rank) | densities / multipole MB received per MatMult (max rank) |"
echo "|---|---|---|---|---|---|---|---|---|---|"
first=""
for layout in $layouts; do
  ranks=${layout%x*}
  threads=${layout#*x}
  log="$log_dir/L${level}_${layout}.txt"
  # shellcheck disable=SC2086  # EXTRA is a list of options
  if ! OMP_NUM_THREADS=$threads "$mpiexec" --allow-run-as-root --oversubscribe --bind-to none \
      -x OMP_NUM_THREADS -n "$ranks" "$bem" -mesh "icosphere:$level" -k 8 -bem_formulation cbie -fmm_p 8 -log_view \
      ${EXTRA:-} >"$log" 2>&1 && ! grep -q "^  times " "$log"; then
    echo "| $ranks x $threads | failed: see $log | | | | | | | | |"
    continue
  fi
  per=$(sed -n 's/.*, \([0-9.e+-]*\) s per MatMult.*/\1/p' "$log")
  pairs=$(sed -n 's/.* \([0-9]*\) near-field point pairs (all ranks).*/\1/p' "$log")
  its=$(sed -n 's/^ *solver *\([0-9]*\) iterations.*/\1/p' "$log")
  l2=$(sed -n 's/.*relative L2 = \([0-9.e+-]*\).*/\1/p' "$log")
  # -log_view: event name, count (max, ratio), time (max over ranks, ratio), ...
  near=$(awk '$1 == "FMMNear" { print $4; exit }' "$log")
  exchange=$(awk '$1 == "FMMExchange" { print $4; exit }' "$log")
  peak=$(sed -n 's/.*peak host \([0-9.e+-]*\) GB.*/\1/p' "$log")
  traffic=$(sed -n 's/.*receives at most \([0-9]*\) densities and \([0-9.]*\) MB of multipoles.*/\1 \/ \2/p' "$log")
  first=${first:-$per}
  ratio=$(awk -v a="$per" -v b="$first" 'BEGIN { if (b > 0) printf "%.2f", a / b }')
  echo "| $ranks x $threads | $per | $ratio | $near | $pairs | $its | $l2 | ${exchange:--} | $peak | ${traffic:--} |"
done

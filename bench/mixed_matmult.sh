#!/usr/bin/env bash
# The MatMult of surface-condition problems against the rigid one at the same N (README,
# Surface groups): every element rigid (the reference), a uniform velocity (the operator is the
# rigid one, the data feed the right-hand side), a uniform admittance (both layers on every
# element: the costliest mix) and pressure 0 (the single layer alone). Each run stops after
# -ksp_max_it iterations (the MatMult's time is what is compared; the answer is not). The table
# gives the summary's seconds per MatMult and its ratio to the mean of the rigid runs, all
# measured in one invocation; CASES (default "rigid velocity admittance pressure rigid") picks
# the runs and their order (rigid at both ends shows the spread between runs).
#   bench/mixed_matmult.sh BEM_SOLVE MESH DEVICE [ITERATIONS [EXTRA OPTIONS...]]
#     e.g. bench/mixed_matmult.sh build/bin/bem_solve icosphere:8 gpu 10
# Logs in ${LOG_DIR:-/tmp/mixed_matmult}, one a run (NN_case.log).
set -euo pipefail
bem=$1 mesh=$2 device=$3 iterations=${4:-10}
shift $(( $# < 4 ? $# : 4 ))
logs=${LOG_DIR:-/tmp/mixed_matmult}
mkdir -p "$logs"
common=(-mesh "$mesh" -k 8 -fmm_device "$device" -ksp_max_it "$iterations" -bem_pc petsc
        -pc_type jacobi "$@")
declare -A cases=(
  [rigid]=""
  [velocity]="-bem_default_condition velocity:1e-3"
  [admittance]="-bem_default_condition admittance:1 -bem_incident planewave"
  [pressure]="-bem_default_condition pressure:0 -bem_incident planewave")
rows=()
index=0
for name in ${CASES:-rigid velocity admittance pressure rigid}; do
  index=$((index + 1))
  log=$(printf '%s/%02d_%s.log' "$logs" "$index" "$name")
  # A stopped solve (-ksp_max_it) exits 2: the timing is still in the summary.
  # shellcheck disable=SC2086
  "$bem" "${common[@]}" ${cases[$name]} > "$log" 2>&1 || true
  line=$(grep -E "per MatMult" "$log" || true)
  seconds=$(sed -n 's/.* \([0-9.]*\) s per MatMult.*/\1/p' <<< "$line")
  mults=$(sed -n 's/.*(\([0-9]*\) MatMults).*/\1/p' <<< "$line")
  n=$(sed -n 's/.*N = \([0-9]*\) elements.*/\1/p' "$log")
  rows+=("$name ${n:-?} ${mults:-?} ${seconds:-failed}")
done
rigid_mean=$(printf '%s\n' "${rows[@]}" | awk '$1 == "rigid" && $4 != "failed" { s += $4; c++ }
                                                END { if (c) printf "%.6f", s / c }')
printf '| run | case | N | MatMults | s per MatMult | ratio to the rigid mean |\n'
printf '|---|---|---|---|---|---|\n'
index=0
for row in "${rows[@]}"; do
  index=$((index + 1))
  read -r name n mults seconds <<< "$row"
  ratio=$([ "$seconds" != failed ] && [ -n "$rigid_mean" ] &&
          awk "BEGIN { printf \"%.3f\", $seconds / $rigid_mean }" || echo -)
  echo "| $index | $name | $n | $mults | $seconds | $ratio |"
done

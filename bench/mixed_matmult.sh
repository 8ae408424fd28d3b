#!/usr/bin/env bash
# The MatMult of surface-condition problems against the rigid one at the same N (README,
# Surface groups): every element rigid (the reference), a uniform velocity (the operator is the
# rigid one, the data feed the right-hand side), a uniform admittance (both layers on every
# element: the costliest mix) and pressure 0 (the single layer alone). Each run stops after
# -ksp_max_it iterations (the MatMult's time is what is compared; the answer is not) and the
# table gives the summary's seconds per MatMult and its ratio to the rigid run's, measured in
# one invocation.
#   bench/mixed_matmult.sh BEM_SOLVE MESH DEVICE [ITERATIONS [EXTRA OPTIONS...]]
#     e.g. bench/mixed_matmult.sh build/bin/bem_solve icosphere:8 gpu 10
# Logs in ${LOG_DIR:-/tmp/mixed_matmult}; CASES (default "rigid velocity admittance pressure",
# rigid first) picks the runs.
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
printf '| case | N | MatMults | s per MatMult | ratio to rigid |\n|---|---|---|---|---|\n'
rigid_seconds=""
for name in ${CASES:-rigid velocity admittance pressure}; do
  log="$logs/$name.log"
  # A stopped solve (-ksp_max_it) exits 2: the timing is still in the summary.
  # shellcheck disable=SC2086
  "$bem" "${common[@]}" ${cases[$name]} > "$log" 2>&1 || true
  line=$(grep -E "per MatMult" "$log" || true)
  seconds=$(sed -n 's/.* \([0-9.]*\) s per MatMult.*/\1/p' <<< "$line")
  mults=$(sed -n 's/.*(\([0-9]*\) MatMults).*/\1/p' <<< "$line")
  n=$(sed -n 's/.*N = \([0-9]*\) elements.*/\1/p' "$log")
  [ -z "$seconds" ] && { echo "| $name | failed: see $log | | | |"; continue; }
  [ -z "$rigid_seconds" ] && rigid_seconds=$seconds
  ratio=$(awk "BEGIN { printf \"%.3f\", $seconds / $rigid_seconds }")
  echo "| $name | $n | $mults | $seconds | $ratio |"
done

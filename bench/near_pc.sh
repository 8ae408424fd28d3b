#!/usr/bin/env bash
# Issue 14 (first part): GMRES iterations and times with PETSc's PCs on the near-field matrix
# (-bem_near_matrix) against point Jacobi, for one mesh and formulation. Prints a Markdown table.
#   bench/near_pc.sh BEM_SOLVE [MESH=icosphere:4] [K=8] [FORMULATION=cbie] [EXTRA options...]
# Needs bash, sed.
set -euo pipefail
bem=$1
mesh=${2:-icosphere:4}
k=${3:-8}
form=${4:-cbie}
shift $(($# < 4 ? $# : 4))
echo "| PC | iterations | true rel. residual | rel. L2 error | set-up s | solve s | s per MatMult | near matrix |"
echo "|---|---|---|---|---|---|---|---|"
for pc in "jacobi" "none" "ilu" "ilu -pc_factor_levels 1" "lu" "asm"; do
  # shellcheck disable=SC2086
  out=$("$bem" -mesh "$mesh" -k "$k" -bem_formulation "$form" -pc_type $pc "$@" 2>&1)
  its=$(sed -n 's/^ *solver *\([0-9]*\) iterations, [A-Z_]*, true relative residual \(.*\)$/\1 | \2/p' <<<"$out")
  err=$(sed -n 's/^ *error .*relative L2 = //p' <<<"$out")
  times=$(sed -n 's/^ *times *set-up \([0-9.]*\) s, solve \([0-9.]*\) s, \([0-9.]*\) s per MatMult.*/\1 | \2 | \3/p' <<<"$out")
  near=$(sed -n 's/^ *preconditioner *[a-z]* on the near-field matrix (\(.*\))$/\1/p' <<<"$out")
  echo "| $pc | $its | $err | $times | ${near:-none} |"
done

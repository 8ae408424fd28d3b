#!/usr/bin/env bash
# GMRES iterations and times with each preconditioner, for one mesh and formulation:
# point Jacobi, PETSc's PCs on the near-field matrix (-bem_near_matrix) and ours
# (-bem_pc leaf_block). Prints a Markdown table.
#   bench/near_pc.sh BEM_SOLVE [MESH=icosphere:4] [K=8] [FORMULATION=cbie] [EXTRA options...]
# PCS (environment, ';'-separated) replaces the list of preconditioner options; TIMEOUT (s) caps
# each run (a row "timeout" then). Time to solution = set-up + solve; the solve includes the
# PC's set-up (near-field matrix, factorisation), also shown on its own. PC MB: the PC's own
# memory (factors, inverses), the near-field matrix apart. Needs bash, sed, timeout.
set -euo pipefail
bem=$1
mesh=${2:-icosphere:4}
k=${3:-8}
form=${4:-cbie}
shift $(($# < 4 ? $# : 4))
pcs=${PCS:-"-pc_type jacobi;-pc_type ilu;-pc_type ilu -pc_factor_levels 1;-pc_type asm;-bem_pc leaf_block"}
echo "| PC | iterations | true rel. residual | rel. L2 error | set-up s | PC set-up s | solve s | time to solution s | s per MatMult | PC MB | near matrix |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
IFS=';' read -ra list <<<"$pcs"
for pc in "${list[@]}"; do
  # shellcheck disable=SC2086
  if ! out=$(timeout "${TIMEOUT:-3600}" "$bem" -mesh "$mesh" -k "$k" -bem_formulation "$form" $pc "$@" 2>&1); then
    echo "| \`$pc\` | failed or timeout: $(tail -n 1 <<<"$out") |"
    continue
  fi
  its=$(sed -n 's/^ *solver *\([0-9]*\) iterations, [A-Z_]*, true relative residual \(.*\)$/\1 | \2/p' <<<"$out")
  err=$(sed -n 's/^ *error .*relative L2 = //p' <<<"$out")
  setup=$(sed -n 's/^ *times *set-up \([0-9.]*\) s, solve \([0-9.]*\) s, \([0-9.]*\) s per MatMult.*/\1/p' <<<"$out")
  solve=$(sed -n 's/^ *times *set-up \([0-9.]*\) s, solve \([0-9.]*\) s, \([0-9.]*\) s per MatMult.*/\2/p' <<<"$out")
  matmult=$(sed -n 's/^ *times *set-up \([0-9.]*\) s, solve \([0-9.]*\) s, \([0-9.]*\) s per MatMult.*/\3/p' <<<"$out")
  line=$(grep '^ *preconditioner' <<<"$out")
  pc_setup=$(sed -n 's/.*set up in \([0-9.]*\) s.*/\1/p' <<<"$line")
  if grep -q leaf_block <<<"$line"; then
    pc_mb=$(sed -n 's/.*inverses \([0-9.]*\) MB.*/\1/p' <<<"$line")
    near=$(sed -n 's/.*leaf_block on the \(.*\), inverses.*/\1/p' <<<"$line")
  else
    pc_mb=$(sed -n 's/.*set up in [0-9.]* s, \([0-9.]*\) MB$/\1/p' <<<"$line")
    near=$(sed -n 's/.*on the near-field matrix (\(.*\)); set up.*/\1/p' <<<"$line")
  fi
  total=$(awk -v a="$setup" -v b="$solve" 'BEGIN { printf "%.3f", a + b }')
  echo "| \`$pc\` | $its | $err | $setup | $pc_setup | $solve | $total | $matmult | $pc_mb | ${near:-none} |"
done

#!/usr/bin/env bash
# The CPU FMM's leaf size: bem_solve's MatMult and set-up against -fmm_max_leaf, on the CPU.
#   bench/cpu_leaf_size.sh BEM_SOLVE "MESH K FORM" ... 
# LEAVES (default "100 60 40 30 20") the leaf sizes; OMP_NUM_THREADS as set by the caller;
# EXTRA more options. Prints a Markdown table (bench/results/cpu_translations.md).
set -uo pipefail
bem_solve=$1
shift
field() { sed -n "s/$2/\1/p" "$1" | head -1; }
event() { awk -v e="$2" '$1 == e { print $4 }' "$1"; }
log=$(mktemp)
trap 'rm -f "$log"' EXIT
printf '| mesh | k | form | max leaf | levels | leaves | iterations | rel. L2 error | set-up s | s per MatMult | near s per MatMult | M2L s per MatMult |\n'
printf '|---|---|---|---|---|---|---|---|---|---|---|---|\n'
for case in "$@"; do
  set -- $case
  for leaf in ${LEAVES:-100 60 40 30 20}; do
    "$bem_solve" -mesh "$1" -k "$2" -bem_formulation "$3" -fmm_device cpu -fmm_max_leaf "$leaf" \
      -log_view ${EXTRA:-} > "$log" 2>&1 || { echo "| $1 | $2 | $3 | $leaf | failed |"; continue; }
    mults=$(field "$log" '.*(\([0-9]*\) MatMults).*')
    per() { awk -v t="$1" -v n="$mults" 'BEGIN { if (t != "") printf "%.4f", t / n }'; }
    echo "| $1 | $2 | $3 | $leaf | $(field "$log" '.*p = [0-9]*, \([0-9]*\) levels.*')" \
         "| $(field "$log" '.* levels, \([0-9]*\) leaves.*') | $(field "$log" '.*solver *\([0-9]*\) iterations.*')" \
         "| $(field "$log" '.*relative L2 = \([0-9.e+-]*\).*') | $(field "$log" '.*set-up \([0-9.]*\) s.*')" \
         "| $(field "$log" '.*s, \([0-9.]*\) s per MatMult.*') | $(per "$(event "$log" FMMNear)")" \
         "| $(per "$(event "$log" FMMM2L)") |"
  done
done

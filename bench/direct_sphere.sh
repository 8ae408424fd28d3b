#!/usr/bin/env bash
# k = 8 rigid sphere on icosphere meshes with the direct operator: N,
# iterations, errors against the Mie series, seconds. Prints a Markdown table.
#   bench/direct_sphere.sh BUILD_DIR "3 4 5" > table.md
set -euo pipefail
build=${1:-build}
levels=${2:-"3 4 5"}
echo "| L | N | iterations | max error | relative L2 error | set-up s | solve s | s per MatMult |"
echo "|---|---|---|---|---|---|---|---|"
for level in $levels; do
  out=$("$build/bin/bem_solve" -mesh "icosphere:$level" -k 8 -bem_formulation cbie -bem_operator direct)
  n=$(sed -n 's/.*N = \([0-9]*\) elements.*/\1/p' <<<"$out")
  its=$(sed -n 's/.*solver *\([0-9]*\) iterations.*/\1/p' <<<"$out")
  maxe=$(sed -n 's/.*max |u - exact| = \([^,]*\),.*/\1/p' <<<"$out")
  l2=$(sed -n 's/.*relative L2 = \(.*\)$/\1/p' <<<"$out")
  read -r setup solve per <<<"$(sed -n 's/.*set-up \([0-9.]*\) s, solve \([0-9.]*\) s, \([0-9.]*\) s per MatMult.*/\1 \2 \3/p' <<<"$out")"
  echo "| $level | $n | $its | $maxe | $l2 | $setup | $solve | $per |"
done

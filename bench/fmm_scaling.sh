#!/usr/bin/env bash
# FMM MatMult (D u + S q, random densities) on icosphere meshes, k = 8:
# time per element must stay flat (O(N)); per-phase breakdown and peak
# memory. One process per row, so each row's peak memory is its own.
#   bench/fmm_scaling.sh BUILD_DIR "4 5 6 7 8" "8 16" > rows.txt
set -euo pipefail
build=${1:-build}
levels=${2:-"4 5 6 7 8"}
orders=${3:-"8 16"}
for p in $orders; do
  for level in $levels; do
    extra=""
    if [ "$level" -le 5 ]; then extra="-direct"; fi
    "$build/bin/fmm_matmult" -L "$level" -p "$p" -k 8 -reps 2 $extra
  done
done

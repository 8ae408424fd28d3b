#!/usr/bin/env bash
# A frequency sweep of the rigid unit sphere in one run: its target strength in the backscatter
# direction against the Mie series (PNG), and the polar pattern at the highest k (PNG).
# Burton-Miller, so that no interior eigenfrequency of the sphere (k = 3.14, 4.49, ...) spoils
# the sweep (README, Formulation).
#   examples/sphere_sweep/run.sh [--small] [OUT_DIR]
# Full: icosphere:4 (N = 5120), k = 1 to 10 in steps of 0.25 (37 solves, a few minutes on 2
# cores); --small: icosphere:3, k = 1 to 5 in steps of 1 (what CI runs).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bem_solve=${BEM_SOLVE:-$root/build/bin/bem_solve}
mesh=icosphere:4 ks=1:10:0.25
if [ "${1:-}" = --small ]; then mesh=icosphere:3 ks=1:5:1; shift; fi
out=${1:-sphere_sweep_out}
mkdir -p "$out"
"$bem_solve" -mesh $mesh -k $ks -bem_formulation bm \
  -bem_farfield 72 -bem_farfield_csv "$out/farfield.csv" \
  -bem_sweep_csv "$out/sweep.csv" > "$out/summary.txt"
"${PYTHON:-python3}" "$root/examples/sphere_sweep/plot_ts.py" "$out"
last=$(ls "$out"/farfield_k*.csv | tail -1)
"${PYTHON:-python3}" "$root/examples/polar_plot.py" "$last" "$out/polar_last_k.png"

#!/usr/bin/env bash
# Radiation from a monopole at (0.05, 0.02, 0) inside a box 0.3 x 0.2 x 0.25 m (box.geo, meshed
# by Gmsh) at k = 9 (about 490 Hz in air): the rigid box's surface pressure, its field on the
# plane y = 0 and its far field in 72 directions. The monopole's own field is the exact answer
# on any closed surface, so bem_solve prints the errors.
#   examples/radiating_box/run.sh [--small] [OUT_DIR]
# Full: MeshSizeMax 0.03 (N = 1080); --small: 0.06 (N = 544; what CI runs).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
bem_solve=${BEM_SOLVE:-$root/build/bin/bem_solve}
size=0.03
if [ "${1:-}" = --small ]; then size=0.06; shift; fi
out=${1:-radiating_box_out}
mkdir -p "$out"
gmsh -2 "$here/box.geo" -setnumber size $size -format msh41 -o "$out/box.msh" -v 0
"$bem_solve" -mesh "$out/box.msh" -k 9 -bem_problem radiation -bem_source 0.05,0.02,0 \
  -bem_csv "$out/surface.csv" \
  -bem_field_plane -0.5,0,-0.5,1,0,0,0,0,1,51,51 -bem_field_csv "$out/plane.csv" \
  -bem_farfield 72 -bem_farfield_csv "$out/farfield.csv" | tee "$out/summary.txt"
"${PYTHON:-python3}" "$root/examples/polar_plot.py" "$out/farfield.csv" "$out/farfield.png"

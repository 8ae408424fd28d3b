#!/usr/bin/env bash
# The k = 8 rigid sphere (the shipped mesh, N = 5434) and the sound field on the plane y = 0.01
# through it: a 201 x 201 grid, -3 <= x, z <= 3, written as a structured grid (.vts) and CSV.
#   examples/sphere_plane/run.sh [--small] [OUT_DIR]
# --small: icosphere:3 (N = 1280) at k = 4 on a 41 x 41 grid (a few seconds; what CI runs).
# BEM_SOLVE names the binary (default build/bin/bem_solve); EXAMPLE_NO_VTK=1 for a build
# without VTK (CSV only).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
bem_solve=${BEM_SOLVE:-$root/build/bin/bem_solve}
small=0
if [ "${1:-}" = --small ]; then small=1; shift; fi
out=${1:-sphere_plane_out}
mkdir -p "$out"
if [ $small = 1 ]; then
  mesh=icosphere:3 k=4 grid=41
else
  mesh=$root/meshes/sphere.msh k=8 grid=201
fi
vtk=(-bem_field_vtk "$out/plane.vts" -o "$out/surface.vtu")
[ "${EXAMPLE_NO_VTK:-0}" = 1 ] && vtk=()
"$bem_solve" -mesh "$mesh" -k $k \
  -bem_field_plane -3,0.01,-3,6,0,0,0,0,6,$grid,$grid "${vtk[@]}" \
  -bem_field_csv "$out/plane.csv" | tee "$out/summary.txt"

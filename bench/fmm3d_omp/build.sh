#!/usr/bin/env bash
# Builds fmm3d_points (bench/fmm3d_omp/fmm3d_points.f90) against FMM3D's Helmholtz FMM compiled
# with OpenMP, from the Fortran sources in the fmm3dpy sdist on PyPI (the PyPI wheel is
# single-threaded). The FMM3D objects are linked statically; libgfortran, libgomp and libquadmath
# stay shared (../shared/tools/device-bundle packs them).
#
#   bench/fmm3d_omp/build.sh [BUILD_DIR]      (default build/fmm3d_omp; the program: BUILD_DIR/fmm3d_points)
#
# FMM3D_VERSION overrides the version (default: the installed fmm3dpy's, else 2.1.0).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=$(realpath -m "${1:-$root/build/fmm3d_omp}")
version=${FMM3D_VERSION:-$(pip show fmm3dpy 2>/dev/null | sed -n 's/^Version: //p')}
version=${version:-2.1.0}
mkdir -p "$dir"

# The sdist. `--no-binary fmm3dpy` (not :all:): pip prepares the sdist's metadata with its
# build backend (meson-python), which it would otherwise compile from source, numpy included.
sdist=$dir/fmm3dpy-$version.tar.gz
[ -s "$sdist" ] || pip download --quiet --no-deps --no-binary fmm3dpy -d "$dir" "fmm3dpy==$version"
src=$dir/fmm3dpy-$version
[ -d "$src" ] || tar -C "$dir" -xzf "$sdist"

# FMM3D's makefile: COMOBJS and HOBJS (without FAST_KER: its vectorised kernels, vec-kernels/, are
# not in the sdist), its FFLAGS with OMP=ON, -march=native replaced by the device machine's
# baseline (AVX2, FMA).
common="besseljs3d cdjseval3d dfft fmmcommon legeexps prini rotgen rotproj rotviarecur
  tree_routs3d pts_tree3d yrecursion cumsum"
helmholtz="h3dcommon h3dterms h3dtrans helmrouts3d hfmm3d hfmm3dwrap hfmm3dwrap_legacy
  hfmm3dwrap_vec hpwrouts hwts3e hnumphys hnumfour projections hfmm3d_mps hfmm3d_memest
  hfmm3d_ndiv helmkernels hndiv"
fflags="-fPIC -O3 -march=x86-64-v3 -funroll-loops -std=legacy -w -fopenmp"
lib=$dir/libfmm3d_helmholtz.a
if [ ! -s "$lib" ]; then  # FMM3D once; the driver on every call
  obj=$dir/obj
  mkdir -p "$obj"
  files=$(for f in $common; do echo "$src/src/Common/$f.f"; done
          for f in $helmholtz; do ls "$src/src/Helmholtz/$f".f*; done)
  # One compiler per source, in parallel; objects named after their sources.
  printf '%s\n' $files | xargs -P "$(nproc)" -I{} sh -c \
    'f={}; b=${f##*/}; gfortran -c '"$fflags"' -I'"$src"'/src/Helmholtz "$f" -J '"$obj"' -o '"$obj"'/${b%.*}.o'
  ar rcs "$lib.tmp" "$obj"/*.o && mv "$lib.tmp" "$lib"
fi
gfortran -O2 -march=x86-64-v3 -fopenmp -J "$dir" "$root/bench/fmm3d_omp/fmm3d_points.f90" "$lib" \
  -o "$dir/fmm3d_points"
echo "build.sh: $dir/fmm3d_points (FMM3D $version, $fflags)"

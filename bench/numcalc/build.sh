#!/usr/bin/env bash
# Build NumCalc (the BEM solver of Mesh2HRTF) with g++ -O3 from a local Mesh2HRTF checkout.
#
# Usage: bench/numcalc/build.sh MESH2HRTF [OUTDIR]
#   MESH2HRTF  a Mesh2HRTF checkout (work tree holding mesh2hrtf/NumCalc/src) or a bare git
#              directory of the repository (then HEAD's mesh2hrtf/NumCalc/src is exported with
#              git archive); github.com/Any2HRTF/Mesh2HRTF
#   OUTDIR     where the sources are copied and built (default /tmp/numcalc-build); the
#              executable is OUTDIR/NumCalc, and OUTDIR/VERSION records the source's version
#              and commit.
# Nothing is downloaded.  The flags are those of NumCalc's own Makefile (-std=c++11, the same
# seven sources) with -O3 in place of its -O2.  The checkout is not modified.
set -euo pipefail
if [ $# -lt 1 ] || [ $# -gt 2 ]; then
  sed -n '2,13p' "$0"; exit 2
fi
src_root=$1
out=${2:-/tmp/numcalc-build}
sources="NC_3dFunctions.cpp NC_CommonFunctions.cpp NC_Input.cpp NC_PostProcessing.cpp NC_Addresses.cpp NC_EquationSystem.cpp NC_Main.cpp"
mkdir -p "$out"
if [ -d "$src_root/mesh2hrtf/NumCalc/src" ]; then
  cp "$src_root"/mesh2hrtf/NumCalc/src/*.cpp "$src_root"/mesh2hrtf/NumCalc/src/*.h "$out"/
  version=$(cat "$src_root/VERSION" 2>/dev/null || echo unknown)
  commit=unknown  # only the checkout's own repository, not one that contains it
  if [ "$(git -C "$src_root" rev-parse --show-toplevel 2>/dev/null)" = "$(cd "$src_root" && pwd -P)" ]; then
    commit=$(git -C "$src_root" rev-parse HEAD)
  fi
elif git --git-dir="$src_root" rev-parse --verify -q HEAD >/dev/null; then
  git --git-dir="$src_root" archive HEAD mesh2hrtf/NumCalc/src |
    tar -x -C "$out" --strip-components=3
  version=$(git --git-dir="$src_root" show HEAD:VERSION 2>/dev/null || echo unknown)
  commit=$(git --git-dir="$src_root" rev-parse HEAD)
else
  echo "build.sh: $src_root holds neither mesh2hrtf/NumCalc/src nor a git repository" >&2
  exit 1
fi
cd "$out"
pids=()
for f in $sources; do
  g++ -c -std=c++11 -O3 "$f" &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done  # fails (set -e) if any compile failed
g++ ${sources//.cpp/.o} -O3 -o NumCalc
printf 'Mesh2HRTF %s, commit %s, built with %s, flags -std=c++11 -O3\n' \
  "$version" "$commit" "$(g++ --version | head -1)" | tee VERSION
echo "built $out/NumCalc"

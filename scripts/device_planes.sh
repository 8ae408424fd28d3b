#!/usr/bin/env bash
# Symmetry planes on the device machine (bench/results/symmetry_planes.md): the rigid octasphere
# whole against its eighth with three symmetric planes, the same elements, k = 16, plane wave
# along z (the eighth solves the wave's even part: its own exact series, the symmetrized Mie
# series, so both report their error at equal resolution). Builds nothing.
#
#   scripts/device_planes.sh OUT LEVEL DEVICE [THREADS [OPTION...]]
#       DEVICE gpu or cpu (-fmm_device); THREADS: OMP_NUM_THREADS (default 16); OPTIONs are
#       passed to both runs (-log_view for the phases)
#
# Per run: the summary's mesh, fmm, solver, times, memory and error lines, in OUT/table.txt;
# full logs in OUT.
set -euo pipefail
out=$1 level=$2 device=$3 threads=${4:-16}
shift $(($# < 4 ? $# : 4))
mkdir -p "$out"
export OMP_NUM_THREADS=$threads
planes="x=0:symmetric,y=0:symmetric,z=0:symmetric"
for part in whole eighth; do
  mesh=octasphere:$level
  extra=()
  if [[ $part == eighth ]]; then
    mesh=octasphere:$level:1:xyz
    extra=(-bem_planes "$planes")
  fi
  log=$out/${part}_L${level}_${device}_t${threads}.log
  start=$(date +%s.%N)
  bem_solve -mesh "$mesh" -k 16 -bem_incident_dir 0,0,1 -fmm_device "$device" "${extra[@]}" "$@" \
    > "$log" 2>&1 || echo "FAILED: $part" >> "$log"
  end=$(date +%s.%N)
  {
    echo "== $part octasphere:$level $device threads $threads wall $(awk "BEGIN{print $end - $start}") s"
    grep -E "^  (mesh|fmm|solver|times|memory|gpu|error) " "$log" || tail -5 "$log"
  } | tee -a "$out/table.txt"
done

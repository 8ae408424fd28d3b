#!/usr/bin/env bash
# Image planes on several ranks on the device machine (bench/results/symmetry_planes.md): the
# GPU tests of the distributed image FMM (test_bem_mpi on 1 and 2 ranks), then the rigid
# octasphere's eighth with three symmetric planes, k = 16, on one rank, on 2 ranks with the
# distributed FMM (mirror sources in the partitioned tree) and with the rows split
# (-fmm_distribute false). The ranks share the machine's GPUs (node-local rank mod GPUs) and its
# cores (THREADS / ranks each). Builds nothing.
#
#   scripts/device_planes_ranks.sh OUT LEVEL DEVICE [THREADS]
#
# Per run: the summary's mesh, distributed, fmm, solver, times, memory and error lines, in
# OUT/table.txt; full logs in OUT.
set -euo pipefail
out=$1 level=$2 device=$3 threads=${4:-16}
mkdir -p "$out"
if command -v test_bem_mpi > /dev/null; then
  for ranks in 1 2; do
    OMP_NUM_THREADS=$((threads / ranks)) mpiexec -n $ranks test_bem_mpi \
      --gtest_filter='*ImagePlanes*:*WithAPlane*:*Gpu*' > "$out/test_bem_mpi_$ranks.log" 2>&1 ||
      echo "FAILED" >> "$out/test_bem_mpi_$ranks.log"
    { echo "== test_bem_mpi on $ranks rank(s)"; grep -E "OK|FAILED|SKIPPED|rank\(s\)" \
      "$out/test_bem_mpi_$ranks.log"; } | tee -a "$out/table.txt"
  done
fi
planes="x=0:symmetric,y=0:symmetric,z=0:symmetric"
args=(-mesh octasphere:$level:1:xyz -bem_planes "$planes" -k 16 -bem_incident_dir 0,0,1
      -fmm_device "$device")
for run in "1 true" "2 true" "2 false"; do
  read -r ranks distribute <<< "$run"
  log=$out/eighth_L${level}_${device}_r${ranks}_${distribute}.log
  start=$(date +%s.%N)
  OMP_NUM_THREADS=$((threads / ranks)) mpiexec -n "$ranks" bem_solve "${args[@]}" \
    -fmm_distribute "$distribute" > "$log" 2>&1 || echo "FAILED" >> "$log"
  end=$(date +%s.%N)
  {
    echo "== eighth octasphere:$level $device ranks $ranks distribute $distribute threads $threads wall $(awk "BEGIN{print $end - $start}") s"
    grep -E "^  (mesh|distributed|fmm|solver|times|memory|gpu|error) " "$log" || tail -5 "$log"
  } | tee -a "$out/table.txt"
done

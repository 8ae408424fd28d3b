#!/usr/bin/env bash
# On a GPU machine, from the device bundle: the numerics written once for host and device and
# the one FMM executor, against the build before them (bem_solve_before in the bundle).
#   1. the GPU unit tests of test_bem, test_fmm, test_solver and test_field, and the distributed
#      ones of test_fmm_mpi and test_bem_mpi on 2 ranks (those the bundle has);
#   2. icosphere:5, k = 8, rigid and admittance (bm), CPU and GPU, before and after: the same
#      iterations and error;
#   3. the MatMult at N = 1.31M (icosphere:8, k = 8) on the GPU, bm, 10 iterations, before and
#      after alternately, twice each; the surface conditions' MatMults on the GPU
#      (bench/mixed_matmult.sh); the same before/after on the CPU (the machine's cores), cbie,
#      4 iterations.
# Logs in $OUT (a few files; the runs' logs under $LOGS, default /tmp/one_source).
#   source .devrt/device-env && scripts/device_one_source.sh [gpu-only | cpu-series [ITERATIONS]]
# (gpu-only: all but the CPU's MatMults, which cpu-series runs alone: each within one call.)
set -uo pipefail
out=${OUT:-/tmp/device_out}
logs=${LOGS:-/tmp/one_source}
mkdir -p "$out" "$logs"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
field() { sed -n "s/$2/\1/p" "$1" | head -1; }
# The CPU's MatMult before and after, alternately (cpu-series: that alone, ITERATIONS each).
matmults() {
  local device=$1 iterations=$2 run=0
  printf '| run | build | device | s per MatMult |\n|---|---|---|---|\n'
  for build in before after before after; do
    run=$((run + 1))
    bem=bem_solve; [ "$build" = before ] && bem=bem_solve_before
    args=(-mesh icosphere:8 -k 8 -fmm_device "$device" -bem_pc petsc -pc_type jacobi
          -ksp_max_it "$iterations")
    [ "$device" = cpu ] && args+=(-bem_formulation cbie)
    log="$logs/matmult_${run}_${build}_${device}.log"
    "$bem" "${args[@]}" -log_view > "$log" 2>&1
    echo "| $run | $build | $device | $(field "$log" '.* \([0-9.]*\) s per MatMult.*') |"
  done
}
if [ "${1:-}" = cpu-series ]; then
  matmults cpu "${2:-8}"
  exit 0
fi
# The GPU tests, serial and (the distributed ones) on 2 ranks, where the bundle has them.
gpu_tests() {
  local name=$1; shift
  "$@" --gtest_filter='Gpu*:*Gpu*:NearBlock*' > "$logs/$name.log" 2>&1
  echo "$name GPU tests: exit $? ($(grep -c '^\[       OK \]' "$logs/$name.log") ok," \
       "$(grep -c '^\[  FAILED  \]' "$logs/$name.log") failed lines," \
       "$(grep -c '^\[  SKIPPED \]' "$logs/$name.log") skipped lines)"
  grep -h "FAILED\|measured" "$logs/$name.log" | head -20 >> "$out/gpu_tests.txt"
}
for t in test_bem test_fmm test_solver test_field; do
  command -v "$t" > /dev/null && gpu_tests "$t" "$t"
done
for t in test_fmm_mpi test_bem_mpi; do
  command -v "$t" > /dev/null && gpu_tests "$t" mpiexec -n 2 "$t"
done
printf '| build | problem | device | iterations | rel. L2 error |\n|---|---|---|---|---|\n'
for build in before after; do
  bem=bem_solve; [ "$build" = before ] && bem=bem_solve_before
  for problem in rigid admittance; do
    extra=(); [ "$problem" = admittance ] &&
      extra=(-bem_default_condition admittance:0.5+0.8i -bem_incident planewave)
    for device in cpu gpu; do
      log="$logs/check_${build}_${problem}_${device}.log"
      "$bem" -mesh icosphere:5 -k 8 "${extra[@]}" -fmm_device "$device" > "$log" 2>&1
      echo "| $build | $problem | $device | $(field "$log" '.*solver *\([0-9]*\) iterations.*')" \
           "| $(field "$log" '.*relative L2 = \([^ ]*\).*') |"
    done
  done
done
bem_solve -mesh icosphere:6 -k 8 -ksp_max_it 3 > /dev/null 2>&1  # warms the GPU
matmults gpu 10
LOG_DIR="$logs/mixed" bench/mixed_matmult.sh "$(command -v bem_solve)" icosphere:8 gpu 10
[ "${1:-}" = gpu-only ] || matmults cpu 4

#!/usr/bin/env bash
# On a GPU machine, from the device bundle: the wideband FMM's diagonal levels on the GPU.
#   check    the GPU tests of test_fmm (the wideband FMM against the CPU's, every GPU FMM test)
#            and test_field;
#   scaling  bench/fmm_matmult: the point mode (charges at the quadrature points, potentials at the
#            centroids, sampled rows against the direct sum) at about 13 mean edges a wavelength:
#            icosphere:5..8 with k D = 25, 50, 100, 200, -fmm_eps 1e-4 (and 1e-6 at the smaller
#            sizes), on the GPU and on the machine's cores; and the matrix mode's MatMult (both
#            layers, the solver's operator);
#   solve    bem_solve, the rigid sphere at k D = 100 (icosphere:7) and 200 (icosphere:8) on the
#            GPU, -fmm_eps 1e-4, against the Mie series (CASES="6_50 8_50 9_100 ...": level_k, the
#            refinement series; RANKS="1 2": mpiexec's ranks, one GPU each where there are as
#            many).
#   distributed  the distributed wideband tests on the GPU under mpiexec -n 2 (test_fmm_mpi,
#            test_bem_mpi), then solve's table on 1 and 2 ranks.
# Tables on stdout, logs in $OUT.
#   source .devrt/device-env && scripts/device_wideband.sh check|scaling|solve
# (CASES="5_12.5_1e-4 ..." picks scaling's cases: level, k, eps; DEVICES="gpu cpu" its devices.)
set -uo pipefail
out=${OUT:-/tmp/device_out}
mkdir -p "$out"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
field() { sed -n "s/$2/\1/p" "$1" | head -1; }
case "${1:-check}" in
check)
  test_fmm --gtest_color=no \
    --gtest_filter='HighFrequency/WidebandGpu*:Trees/GpuFmm*:GpuFmm.*:GpuMultipolePacking*' \
    > "$out/test_fmm.log" 2>&1
  echo "test_fmm GPU tests: exit $? ($(grep -c '^\[       OK \]' "$out/test_fmm.log") ok," \
       "$(grep -c '^\[  FAILED  \]' "$out/test_fmm.log") failed lines)"
  grep -h "gpu wideband" "$out/test_fmm.log"
  test_field --gtest_color=no --gtest_filter='*Gpu*' > "$out/test_field.log" 2>&1
  echo "test_field GPU tests: exit $? ($(grep -c '^\[       OK \]' "$out/test_field.log") ok)"
  ;;
scaling)
  printf '| level | N | k D | eps | device | threads | p | switch | bandwidths | set-up s | apply s | error | MatMult s |\n'
  printf '|---|---|---|---|---|---|---|---|---|---|---|---|---|\n'
  for case in ${CASES:-5_12.5_1e-4 6_25_1e-4 7_50_1e-4 8_100_1e-4 5_12.5_1e-6 6_25_1e-6 7_50_1e-6}; do
    set -- ${case//_/ }
    for device in ${DEVICES:-gpu cpu}; do
      log="$out/matmult_L$1_k$2_eps$3_$device.log"
      fmm_matmult -L "$1" -k "$2" -p 0 -eps "$3" -max_leaf 0 -device "$device" -reps 3 -sampled \
        > "$log" 2>&1
      fmm_matmult -L "$1" -k "$2" -p 0 -eps "$3" -max_leaf 0 -device "$device" -reps 3 \
        > "${log%.log}_matrix.log" 2>&1
      echo "| $1 | $(field "$log" '^points N \([0-9]*\).*') | $(awk "BEGIN { print 2 * $2 }") | $3" \
           "| $device | $(field "$log" '.*threads \([0-9]*\).*')" \
           "| $(field "$log" '^p \([0-9]*\) .*') | $(field "$log" '.*switch \([-0-9]*\).*')" \
           "| $(field "$log" '.*bandwidths \([0-9 ]*\) diagonal.*')" \
           "| $(field "$log" '.*set-up \([0-9.]*\) s.*') | $(field "$log" '.*apply \([0-9.]*\) s.*')" \
           "| $(field "$log" '.*error \([0-9.e+-]*\) .*')" \
           "| $(field "${log%.log}_matrix.log" '.*MatMult \([0-9.]*\) s.*') |"
    done
  done
  ;;
distributed)
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  for test in test_fmm_mpi test_bem_mpi; do
    mpiexec --bind-to none -n 2 "$test" --gtest_color=no --gtest_filter='*Wideband*' > "$out/$test.log" 2>&1
    echo "$test -n 2 wideband tests: exit $? ($(grep -c '^\[       OK \]' "$out/$test.log") ok," \
         "$(grep -c '^\[  SKIPPED \]' "$out/$test.log") skipped lines)"
    grep -h "wideband,\|rank(s)" "$out/$test.log"
  done
  RANKS=${RANKS:-1 2} "$0" solve
  ;;
solve)
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  printf '| mesh | N | k D | ranks | iterations | set-up s | solve s | s per MatMult | rel. L2 error |\n'
  printf '|---|---|---|---|---|---|---|---|---|\n'
  for case in ${CASES:-7_50 8_100}; do
    set -- ${case//_/ }
    for ranks in ${RANKS:-1}; do
      log="$out/solve_L$1_k$2_n$ranks.log"
      mpiexec --bind-to none -n "$ranks" bem_solve -mesh "icosphere:$1" -k "$2" -fmm_eps 1e-4 -fmm_view -log_view \
        > "$log" 2>&1
      echo "| icosphere:$1 | $(field "$log" '.*N = \([0-9]*\) elements.*') | $(awk "BEGIN { print 2 * $2 }") | $ranks" \
           "| $(field "$log" '.*solver *\([0-9]*\) iterations.*')" \
           "| $(field "$log" '.*times *set-up \([0-9.]*\) s.*') | $(field "$log" '.*times .*, solve \([0-9.]*\) s.*')" \
           "| $(field "$log" '.* \([0-9.]*\) s per MatMult.*')" \
           "| $(field "$log" '.*relative L2 = \([^ ]*\).*') |"
    done
  done
  ;;
esac

#!/usr/bin/env bash
# On a GPU machine, from the device bundle: several sources in one run (one set-up per k).
#   check   the GPU tests (test_fmm's GPU FMM, test_bem's GPU correction and Burton-Miller
#           entries), then on icosphere:5, k = 8 (rbm, the default) three plane waves in one GPU
#           run against three single GPU runs (the CSVs byte for byte) and against the CPU's
#           solutions, and the same on 2 ranks (distributed) against 1 rank;
#   time    bench/sources_cost.sh on the GPU: MESH (icosphere:8), MS ("2 8 32").
# Tables on stdout, logs in $OUT.
#   source .devrt/device-env && scripts/device_sources.sh check|time
set -uo pipefail
out=${OUT:-/tmp/device_out}
mkdir -p "$out"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null
case "${1:-check}" in
check)
  test_fmm --gtest_color=no --gtest_filter='Trees/GpuFmm*:GpuFmm.*' > "$out/test_fmm.log" 2>&1
  echo "test_fmm GPU tests: exit $? ($(grep -c '^\[       OK \]' "$out/test_fmm.log") ok," \
       "$(grep -c '^\[  FAILED  \]' "$out/test_fmm.log") failed lines)"
  test_bem --gtest_color=no --gtest_filter='GpuBurtonMiller.*:GpuNearFieldCorrection.*' \
    > "$out/test_bem.log" 2>&1
  echo "test_bem GPU tests: exit $? ($(grep -c '^\[       OK \]' "$out/test_bem.log") ok," \
       "$(grep -c '^\[  FAILED  \]' "$out/test_bem.log") failed lines)"
  base=(-mesh icosphere:5 -k 8 -ksp_rtol 1e-8)
  dirs=("0,0,1" "1,0,0" "0.6,0,-0.8")
  bem_solve "${base[@]}" -fmm_device gpu -bem_incident_dir "0,0,1;1,0,0;0.6,0,-0.8" \
    -bem_csv "$out/many.csv" > "$out/many.log" 2>&1
  echo "three sources on the GPU: exit $?"
  bem_solve "${base[@]}" -fmm_device cpu -bem_incident_dir "0,0,1;1,0,0;0.6,0,-0.8" \
    -bem_csv "$out/cpu.csv" > "$out/cpu.log" 2>&1
  echo "three sources on the CPU: exit $?"
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpiexec -n 2 bem_solve "${base[@]}" \
    -fmm_device gpu -bem_incident_dir "0,0,1;1,0,0;0.6,0,-0.8" -bem_csv "$out/ranks.csv" \
    > "$out/ranks.log" 2>&1
  echo "three sources on 2 ranks (GPU): exit $?"
  for s in 1 2 3; do
    bem_solve "${base[@]}" -fmm_device gpu -bem_incident_dir "${dirs[$((s - 1))]}" \
      -bem_csv "$out/one$s.csv" > "$out/one$s.log" 2>&1
    same=$(cmp -s "$out/one$s.csv" "$out/many_s000$s.csv" && echo yes || echo no)
    # Relative L2 distance of two CSVs' re, im columns (4 and 5).
    dist() {
      paste -d, "$1" "$2" | awk -F, 'NR > 1 { for (c = 4; c <= 5; ++c) {
          d = $c - $(c + 5); e += d * d; n += $(c + 5) * $(c + 5) } }
        END { printf "%.2e", sqrt(e / n) }'
    }
    echo "source $s: single GPU run byte for byte: $same; GPU vs CPU $(dist "$out/many_s000$s.csv" \
      "$out/cpu_s000$s.csv"); 2 ranks vs 1 $(dist "$out/ranks_s000$s.csv" "$out/many_s000$s.csv")"
  done
  grep -h "error  " "$out/many.log" | head -3
  ;;
time)
  BEM=bem_solve MESH=${MESH:-icosphere:8} MS=${MS:-"2 8 32"} EXTRA="-fmm_device gpu" \
    LOGS="$out/sources_cost" bench/sources_cost.sh
  ;;
esac

#!/usr/bin/env bash
# On a GPU machine, from the device bundle: the regularised Burton-Miller formulation (rbm).
#   check   the GPU tests of the normal derivative apart and of the screened kernel (S~):
#           test_fmm (every GPU FMM test, the apart outputs and the screened FMM among them) and
#           test_bem (the GPU correction and Burton-Miller entries, the apart and screened ones
#           among them, and the resident layers);
#   solve   bem_solve on the rigid sphere against the Mie series: cbie, bm (its leaf-block PC) and
#           rbm (no PC) at k = 8 on icosphere:5..8, and at about 10 elements a wavelength
#           (k D = 32, 64, 100, 200 on icosphere:5..8), on the GPU; CASES="L_k ..." picks them,
#           FORMS="cbie bm rbm" the formulations, DEVICE=cpu|gpu the FMM's device, EXTRA more
#           options (and TAG a name for their logs);
#   ranks   rbm on icosphere:5, k = 8, rtol 1e-10: the GPU's solution against the CPU's, and
#           mpiexec -n 2 on the GPU (distributed, and sharing the tree) against one rank's.
# Tables on stdout, logs in $OUT.
#   source .devrt/device-env && scripts/device_regularised.sh check|solve
set -uo pipefail
out=${OUT:-/tmp/device_out}
mkdir -p "$out"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null
field() { sed -n "s/$2/\1/p" "$1" | head -1; }
case "${1:-check}" in
check)
  test_fmm --gtest_color=no --gtest_filter='Trees/GpuFmm*:GpuFmm.*' > "$out/test_fmm.log" 2>&1
  echo "test_fmm GPU tests: exit $? ($(grep -c '^\[       OK \]' "$out/test_fmm.log") ok," \
       "$(grep -c '^\[  FAILED  \]' "$out/test_fmm.log") failed lines)"
  grep -h "dphi/dn:" "$out/test_fmm.log" | head -8
  grep -h "kappa = " "$out/test_fmm.log" | grep "gpu fmm" | head -12
  test_bem --gtest_color=no --gtest_filter='GpuBurtonMiller.*:GpuNearFieldCorrection.*' \
    > "$out/test_bem.log" 2>&1
  echo "test_bem GPU tests: exit $? ($(grep -c '^\[       OK \]' "$out/test_bem.log") ok," \
       "$(grep -c '^\[  FAILED  \]' "$out/test_bem.log") failed lines)"
  grep -h "measured" "$out/test_bem.log" | tail -4
  grep -h "screened" "$out/test_bem.log" | head -6
  ;;
solve)
  printf '| mesh | N | k | form | device | iterations | rel. L2 error | set-up s | solve s | s per MatMult | regulariser s per MatMult | whole s |\n'
  printf '|---|---|---|---|---|---|---|---|---|---|---|---|\n'
  for case in ${CASES:-5_8 6_8 7_8 8_8 5_16 6_32 7_50 8_100}; do
    set -- ${case//_/ }
    for form in ${FORMS:-cbie bm rbm}; do
      log="$out/solve_L$1_k$2_${form}_${DEVICE:-gpu}${TAG:-}.log"
      start=$(date +%s.%N)
      bem_solve -mesh "icosphere:$1" -k "$2" -bem_formulation "$form" \
        -fmm_device "${DEVICE:-gpu}" -log_view ${EXTRA:-} > "$log" 2>&1
      status=$?
      end=$(date +%s.%N)
      mults=$(field "$log" '.*(\([0-9]*\) MatMults).*')
      regul=$(awk '/^BEMRegulariser/ { print $4 }' "$log")
      echo "| icosphere:$1 | $(field "$log" '.*N = \([0-9]*\) elements.*') | $2 | $form${EXTRA:+ $EXTRA}" \
           "| ${DEVICE:-gpu} | $(field "$log" '.*solver *\([0-9]*\) iterations.*')" \
           "| $(field "$log" '.*relative L2 = \([0-9.e+-]*\).*')" \
           "| $(field "$log" '.*set-up \([0-9.]*\) s.*') | $(field "$log" '.*solve \([0-9.]*\) s,.*')" \
           "| $(field "$log" '.*s, \([0-9.]*\) s per MatMult.*')" \
           "| $( [ -n "$regul" ] && awk "BEGIN { printf \"%.4f\", $regul / $mults }" )" \
           "| $(awk "BEGIN { printf \"%.1f\", $end - $start }")$( [ $status -ne 0 ] && echo " (exit $status)") |"
    done
  done
  ;;
ranks)
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  base="-mesh icosphere:5 -k 8 -bem_formulation rbm -ksp_rtol 1e-10"
  # The relative 2-norm difference of two -bem_csv solutions (columns re, im).
  diff() {
    paste -d, "$1" "$2" | awk -F, 'NR > 1 { dr = $4 - $9; di = $5 - $10; d += dr * dr + di * di;
      n += $4 * $4 + $5 * $5 } END { printf "%.2e", sqrt(d / n) }'
  }
  run() {  # name, then the command
    name=$1
    shift
    "$@" -bem_csv "$out/$name.csv" > "$out/$name.log" 2>&1
    echo "$name: exit $?, $(sed -n 's/.*solver *\([0-9]*\) iterations.*/\1 iterations/p' "$out/$name.log"), $(sed -n 's/.*relative L2 = \(.*\)/L2 error \1/p' "$out/$name.log")"
  }
  run cpu bem_solve $base -fmm_device cpu
  run gpu bem_solve $base -fmm_device gpu
  run gpu2 mpiexec --bind-to none -n 2 bem_solve $base -fmm_device gpu
  run gpu2shared mpiexec --bind-to none -n 2 bem_solve $base -fmm_device gpu -fmm_distribute false
  echo "gpu vs cpu $(diff "$out/gpu.csv" "$out/cpu.csv"), 2 ranks distributed vs 1 $(diff "$out/gpu2.csv" "$out/gpu.csv"), 2 ranks sharing the tree vs 1 $(diff "$out/gpu2shared.csv" "$out/gpu.csv")"
  ;;
esac

#!/usr/bin/env bash
# On a GPU machine, from the device bundle (nothing is built there; the lean build has no Gmsh,
# so the bodies are icospheres and the conditions uniform): surface conditions on the GPU.
#   gpu      the GPU unit tests (the per-element near block among them), the admittance
#            sphere solved on the CPU and the GPU on 1, 2 and 3 ranks (the same iterations and
#            error), and the MatMult of each condition against the rigid one at N = 1.31M
#   cpu      the same MatMults on the machine's CPU cores (16), at N = 1.31M
# Logs in $OUT.
#   gpu-timing the MatMults alone
#   source .devrt/device-env && scripts/device_surface_groups.sh gpu|gpu-timing|cpu
set -uo pipefail
out=${OUT:-/tmp/device_out}
mkdir -p "$out"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$out/gpu.txt"
nproc | sed 's/^/cores: /'
# -log_view's lines of the MatMult and the FMM's phases, per case (the logs of a folder).
phases() {
  for log in "$1"/*.log; do
    echo "== $(basename "$log" .log)"
    grep -E "^(BEMOperator|FMM[A-Za-z0-9]+|MatMult) " "$log"
  done
}
case ${1:-gpu} in
  gpu)
    for t in test_bem test_fmm test_solver; do
      "$t" --gtest_filter='Gpu*:*Gpu*:NearBlock*' > "$out/$t.log" 2>&1
      echo "$t GPU tests: exit $? ($(grep -c '^\[       OK \]' "$out/$t.log") ok," \
           "$(grep -c '^\[  FAILED  \]' "$out/$t.log") failed lines," \
           "$(grep -c '^\[  SKIPPED \]' "$out/$t.log") skipped lines)"
    done
    grep -h "measured.*per-element" "$out"/test_bem.log
    printf '| ranks | device | iterations | rel. L2 error | solve s | exit |\n|---|---|---|---|---|---|\n'
    args=(-mesh icosphere:5 -k 8 -bem_default_condition admittance:0.5+0.8i -bem_incident planewave)
    for ranks in 1 2 3; do
      for device in cpu gpu; do
        log="$out/admittance_${ranks}_${device}.log"
        launcher=()
        [ "$ranks" -gt 1 ] && launcher=(mpiexec --allow-run-as-root --oversubscribe -n "$ranks")
        "${launcher[@]}" bem_solve "${args[@]}" -fmm_device "$device" > "$log" 2>&1
        rc=$?
        its=$(sed -n 's/.*solver *\([0-9]*\) iterations.*/\1/p' "$log")
        err=$(sed -n 's/.*relative L2 = \([^ ]*\).*/\1/p' "$log")
        solve=$(sed -n 's/.*solve \([0-9.]*\) s.*/\1/p' "$log")
        echo "| $ranks | $device | $its | $err | $solve | $rc |"
      done
    done
    ;&
  gpu-timing)
    # A first run warms the GPU (its clocks, the driver's caches) so that the rigid reference is
    # timed like the others.
    bem_solve -mesh icosphere:6 -k 8 -ksp_max_it 3 > /dev/null 2>&1
    LOG_DIR="$out/matmult_gpu" bench/mixed_matmult.sh "$(command -v bem_solve)" icosphere:8 gpu 10 \
      -log_view | tee "$out/matmult_gpu.md"
    phases "$out/matmult_gpu" > "$out/matmult_gpu_phases.txt"
    ;;
  cpu)
    CASES="rigid admittance" LOG_DIR="$out/matmult_cpu" \
      bench/mixed_matmult.sh "$(command -v bem_solve)" icosphere:8 cpu 3 -log_view |
      tee "$out/matmult_cpu.md"
    phases "$out/matmult_cpu" > "$out/matmult_cpu_phases.txt"
    ;;
esac

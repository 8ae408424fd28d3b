#!/usr/bin/env bash
# The HRTF benchmark on the device machine (bench/results/hrtf_head.md): Mesh2HRTF's example head
# as two-ear NumCalc projects (bench/numcalc/head_project.py, built here and carried in .devrt),
# NumCalc 1.2.4 and bem_solve -bem_numcalc on the same machine. Builds nothing.
#
#   scripts/device_hrtf.sh numcalc SUBSET OUT   NumCalc on source_1 of SUBSET, every frequency
#                                               step its own single-threaded process (as
#                                               Mesh2HRTF's manage_numcalc runs them), at most
#                                               8 at once on the 16 cores; each step's wall time
#   scripts/device_hrtf.sh ours SUBSET FULL OUT bem_solve on the GPU: SUBSET's and FULL's both
#                                               ears in one run each; on the CPU (16 threads):
#                                               SUBSET's; each run's wall time and sweep table
#
# Full logs and the result files under OUT.
set -euo pipefail
mode=$1
now() { date +%s.%N; }
case "$mode" in
  numcalc)
    subset=$2 out=$3
    mkdir -p "$out"
    folder=$subset/NumCalc/source_1
    steps=$(sed -n '/Controlparameter II/{n;p}' "$folder/NC.inp" | awk '{print $2}')
    run_step() {
      local n=$1 t0 t1
      t0=$(now)
      (cd "$folder" && NumCalc -istart "$n" -iend "$n" > "$out/numcalc_step$n.log" 2>&1)
      t1=$(now)
      echo "$n $(awk "BEGIN{print $t1 - $t0}")" >> "$out/numcalc_times.txt"
    }
    rm -f "$out/numcalc_times.txt"
    for n in $(seq 1 "$steps"); do
      run_step "$n" &
      while [ "$(jobs -r | wc -l)" -ge 8 ]; do sleep 0.2; done
    done
    wait
    sort -n "$out/numcalc_times.txt"
    cp -r "$folder/be.out" "$out/numcalc_be.out"
    cp "$folder"/NC*.out "$out/" 2>/dev/null || true
    ;;
  ours)
    subset=$2 full=$3 out=$4
    mkdir -p "$out/gpu_subset" "$out/gpu_full" "$out/cpu16_subset"
    nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | tee "$out/gpu.txt"
    timed() {  # name, then the command
      local name=$1 t0 t1
      shift
      t0=$(now)
      "$@" > "$out/$name.log" 2>&1
      t1=$(now)
      echo "$name: $(awk "BEGIN{print $t1 - $t0}") s" | tee -a "$out/times.txt"
    }
    rm -f "$out/times.txt"
    timed gpu_subset bem_solve -bem_numcalc "$subset" -bem_numcalc_output "$out/gpu_subset" \
      -bem_sweep_csv "$out/gpu_subset.csv"
    timed gpu_full bem_solve -bem_numcalc "$full" -bem_numcalc_output "$out/gpu_full" \
      -bem_sweep_csv "$out/gpu_full.csv"
    OMP_NUM_THREADS=16 timed cpu16_subset bem_solve -bem_numcalc "$subset" -fmm_device cpu \
      -bem_numcalc_output "$out/cpu16_subset" -bem_sweep_csv "$out/cpu16_subset.csv"
    cat "$out/gpu_subset.csv" "$out/cpu16_subset.csv"
    ;;
  *)
    sed -n '2,16p' "$0"
    exit 2
    ;;
esac

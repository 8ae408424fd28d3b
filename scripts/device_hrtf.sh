#!/usr/bin/env bash
# The HRTF benchmark on the device machine (bench/results/hrtf_head.md): Mesh2HRTF's example head
# as two-ear NumCalc projects (bench/numcalc/head_project.py, built here and carried in .devrt),
# NumCalc 1.2.4 and bem_solve -bem_numcalc on the same machine. Builds nothing.
#
#   scripts/device_hrtf.sh numcalc SUBSET OUT   NumCalc on source_1 of SUBSET, every frequency
#                                               step its own single-threaded process (as
#                                               Mesh2HRTF's manage_numcalc runs them), at most
#                                               8 at once on the 16 cores; each step's wall time
#   scripts/device_hrtf.sh gpu SUBSET FULL OUT  bem_solve on the GPU: SUBSET's and FULL's both
#                                               ears in one run each; wall times, sweep tables
#   scripts/device_hrtf.sh cpu SUBSET OUT       bem_solve on the CPU (16 threads): SUBSET's;
#                                               then NumCalc's first and last step of SUBSET
#                                               (its results, for the accuracy)
#   scripts/device_hrtf.sh split PROJECT OUT THREADS R...
#                                               bem_solve -bem_split frequencies on R ranks for
#                                               each R given (ranks share the GPUs, node-local
#                                               rank mod their count), each rank THREADS/R
#                                               OpenMP threads on its own cores; THREADS 0: on
#                                               the CPU (-fmm_device cpu), one thread a rank;
#                                               cpuT: on the CPU, T/R threads a rank;
#                                               FMBEM_OPTIONS: more bem_solve options for every
#                                               run (-bem_formulation bm, say)
#
# Full logs and the result files under OUT, packed as OUT.tgz.
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
  split)
    project=$2 out=$3 threads=$4
    shift 4
    mkdir -p "$out"
    nvidia-smi --query-gpu=name,memory.total --format=csv,noheader > "$out/gpu.txt" 2>&1 || true
    for ranks in "$@"; do
      mkdir -p "$out/n$ranks"
      if [ "$threads" = 0 ]; then
        per_rank=1 device=(-fmm_device cpu) name=cpu_n$ranks
      elif [ "${threads#cpu}" != "$threads" ]; then
        per_rank=$((${threads#cpu} / ranks)) device=(-fmm_device cpu) name=cpu_n${ranks}x$per_rank
      else
        per_rank=$((threads / ranks)) device=() name=gpu_n$ranks
      fi
      t0=$(now)
      OMP_NUM_THREADS=$per_rank mpiexec --allow-run-as-root -n "$ranks" --map-by "slot:PE=$per_rank" \
        --bind-to core bem_solve -bem_numcalc "$project" -bem_split frequencies "${device[@]}" \
        ${FMBEM_OPTIONS:-} \
        -bem_numcalc_output "$out/n$ranks" -bem_sweep_csv "$out/$name.csv" > "$out/$name.log" 2>&1
      t1=$(now)
      echo "$name: $ranks ranks x $per_rank threads ${FMBEM_OPTIONS:-}: $(awk "BEGIN{print $t1 - $t0}") s" |
        tee -a "$out/times.txt"
    done
    tar czf "$out.tgz" -C "$out" .
    ;;
  gpu | cpu)
    subset=$2 out=${@: -1}
    mkdir -p "$out"
    timed() {  # name, then the command
      local name=$1 t0 t1
      shift
      mkdir -p "$out/$name"
      t0=$(now)
      "$@" -bem_numcalc_output "$out/$name" -bem_sweep_csv "$out/$name.csv" > "$out/$name.log" 2>&1
      t1=$(now)
      echo "$name: $(awk "BEGIN{print $t1 - $t0}") s" | tee -a "$out/times.txt"
    }
    if [ "$mode" = gpu ]; then
      full=$3
      nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | tee "$out/gpu.txt"
      timed gpu_subset bem_solve -bem_numcalc "$subset"
      timed gpu_full bem_solve -bem_numcalc "$full"
    else
      OMP_NUM_THREADS=16 timed cpu16_subset bem_solve -bem_numcalc "$subset" -fmm_device cpu
      # NumCalc's own results at the subset's first and last step, for the accuracy.
      folder=$subset/NumCalc/source_1
      for n in 1 $(sed -n '/Controlparameter II/{n;p}' "$folder/NC.inp" | awk '{print $2}'); do
        (cd "$folder" && NumCalc -istart "$n" -iend "$n" > /dev/null 2>&1) &
      done
      wait
      cp -r "$folder/be.out" "$out/numcalc_be.out"
    fi
    tar czf "$out.tgz" -C "$out" .
    ;;
  *)
    sed -n '2,22p' "$0"
    exit 2
    ;;
esac

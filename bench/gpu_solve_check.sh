#!/usr/bin/env bash
# bem_solve with the GPU M2L against the CPU path, for every scheme: the same iterations and the
# same solution (relative difference of the CSV solutions, which bounds the difference of the
# errors against the Mie series), then the MatMult split by phase at a large size.
#   bench/gpu_solve_check.sh BEM_SOLVE [LEVEL=5] ["8:8 7:16" (big level:p pairs)]
# FORMULATION: cbie (default, the reference paper's equation) or bm. Needs bash, awk, sed.
# Prints Markdown tables; logs in LOG_DIR (gpu_solve_logs).
set -euo pipefail
bem=$1
level=${2:-5}
big_runs=${3:-"8:8 7:16"}
log_dir=${LOG_DIR:-gpu_solve_logs}
mkdir -p "$log_dir"
reldiff() {  # relative L2 difference of columns re,im of two x,y,z,re,im files
  paste -d, "$1" "$2" | awk -F, 'NR > 1 { dr = $4 - $9; di = $5 - $10; n += dr*dr + di*di;
    d += $9*$9 + $10*$10 } END { printf "%.2e", sqrt(n / d) }'
}
field() { sed -n "$2" "$1"; }
echo "| p | device, scheme | iterations | relative L2 error | solution vs cpu | s per MatMult |"
echo "|---|---|---|---|---|---|"
for p in 8 16; do
  base=(-mesh "icosphere:$level" -k 8 -bem_formulation "${FORMULATION:-cbie}" -fmm_p "$p" -ksp_rtol 1e-10)
  for run in cpu basic sibling cluster ij gemm dmma; do
    if [ "$run" = cpu ]; then extra=(-fmm_device cpu); else extra=(-fmm_device gpu -fmm_m2l_scheme "$run"); fi
    log="$log_dir/p${p}_$run.txt"
    csv="$log_dir/p${p}_$run.csv"
    if ! "$bem" "${base[@]}" "${extra[@]}" -bem_csv "$csv" >"$log" 2>&1; then
      echo "| $p | $run | failed: $(tail -1 "$log") | | | |"
      continue
    fi
    its=$(field "$log" 's/^ *solver *\([0-9]*\) iterations.*/\1/p')
    err=$(field "$log" 's/.*relative L2 = \([0-9.e+-]*\).*/\1/p')
    per=$(field "$log" 's/.*, \([0-9.e+-]*\) s per MatMult.*/\1/p')
    diff=$(reldiff "$log_dir/p${p}_cpu.csv" "$csv")
    echo "| $p | $run | $its | $err | $diff | $per |"
  done
done
echo
echo "MatMult by phase, k = 8 (seconds over the solve, max over ranks):"
echo
echo "| mesh | p | M2L on | MatMults | s per MatMult | P2M | M2M | M2L | L2L | L2P | Near |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
for run in $big_runs; do
  big=${run%:*}
  p=${run#*:}
  for device in cpu gpu; do
    log="$log_dir/big_p${p}_$device.txt"
    if ! "$bem" -mesh "icosphere:$big" -k 8 -bem_formulation "${FORMULATION:-cbie}" -fmm_p "$p" -fmm_device "$device" -log_view \
        >"$log" 2>&1; then
      echo "| $p | $device | failed: $(tail -1 "$log") |"
      continue
    fi
    mm=$(field "$log" 's/.*(\([0-9]*\) MatMults).*/\1/p')
    per=$(field "$log" 's/.*, \([0-9.e+-]*\) s per MatMult.*/\1/p')
    row="| icosphere:$big | $p | $(sed -n 's/.*M2L on \(.*\)$/\1/p' "$log" | head -1) | $mm | $per"
    for e in FMMP2M FMMM2M FMMM2L FMML2L FMML2P FMMNear; do
      row="$row | $(awk -v e=$e '$1 == e { print $4 }' "$log")"
    done
    echo "$row |"
  done
done

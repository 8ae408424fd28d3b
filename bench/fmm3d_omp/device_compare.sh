#!/usr/bin/env bash
# Our FMM (fmm_matmult's point mode, CPU and GPU) against FMM3D's OpenMP build (fmm3d_points) on
# the same points, charges, dipoles and sampled direct sums: charges, and charges + dipoles along
# the source normals. Both programs on the PATH (bench/fmm3d_omp/README.md).
#
#   bench/fmm3d_omp/device_compare.sh
#
# Environment (defaults in brackets):
#   CASES       level_k pairs, icosphere:level of radius 1 (D = 2) at wavenumber k  [6_32 8_128]
#   EPS         fmm_matmult's -eps values                       [1e-4 1e-6]
#   FMM3D_EPS   FMM3D's eps values                              [1e-3 1e-4]
#   DEVICES     fmm_matmult's -device values                    [cpu gpu]
#   THREADS     OpenMP threads of both codes                    [nproc]
#   REPS        fmm_matmult's -reps on the CPU                  [1]
#   GPU_REPS    fmm_matmult's -reps on the GPU                  [3: its first apply warms up]
#   FMM3D_REPS  FMM3D's repeats (the minimum time)              [1]
#   OUT         the logs                                        [/tmp/device_out]
#   WORK        the point files (about 0.35 GB at level 8; removed after each case)  [a temp dir]
# One Markdown table on stdout. fmbem's time is one apply (its set-up apart), FMM3D's one hfmm3d
# call, which builds its tree and translation data each time.
set -uo pipefail
out=${OUT:-/tmp/device_out}
if [ -n "${WORK:-}" ]; then work=$WORK; else work=$(mktemp -d) && trap 'rm -rf "$work"' EXIT; fi
threads=${THREADS:-$(nproc)}
export OMP_NUM_THREADS=$threads
mkdir -p "$out" "$work"
command -v nvidia-smi > /dev/null && nvidia-smi --query-gpu=name --format=csv,noheader
echo "$(nproc) cores, OMP_NUM_THREADS $threads, $(date -u +%F)"
echo
echo '| case | sum | code | device | eps | p | error | set-up s | time s |'
echo '|---|---|---|---|---|---|---|---|---|'

# fmm_matmult's rows from LOG: its point lines ("points N ..." and "points+dipoles N ..."), each
# followed by the FMM's statistics ("p 11 levels ...").
ours() {  # case device eps log
  awk -v c="$1" -v dev="$2" -v eps="$3" '
    $1 == "points" || $1 == "points+dipoles" {
      for (i = 2; i < NF; ++i) {
        if ($i == "set-up") s = $(i + 1)
        if ($i == "apply") t = $(i + 1)
        if ($i == "error") e = $(i + 1)
        if ($i == "threads") th = $(i + 1)
      }
      sum = $1 == "points" ? "charges" : "charges+dipoles"
      next
    }
    $1 == "p" && sum != "" {
      printf "| %s | %s | fmbem | %s | %s | %s | %s | %s | %s |\n", c, sum,
             dev == "gpu" ? "gpu" : "cpu " th " threads", eps, $2, e, s, t
      sum = ""
    }
    END { if (NR == 0 || e == "") printf "| %s | | fmbem | %s | %s | | failed | | |\n", c, dev, eps }
  ' "$4"
}

for case in ${CASES:-6_32 8_128}; do
  level=${case%_*} k=${case#*_}
  name="L$level k D $(awk "BEGIN { print 2 * $k }")"
  dir=$work/L${level}_k$k
  mkdir -p "$dir"
  first=1
  for device in ${DEVICES:-cpu gpu}; do
    for eps in ${EPS:-1e-4 1e-6}; do
      log=$out/fmm_matmult_L${level}_k${k}_eps${eps}_$device.log
      # The first run writes the point files; the others sum the same data (fixed seeds).
      if [ $first = 1 ]; then mode=(-points "$dir"); else mode=(-sampled); fi
      if [ "$device" = gpu ]; then reps=${GPU_REPS:-3}; else reps=${REPS:-1}; fi
      fmm_matmult -L "$level" -k "$k" -p 0 -eps "$eps" -max_leaf 0 -device "$device" \
        -reps "$reps" -dipoles "${mode[@]}" > "$log" 2>&1
      [ $first = 1 ] && [ -s "$dir/dipoles.bin" ] && first=0
      ours "$name" "$device" "$eps" "$log"
    done
  done
  log=$out/fmm3d_L${level}_k$k.log
  if [ $first = 0 ]; then
    fmm3d_points "$dir" "${FMM3D_REPS:-1}" ${FMM3D_EPS:-1e-3 1e-4} > "$log" 2>&1
  else
    echo "no point files: fmm_matmult failed" > "$log"
  fi
  awk -v c="$name" -F ' *[|] *' '$3 ~ /^charges/ {
    printf "| %s | %s | FMM3D | cpu %s threads | %s | | %s | | %s |\n", c, $3, $6, $2, tolower($4), $5 }' "$log"
  grep -q '^| [0-9]' "$log" || echo "| $name | | FMM3D | | | | failed | | |"
  rm -rf "$dir"
done
echo
echo "device_compare.sh: $SECONDS s"

#!/usr/bin/env bash
# NumCalc (Mesh2HRTF) beside bem_solve on one CPU core: the rigid unit sphere (icosphere:L),
# plane wave exp(i k z), k = 8, relative L2 error against the Mie series.
#
# Usage: bench/numcalc/compare.sh NUMCALC BEM_SOLVE WORKDIR "LEVELS" [CORE] [REPEATS]
#   NUMCALC    the NumCalc executable (bench/numcalc/build.sh builds it)
#   BEM_SOLVE  fmbem's bem_solve (e.g. build/bin/bem_solve)
#   WORKDIR    scratch folder: projects, logs, CSVs (WORKDIR/L<L>/...)
#   LEVELS     icosphere levels, e.g. "5 6"
#   CORE       the CPU core every run is pinned to with taskset (default 0)
#   REPEATS    rounds of the four runs per level, in the order NumCalc, cbie, bm, rbm (default 1)
# Each run is timed as a whole process with /usr/bin/time (wall, user + sys CPU, peak RSS);
# bem_solve runs with OMP_NUM_THREADS=1 (and OpenBLAS/MKL threads 1).  Prints one Markdown
# row per run: L | N | solver | wall s | cpu s | iterations | relative L2 | max error | RSS MB | load.
set -euo pipefail
if [ $# -lt 4 ]; then sed -n '2,15p' "$0"; exit 2; fi
numcalc=$(realpath "$1"); bem=$(realpath "$2"); work=$3; levels=$4; core=${5:-0}; repeats=${6:-1}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$work"; work=$(realpath "$work")
k=8
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1
echo "| L | N | solver | wall s | cpu s (user+sys) | iterations | relative L2 | max error | peak RSS MB | load avg (1 min) before |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for L in $levels; do
  proj=$work/L$L/numcalc
  python3 "$here/sphere_project.py" "$proj" -L "$L" -k "$k" >&2
  N=$(head -1 "$proj/Elements.txt")
  for r in $(seq 1 "$repeats"); do
    # NumCalc: run in the project folder (it reads ./NC.inp, writes ./NC.out and ./be.out).
    load=$(cut -d' ' -f1 /proc/loadavg)
    (cd "$proj" && /usr/bin/time -f "%e %U %S %M" -o time.txt taskset -c "$core" "$numcalc" \
       > numcalc.log 2>&1)
    read -r wall user sys rss < "$proj/time.txt"
    iters=$(sed -n 's/.*CGS solver: number of iterations = \([0-9]*\).*/\1/p' "$proj/NC.out")
    err=$(python3 "$here/mie_error.py" --numcalc "$proj" -k "$k")
    echo "$err" >&2
    rel=$(sed -n 's/.*relative L2 = \([^ ]*\).*/\1/p' <<<"$err")
    mx=$(sed -n 's/.*max |u - exact| = \([^,]*\),.*/\1/p' <<<"$err")
    cp "$proj/NC.out" "$work/L$L/NC.out.$r"; cp "$proj/numcalc.log" "$work/L$L/numcalc.log.$r"
    echo "| $L | $N | NumCalc (ML-FMM, Burton-Miller, CGS+ILU, tol 1e-9) | $wall | $(awk "BEGIN{printf \"%.2f\", $user + $sys}") | $iters (CGS) | $rel | $mx | $((rss / 1024)) | $load |"
    for F in cbie bm rbm; do
      out=$work/L$L/$F
      load=$(cut -d' ' -f1 /proc/loadavg)
      /usr/bin/time -f "%e %U %S %M" -o "$out.time" taskset -c "$core" "$bem" \
        -mesh "icosphere:$L" -k "$k" -bem_formulation "$F" -bem_csv "$out.csv" > "$out.log.$r" 2>&1
      read -r wall user sys rss < "$out.time"
      iters=$(sed -n 's/^ *solver *\([0-9]*\) iterations.*/\1/p' "$out.log.$r")
      own=$(sed -n 's/.*relative L2 = \(.*\)$/\1/p' "$out.log.$r")
      err=$(python3 "$here/mie_error.py" --csv "$out.csv" --mesh "$proj" -k "$k")
      echo "$err (bem_solve's own: $own)" >&2
      rel=$(sed -n 's/.*relative L2 = \([^ ]*\).*/\1/p' <<<"$err")
      mx=$(sed -n 's/.*max |u - exact| = \([^,]*\),.*/\1/p' <<<"$err")
      echo "| $L | $N | bem_solve $F | $wall | $(awk "BEGIN{printf \"%.2f\", $user + $sys}") | $iters (GMRES) | $rel | $mx | $((rss / 1024)) | $load |"
    done
  done
done

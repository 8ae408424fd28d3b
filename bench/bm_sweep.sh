#!/usr/bin/env bash
# The rigid unit sphere over a range of k with the conventional equation (cbie) and
# Burton-Miller (bm): relative L2 error against the Mie series and GMRES iterations per k, one CSV
# row per (k, formulation), then a plot (bench/plot_bm_sweep.py) and, per formulation, the largest
# ratio of a k's error to the median of its ten neighbours (five below, five above): the issue asks
# that it stay below 1.5 for bm everywhere, the zeros of j_n included.
#
# Usage: bench/bm_sweep.sh BEM_SOLVE [OUT_CSV]
# Environment: MESH (icosphere:4), K_FIRST (1), K_LAST (10), K_STEP (0.05), EXTRA (more bem_solve
# options, e.g. "-fmm_device gpu"), FORMULATIONS ("cbie bm"), OMP_NUM_THREADS (passed through).
# Default OUT_CSV: bench/results/bm_sweep.csv. Needs awk.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bem=${1:?usage: bench/bm_sweep.sh BEM_SOLVE [OUT_CSV]}
out=${2:-$here/results/bm_sweep.csv}
mesh=${MESH:-icosphere:4}
ks=$(awk -v a="${K_FIRST:-1}" -v b="${K_LAST:-10}" -v s="${K_STEP:-0.05}" \
  'BEGIN { n = int((b - a) / s + 0.5); for (i = 0; i <= n; ++i) printf "%.4f\n", a + i * s }')
mkdir -p "$(dirname "$out")"
echo "mesh,k,formulation,alpha,iterations,reason,rel_l2_error,max_error,solve_s" >"$out.tmp"
for k in $ks; do
  for form in ${FORMULATIONS:-cbie bm}; do
    # shellcheck disable=SC2086
    log=$("$bem" -mesh "$mesh" -k "$k" -bem_formulation "$form" ${EXTRA:-} 2>&1) || true
    its=$(sed -n 's/^ *solver *\([0-9]*\) iterations, \([A-Z_]*\).*/\1,\2/p' <<<"$log")
    err=$(sed -n 's/^ *error *max |u - exact| = \([^,]*\), relative L2 = \(.*\)$/\2,\1/p' <<<"$log")
    alpha=$(sed -n 's/.*alpha = \([^ ]*\).*/\1/p' <<<"$log")
    solve=$(sed -n 's/^ *times .*solve \([0-9.e+-]*\) s.*/\1/p' <<<"$log")
    [ -n "$its" ] && [ -n "$err" ] || { echo "k = $k $form failed:" >&2; tail -3 <<<"$log" >&2; exit 1; }
    echo "$mesh,$k,$form,${alpha:-0},$its,$err,$solve" >>"$out.tmp"
  done
done
mv "$out.tmp" "$out"
# The criterion: error / median of the ten neighbouring k, largest per formulation.
awk -F, 'NR > 1 { n[$3]++; e[$3, n[$3]] = $7; k[$3, n[$3]] = $2 }
  END {
    for (f in n) {
      worst = 0; at = 0
      for (i = 1; i <= n[f]; ++i) {
        m = 0
        for (j = i - 5; j <= i + 5; ++j) if (j != i && j >= 1 && j <= n[f]) v[++m] = e[f, j]
        for (a = 1; a <= m; ++a) for (b = a + 1; b <= m; ++b) if (v[b] < v[a]) { t = v[a]; v[a] = v[b]; v[b] = t }
        med = (m % 2) ? v[(m + 1) / 2] : 0.5 * (v[m / 2] + v[m / 2 + 1])
        r = e[f, i] / med
        if (r > worst) { worst = r; at = k[f, i] }
      }
      printf "%s: largest error / median of the ten neighbouring k = %.2f at k = %s\n", f, worst, at
    }
  }' "$out"

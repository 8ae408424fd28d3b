#!/usr/bin/env bash
# Several sources in one run against a single-source run (one set-up per k shared by m solves):
# the time of m plane-wave directions (-bem_incident_dir fibonacci:m) over the time of one,
# beside the goal 0.5 m + 1, and where the time goes (the k's set-up, the sources' solves).
# Each run is a whole bem_solve process (start-up, mesh, set-up, solves), timed by its wall
# clock; the m values are run in one sitting so that the ratios compare like with like.
#
#   BEM=build/bin/bem_solve MESH=icosphere:5 K=8 MS="2 8 32" EXTRA="" bench/sources_cost.sh
#
# Prints a Markdown table; full logs go to $LOGS (default /tmp/sources_cost).
set -euo pipefail
BEM=${BEM:-build/bin/bem_solve}
MESH=${MESH:-icosphere:5}
K=${K:-8}
MS=${MS:-"2 8 32"}
EXTRA=${EXTRA:-}
LOGS=${LOGS:-/tmp/sources_cost}
mkdir -p "$LOGS"
echo "| m | wall s | wall / single | goal 0.5 m + 1 | set-up s | solve s per source | iterations |"
echo "|---|---|---|---|---|---|---|"
single=""
for m in 1 $MS; do
  log="$LOGS/m$m.log"
  start=$(date +%s.%N)
  # shellcheck disable=SC2086
  "$BEM" -mesh "$MESH" -k "$K" -bem_incident_dir "fibonacci:$m" $EXTRA >"$log" 2>&1
  end=$(date +%s.%N)
  wall=$(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }')
  [ -z "$single" ] && single=$wall
  # The per-source times and iterations from the summaries' solver and times lines.
  read -r setup solve its <<<"$(awk '
    /^  solver/ { n++; it = $2; lo = (n == 1 || it < lo) ? it : lo; hi = (it > hi) ? it : hi }
    /^  times/ { gsub(",", ""); s = $3; v = $6; if (n == 1) setup = s; solve += v }
    END { printf "%.3f %.3f %s\n", setup, solve / n, (lo == hi ? lo : lo "-" hi) }' "$log")"
  printf "| %d | %.2f | %.2f | %.1f | %s | %s | %s |\n" "$m" "$wall" \
    "$(awk -v w="$wall" -v s="$single" 'BEGIN { print w / s }')" \
    "$(awk -v m="$m" 'BEGIN { print 0.5 * m + 1 }')" "$setup" "$solve" "$its"
done

#!/usr/bin/env bash
# The reference paper's experiment (Takahashi, Cecka, Darve, sections 5-6): rigid unit
# sphere, plane wave exp(ikz), k = 8, GMRES with point Jacobi, zero initial guess, relative
# residual 1e-5, 3 Gauss points per element, p = 8 and 16, N = 20,480 to 1,310,720 (icosphere
# L = 5..8 and Gmsh spheres in between). One row per (mesh, p): iterations, error against the Mie
# series, set-up / solve / MatMult times, the MatMult split by FMM phase (-log_view), M2L TFLOP/s,
# peak host and device memory.
#
# Usage:
#   bench/paper_experiment.sh meshes [MESH_DIR [SIZE...]]
#       the in-between Gmsh spheres (needs the gmsh program): SIZE 40k, 116k, 162k, 647k (default
#       all; N = 40,150, 115,924, 162,292, 647,014), as MESH_DIR/sphere_<N>.msh.xz (binary MSH
#       4.1; MESH_XZ=0: plain .msh). MESH_DIR defaults to .devrt-c/meshes (git-ignored). The
#       device machine has no Gmsh: make the three small ones here (5.8 MB with xz; about a CPU
#       minute) and carry them; 647k (12 MB even with xz, 49 s there) does not fit in the
#       carry limit beside a Gmsh bundle (55 MB), so make it there with the gmsh program carried
#       in the bundle: device-bundle DIR BEM_SOLVE /usr/bin/gmsh (it adds 14 kB).
#   bench/paper_experiment.sh run BEM_SOLVE DEVICE [MESH:P ...]
#       runs BEM_SOLVE (a build with Gmsh for the .msh sizes; VTK not needed) with
#       -fmm_device DEVICE (cpu or gpu) for each MESH:P (MESH = icosphere:L or a file under
#       MESH_DIR such as sphere_40150.msh.xz; P = 8 or 16). Default: every size (icosphere:5..8 and
#       every MESH_DIR/sphere_*.msh*), p = 8 then p = 16. Each finished run replaces its row (same
#       mesh and p) in RESULTS/paper_experiment_DEVICE.csv and the Markdown table
#       RESULTS/paper_experiment_DEVICE.md is rewritten from the CSV, so a run split over several
#       calls (keep each under the device machine's 600 s) adds up to one table.
#   bench/paper_experiment.sh table DEVICE
#       rewrites RESULTS/paper_experiment_DEVICE.md from its CSV (and the notes file
#       RESULTS/paper_experiment_DEVICE_notes.md, appended verbatim when present).
#   bench/paper_experiment.sh parse LOG [DEVICE LABEL P]
#       prints the CSV row of a kept log (LOG_DIR) again, for a changed parser.
#
# Environment: RESULTS (bench/results), LOG_DIR (/tmp/paper_logs: the full output of each run),
# MESH_DIR (.devrt-c/meshes), OMP_NUM_THREADS (passed through), RUN_TIMEOUT (s per run, 900),
# RUN_DATE (else today), COMMIT (else git rev-parse --short HEAD, '+dirty' with uncommitted
# changes; the device machine has no .git: pass it), MACHINE (else the GPU name from nvidia-smi,
# the CPU model and the core count), EXTRA (more bem_solve options, e.g. "-fmm_m2l_scheme
# gemm"; recorded in the CSV).
# Needs bash, awk, sed, xz, coreutils (and timeout); the meshes mode needs gmsh.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
results=${RESULTS:-$here/results}
log_dir=${LOG_DIR:-${TMPDIR:-/tmp}/paper_logs}
mesh_dir=${MESH_DIR:-.devrt-c/meshes}
columns="device,mesh,N,p,iterations,reason,max_error,rel_l2_error,setup_s,operator_setup_s,\
fmm_tree_s,fmm_translations_s,solve_s,wall_s,matmults,s_per_matmult,p2m_s,m2m_s,m2l_s,l2l_s,\
l2p_s,near_s,other_s,m2l_pairs,m2l_tflops,m2l_on,near_on,peak_host_gb,peak_device_gb,threads,\
extra,date,machine,commit,status,max_leaf,levels"

usage() { sed -n '/^# Usage:/,/^# Needs/p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

# ---------------------------------------------------------------------------------------------
make_meshes() {
  local dir=${1:-$mesh_dir} geo=$here/meshes/sphere_h.geo size h v n tmp sizes
  [ $# -gt 0 ] && shift
  sizes=("$@")
  [ ${#sizes[@]} -gt 0 ] || sizes=(40k 116k 162k 647k)
  mkdir -p "$dir"
  tmp=$(mktemp -d)
  for size in "${sizes[@]}"; do
    # Edge lengths for these N (N ~ 30.06 / h^2 on this .geo), written out in full so that the
    # same Gmsh (Debian's 4.8.4) gives the same meshes again.
    case $size in
      40k) h=0.027321469040005184 ;;   # N = 40,150
      116k) h=0.016107454626495692 ;;  # N = 115,924
      162k) h=0.013544678931261923 ;;  # N = 162,292
      647k) h=0.006772339465630961 ;;  # N = 647,014
      *) echo "paper_experiment: mesh size is 40k, 116k, 162k or 647k, not '$size'" >&2; exit 2 ;;
    esac
    echo "gmsh: $size, h = $h" >&2
    gmsh -2 "$geo" -setnumber h "$h" -o "$tmp/sphere.msh" >"$tmp/gmsh.log" 2>&1 ||
      { cat "$tmp/gmsh.log" >&2; exit 1; }
    # A closed genus-0 triangulation with V vertices has 2 V - 4 triangles.
    v=$(sed -n 's/^Info *: \([0-9]*\) nodes [0-9]* elements$/\1/p' "$tmp/gmsh.log" | tail -1)
    n=$((2 * v - 4))
    if [ "${MESH_XZ:-1}" = 1 ]; then
      xz -T0 -9 -c "$tmp/sphere.msh" >"$dir/sphere_$n.msh.xz"
      rm "$tmp/sphere.msh"
      echo "  $dir/sphere_$n.msh.xz: N = $n, $(du -h "$dir/sphere_$n.msh.xz" | cut -f1)" >&2
    else
      mv "$tmp/sphere.msh" "$dir/sphere_$n.msh"
      echo "  $dir/sphere_$n.msh: N = $n, $(du -h "$dir/sphere_$n.msh" | cut -f1)" >&2
    fi
    sed -n 's/^Info *: Done meshing 2D (\(.*\))$/  gmsh 2D: \1/p' "$tmp/gmsh.log" >&2
  done
  rm -rf "$tmp"
}

# ---------------------------------------------------------------------------------------------
event_seconds() {  # max-over-ranks seconds of a -log_view event (0 when absent)
  awk -v e="$2" '$1 == e && NF > 5 { t = $4 } END { print (t == "" ? 0 : t) }' "$1"
}

machine_name() {  # no commas: it is a CSV field
  if [ -n "${MACHINE:-}" ]; then echo "$MACHINE" | tr ',' ';'; return; fi
  local gpu cpu
  gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 || true)
  cpu=$(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo 2>/dev/null | head -1)
  echo "${gpu:+$gpu; }$cpu; $(nproc) cores" | tr ',' ';'
}

commit_name() {
  if [ -n "${COMMIT:-}" ]; then echo "$COMMIT"; return; fi
  local c
  c=$(git -C "$here" rev-parse --short HEAD 2>/dev/null) || { echo unknown; return; }
  git -C "$here" diff --quiet HEAD 2>/dev/null || c="$c+dirty"
  echo "$c"
}

# One bem_solve run; prints its CSV row.
run_one() {
  local bem=$1 device=$2 spec=$3 p=$4 mesh label log tmp="" start end rc status
  case $spec in
    icosphere:*) mesh=$spec; label=$spec ;;
    *) mesh=$spec
       [ -e "$mesh" ] || mesh=$mesh_dir/$spec
       [ -e "$mesh" ] || { echo "paper_experiment: no mesh $spec (nor $mesh)" >&2; return 1; }
       label=gmsh:$(basename "$spec" | sed 's/\.xz$//')
       if [[ $mesh == *.xz ]]; then
         tmp=$(mktemp -d)
         xz -dc "$mesh" >"$tmp/sphere.msh"
         mesh=$tmp/sphere.msh
       fi ;;
  esac
  log="$log_dir/${device}_$(echo "$label" | tr ':/' '__')_p$p.txt"
  local extra=() cmd
  read -r -a extra <<<"${EXTRA:-}"
  cmd=("$bem" -mesh "$mesh" -k 8 -bem_formulation cbie -fmm_p "$p" -fmm_device "$device" -bem_quad_order 3
       -ksp_type gmres -pc_type jacobi -ksp_rtol 1e-5 -fmm_view -log_view "${extra[@]}")
  echo "${cmd[*]}" >"$log"
  start=$(date +%s.%N)
  rc=0
  timeout "${RUN_TIMEOUT:-900}" "${cmd[@]}" >>"$log" 2>&1 || rc=$?
  end=$(date +%s.%N)
  [ -n "$tmp" ] && rm -rf "$tmp"
  case $rc in 0) status=ok ;; 124) status=timeout ;; 2) status=not-converged ;; *) status=failed-$rc ;; esac
  LOG=$log DEVICE=$device LABEL=$label P=$p WALL=$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.2f", b - a }') \
    STATUS=$status THREADS=${OMP_NUM_THREADS:-} EXTRA_OPTS="${EXTRA:-}" DATE=${RUN_DATE:-$(date +%F)} \
    MACHINE_NAME=$(machine_name) COMMIT_NAME=$(commit_name) parse_log
}

# Turns one run's log into a CSV row (fields empty where the log lacks them). Reads LOG, DEVICE,
# LABEL, P, WALL, STATUS, THREADS, EXTRA_OPTS, DATE, MACHINE_NAME, COMMIT_NAME from the environment.
# shellcheck disable=SC2153
parse_log() {
  local f=$LOG n its reason maxerr l2 setup solve per mm pairs peak_host peak_dev m2l_on near_on
  n=$(sed -n 's/.*: N = \([0-9]*\) elements.*/\1/p' "$f" | head -1)
  its=$(sed -n 's/^ *solver *\([0-9]*\) iterations, \([A-Z_]*\).*/\1/p' "$f" | head -1)
  reason=$(sed -n 's/^ *solver *[0-9]* iterations, \([A-Z_]*\).*/\1/p' "$f" | head -1)
  maxerr=$(sed -n 's/.*max |[a-z]* - exact| = \([0-9.e+-]*\),.*/\1/p' "$f" | head -1)
  l2=$(sed -n 's/.*relative L2 = \([0-9.e+-]*\).*/\1/p' "$f" | head -1)
  setup=$(sed -n 's/^ *times *set-up \([0-9.e+-]*\) s.*/\1/p' "$f" | head -1)
  solve=$(sed -n 's/^ *times .*solve \([0-9.e+-]*\) s.*/\1/p' "$f" | head -1)
  per=$(sed -n 's/^ *times .*, \([0-9.e+-]*\) s per MatMult.*/\1/p' "$f" | head -1)
  mm=$(sed -n 's/^ *times .*(\([0-9]*\) MatMults).*/\1/p' "$f" | head -1)
  peak_host=$(sed -n 's/^ *memory *peak host \([0-9.e+-]*\) GB.*/\1/p' "$f" | head -1)
  # Peak device memory: a line naming it ("peak device ...", or -fmm_view's "device memory held
  # (also the peak: ...) X MiB"), the first number with MiB/MB/GiB/GB on it; else empty.
  peak_dev=$({ grep -i 'peak device' "$f" || grep -i '^ *device memory held' "$f" || true; } |
    head -1 | awk '{
      if (match($0, /[0-9.]+(e[+-]?[0-9]+)? *(MiB|MB|GiB|GB)/)) {
        s = substr($0, RSTART, RLENGTH); v = s + 0
        if (s ~ /MiB/) v *= 1048576 / 1e9; else if (s ~ /GiB/) v *= 1073741824 / 1e9;
        else if (s ~ /MB/) v /= 1e3
        printf "%.3f", v } }')
  # -fmm_view: the per-level table's M2L pairs column, summed.
  pairs=$(awk '/level +cells +leaves +M2L pairs/ { t = 1; next }
               t && NF == 5 && $1 ~ /^[0-9]+$/ { s += $4; next } t { t = 0 }
               END { if (s != "") print s }' "$f")
  # Where M2L and the near field ran: the summary's fmm line ("M2L on gpu, scheme dmma, near
  # field on gpu"; "cpu (no GPU: ...)"), else -fmm_view's "M2L on ..." line.
  m2l_on=$(sed -n 's/^ *fmm .*M2L on \(.*\), near field on .*/\1/p' "$f" | head -1)
  [ -n "$m2l_on" ] || m2l_on=$(sed -n 's/^ *fmm .*M2L on \(.*\)$/\1/p' "$f" | head -1)
  [ -n "$m2l_on" ] || m2l_on=$(sed -n 's/^ *M2L on \([a-z]*\).*/\1/p' "$f" | head -1)
  m2l_on=$(echo "$m2l_on" | sed 's/ (.*//; s/, scheme / /; s/,/;/g')
  near_on=$(sed -n 's/^ *fmm .*, near field on \(.*\)$/\1/p' "$f" | head -1 | sed 's/ (.*//; s/,/;/g')
  local phases="" sum=0 e t
  for e in FMMP2M FMMM2M FMMM2L FMML2L FMML2P FMMNear; do
    t=$(event_seconds "$f" "$e")
    if [ -n "$mm" ] && [ "$mm" -gt 0 ]; then
      t=$(awk -v t="$t" -v m="$mm" 'BEGIN { printf "%.4g", t / m }')
      sum=$(awk -v a="$sum" -v b="$t" 'BEGIN { print a + b }')
    else t=""; fi
    phases="$phases,$t"
  done
  local other="" tflops="" m2l_s
  [ -n "$per" ] && other=$(awk -v a="$per" -v b="$sum" 'BEGIN { printf "%.4g", a - b }')
  m2l_s=$(echo "$phases" | cut -d, -f4)
  [ -n "$pairs" ] && [ -n "$m2l_s" ] && tflops=$(awk -v n="$pairs" -v p="$P" -v t="$m2l_s" \
    'BEGIN { if (t > 0) printf "%.4g", 8 * n * p^4 / t / 1e12 }')
  local tree trans opsetup leaf levels
  leaf=$(sed -n 's/^ *fmm .*(max leaf \([0-9]*\)).*/\1/p' "$f" | head -1)
  levels=$(sed -n 's/^ *fmm *p = [0-9]*, \([0-9]*\) levels.*/\1/p' "$f" | head -1)
  tree=$(event_seconds "$f" FMMTree)
  trans=$(event_seconds "$f" FMMTranslations)
  opsetup=$(event_seconds "$f" BEMNearSetup)
  echo "$DEVICE,$LABEL,$n,$P,$its,$reason,$maxerr,$l2,$setup,$opsetup,$tree,$trans,$solve,$WALL,\
$mm,$per$phases,$other,$pairs,$tflops,$m2l_on,$near_on,$peak_host,$peak_dev,$THREADS,\
$(echo "$EXTRA_OPTS" | tr ',' ';'),$DATE,$MACHINE_NAME,$COMMIT_NAME,$STATUS,$leaf,$levels"
}

# ---------------------------------------------------------------------------------------------
write_table() {
  local device=$1 csv=$results/paper_experiment_$1.csv md=$results/paper_experiment_$1.md
  [ -s "$csv" ] || { echo "paper_experiment: no $csv" >&2; exit 1; }
  {
    echo "# The reference paper's experiment: rigid sphere, k = 8 ($device rows)"
    echo
    echo "Written by \`bench/paper_experiment.sh\` from \`paper_experiment_$device.csv\` (do not edit the"
    echo "table by hand; notes go to \`paper_experiment_${device}_notes.md\`). Rigid unit sphere, plane"
    echo "wave exp(ikz), k = 8, GMRES + point Jacobi, zero initial guess, relative residual 1e-5,"
    echo "3 Gauss points per element; the octree's max leaf as bem_solve chose it (or EXTRA set it),"
    echo "in the table. Error: against the Mie series, over the N collocation points."
    echo
    echo "Runs (date, machine, commit, OMP threads, extra options):"
    echo
    awk -F, 'NR > 1 { k = "* " $32 ", " $33 ", commit `" $34 "`, OMP_NUM_THREADS=" $30 \
        ($31 != "" ? ", extra `" $31 "`" : ""); if (!(k in seen)) { seen[k] = 1; print k } }' "$csv"
    echo
    echo "Command per row: \`bem_solve -mesh MESH -k 8 -bem_formulation cbie -fmm_p P -fmm_device $device -bem_quad_order 3"
    echo "-ksp_type gmres -pc_type jacobi -ksp_rtol 1e-5 -fmm_view -log_view\` (the defaults, spelled"
    echo "out). Set-up: from the start to the solve (mesh read included; \"operator\" = the"
    echo "\`BEMNearSetup\` event: octree, translations and the near-field correction). Per-phase"
    echo "columns: \`-log_view\` event time (max over ranks) / MatMults, in ms per MatMult; \"other\" ="
    echo "s per MatMult minus the six phases (sparse near-field correction, gather, diagonal scaling)."
    echo "M2L TFLOP/s: 8 p^4 flops per M2L pair (as \`bench/gpu_m2l\`) / M2L time. Peak host: largest"
    echo "resident set (getrusage), max over ranks; peak device: from \`-fmm_view\` when it prints one."
    echo
    echo "| N | mesh | p | leaf, levels | its | max error | rel. L2 error | set-up s | operator s | solve s | s per MatMult | P2M ms | M2M ms | M2L ms | L2L ms | L2P ms | Near ms | other ms | M2L TFLOP/s | M2L on | peak host GB | peak device GB | status |"
    echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    awk -F, 'NR > 1' "$csv" | sort -t, -k4,4n -k3,3n | awk -F, '
      function ms(x) { return x == "" ? "" : sprintf("%.1f", x * 1e3) }
      function g(x, f) { return x == "" ? "" : sprintf(f, x) }
      { printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
          $3, $2, $4, ($36 == "" ? "" : $36 ", " $37), $5, g($7, "%.2e"), g($8, "%.2e"), g($9, "%.2f"), g($10, "%.2f"), g($13, "%.2f"),
          g($16, "%.4f"), ms($17), ms($18), ms($19), ms($20), ms($21), ms($22), ms($23),
          g($25, "%.3f"), $26, g($28, "%.2f"), g($29, "%.2f"), $35 }'
    if [ -s "$results/paper_experiment_${device}_notes.md" ]; then
      echo
      cat "$results/paper_experiment_${device}_notes.md"
    fi
  } >"$md.tmp"
  mv "$md.tmp" "$md"
}

# ---------------------------------------------------------------------------------------------
default_runs() {
  local sizes=() f p
  for f in icosphere:5 icosphere:6 icosphere:7 icosphere:8; do sizes+=("$f"); done
  if [ -d "$mesh_dir" ]; then
    for f in "$mesh_dir"/sphere_*.msh*; do [ -e "$f" ] && sizes+=("$(basename "$f")"); done
  fi
  # Order by N: icosphere:L has 20 * 4^L elements, sphere_<N>.msh[.xz] about N.
  for p in 8 16; do
    for f in "${sizes[@]}"; do
      case $f in
        icosphere:*) echo "$((20 * 4 ** ${f#icosphere:})) $f:$p" ;;
        *) n=${f#sphere_}; echo "${n%%.*} $f:$p" ;;
      esac
    done | sort -n | cut -d' ' -f2
  done
}

run_all() {
  local bem=$1 device=$2; shift 2
  case $device in cpu|gpu) ;; *) echo "paper_experiment: DEVICE is cpu or gpu, not '$device'" >&2; exit 2 ;; esac
  [ -x "$bem" ] || { echo "paper_experiment: $bem is not a program" >&2; exit 2; }
  local runs=("$@") csv=$results/paper_experiment_$device.csv run spec p row
  [ ${#runs[@]} -gt 0 ] || mapfile -t runs < <(default_runs)
  mkdir -p "$log_dir" "$results"
  [ -s "$csv" ] || echo "$columns" >"$csv"
  for run in "${runs[@]}"; do
    spec=${run%:*}
    p=${run##*:}
    echo "paper_experiment: $device $spec p = $p ..." >&2
    row=$(run_one "$bem" "$device" "$spec" "$p") || continue
    echo "  $row" >&2
    # Replace the row of the same device, mesh and p, keep the others.
    awk -F, -v d="$device" -v m="$(echo "$row" | cut -d, -f2)" -v p="$p" \
      'NR == 1 || !($1 == d && $2 == m && $4 == p)' "$csv" >"$csv.tmp"
    echo "$row" >>"$csv.tmp"
    mv "$csv.tmp" "$csv"
    write_table "$device"
  done
}

[ $# -ge 1 ] || usage
mode=$1; shift
case $mode in
  meshes) make_meshes "$@" ;;
  run) [ $# -ge 2 ] || usage; run_all "$@" ;;
  table) [ $# -eq 1 ] || usage; write_table "$1" ;;
  parse) [ $# -ge 1 ] || usage
         LOG=$1 DEVICE=${2:-cpu} LABEL=${3:-?} P=${4:-8} WALL='' STATUS=parsed THREADS='' EXTRA_OPTS='' \
           DATE=$(date +%F) MACHINE_NAME=$(machine_name) COMMIT_NAME=$(commit_name) parse_log ;;
  *) usage ;;
esac

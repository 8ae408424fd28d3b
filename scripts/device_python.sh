#!/usr/bin/env bash
# The Python module on a GPU machine that has neither fmbem's Python nor its numpy.
#   pack DIR BUILD   (here) DIR/python.tar.xz: Debian's python3.11 with the standard library,
#                    numpy, the libraries they load, and BUILD's fmbem package (its _fmbem
#                    module from the same lean build as the bundle's bem_solve);
#   bench ARGS...    (there, after `source DIR/device-env`) unpacks it and runs
#                    bench/python_overhead.py ARGS with that interpreter, bem_solve the bundle's.
# The GPU machine's own Python (3.12, its numpy 2) cannot load a module built here for 3.11.
set -euo pipefail
case "${1:-}" in
pack)
  dir=$2 build=$3
  stage=$(mktemp -d); trap 'rm -rf "$stage"' EXIT
  home=$stage/py
  mkdir -p "$home/bin" "$home/lib" "$home/site"
  cp -L /usr/bin/python3.11 "$home/bin/"
  # The standard library without its tests, GUI and build files.
  tar -C /usr/lib -cf - --exclude='python3.11/test' --exclude='python3.11/config-3.11-*' \
    --exclude='python3.11/idlelib' --exclude='python3.11/tkinter' --exclude='python3.11/turtledemo' \
    --exclude='python3.11/lib2to3' --exclude='python3.11/ensurepip' --exclude='python3.11/dist-packages' \
    --exclude='*_tkinter*' --exclude='*_test*' --exclude='*_ssl.*' --exclude='*_hashlib.*' \
    --exclude='*_sqlite3.*' --exclude='*_dbm.*' --exclude='*_curses*' --exclude='*readline.*' \
    --exclude='*nis.*' --exclude='*_crypt.*' --exclude='__pycache__' python3.11 |
    tar -C "$home/lib" -xf -
  tar -C /usr/lib/python3/dist-packages -cf - --exclude='tests' --exclude='__pycache__' numpy |
    tar -C "$home/site" -xf -
  cp -a "$build/python/fmbem" "$home/site/"
  find "$home" -name __pycache__ -prune -exec rm -rf {} +
  skip='^(linux-vdso|ld-linux|libc\.so|libm\.so|libdl\.so|libpthread\.so|librt\.so|libutil\.so|libresolv\.so)'
  # What the bundle carries already (bem_solve's libraries: BLAS, LAPACK, libgfortran).
  bundled=" $(ldd "$build/bin/bem_solve" | awk '$3 ~ /^\// {printf "%s ", $1}')"
  # The interpreter's and numpy's libraries; _fmbem's are the bundle's (bem_solve's).
  { echo "$home/bin/python3.11"; find "$home/lib/python3.11" "$home/site/numpy" -name '*.so'; } |
    xargs ldd 2>/dev/null |
    awk '$3 ~ /^\// {print $3}' | sort -u | while read -r lib; do
      name=$(basename "$lib")
      [[ $name =~ $skip || $bundled == *" $name "* ]] || cp -L "$lib" "$home/lib/"
    done
  tar -C "$stage" -cf - py | xz -T0 -6 > "$dir/python.tar.xz"
  echo "device_python: $(du -h "$dir/python.tar.xz" | cut -f1) in $dir/python.tar.xz"
  ;;
bench)
  shift
  here=$(cd "$(dirname "$0")/.." && pwd)
  mkdir -p /opt/fmbem-py && xz -dc "$here/.devrt/python.tar.xz" | tar -C /opt/fmbem-py -xf -
  home=/opt/fmbem-py/py
  # The bundle's libraries first (PETSc, Open MPI), then the interpreter's own.
  export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$home/lib PYTHONHOME=$home PYTHONPATH=$home/site
  export PYTHONUNBUFFERED=1 BEM_SOLVE=${BEM_SOLVE:-$(command -v bem_solve)}
  "$home/bin/python3.11" -c 'import numpy, fmbem; print("numpy", numpy.__version__, "fmbem from", fmbem.__file__)'
  "$home/bin/python3.11" "$here/bench/python_overhead.py" "$@"
  ;;
*)
  echo "usage: device_python.sh pack DIR BUILD | bench ARGS..." >&2
  exit 2
  ;;
esac

#!/usr/bin/env bash
# Installs every dependency from Debian's packages and builds fmbem in build/.
#   scripts/setup.sh            (as root; set BUILD_DIR to build elsewhere)
set -euo pipefail
cd "$(dirname "$0")/.."
packages=(build-essential cmake pkg-config python3 libpetsc-complex-dev libgmsh-dev gmsh
          libvtk9-dev libboost-dev libopenmpi-dev openmpi-bin googletest libgtest-dev libseccomp-dev
          python3-matplotlib paraview xvfb xauth libtomlplusplus-dev libnetcdf-dev python3-venv
          python3-dev python3-numpy python3-scipy pybind11-dev python3-petsc4py python3-gmsh
          python3-petsc4py-complex)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
# pvpython (examples/sphere_plane/show_plane.py and its test): Debian 12's python3-paraview
# conflicts with python3-vtk9, which libvtk9-dev needs, so it is unpacked, not installed.
pvdir=/opt/python3-paraview
if ! command -v pvpython >/dev/null && [ ! -x $pvdir/usr/bin/pvpython ]; then
  deb=$(mktemp -d)
  version=$(dpkg-query -W -f='${Version}' paraview)
  fetch() { (cd "$deb" && apt-get download -q "python3-paraview=$version"); }
  # Package lists may be stale where everything else was installed already.
  if fetch || { apt-get update -q && fetch; }; then
    dpkg-deb -x "$deb"/python3-paraview_*.deb $pvdir
  else
    echo "setup.sh: warning: python3-paraview not found; the ParaView picture test is left out" >&2
  fi
  rm -rf "$deb"
fi
# sofar (PyPI), the SOFA reader the tests check -bem_sofa's files with (its verify() knows every
# convention's rules), in a virtual environment of its own: Debian 12's Python is externally
# managed, and the project's own code needs nothing from it.
sofar_env=/opt/fmbem-sofar
if [ ! -x $sofar_env/bin/python ] || ! $sofar_env/bin/python -c 'import sofar' 2>/dev/null; then
  python3 -m venv $sofar_env
  $sofar_env/bin/pip install -q 'sofar==1.3.0'
fi
# The Python module's environment: Debian's Python (its numpy, for the module's arrays) with
# scikit-build-core, the build backend `pip install .` uses, and pytest, which runs its tests.
python_env=/opt/fmbem-python
if [ ! -x $python_env/bin/python ] || ! $python_env/bin/python -c 'import scikit_build_core, pytest' 2>/dev/null; then
  /usr/bin/python3 -m venv --system-site-packages $python_env
  $python_env/bin/pip install -q 'scikit-build-core==0.10.7' 'pytest==8.3.4'
fi
build=${BUILD_DIR:-build}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DPython_EXECUTABLE=$python_env/bin/python
cmake --build "$build" -j "$(nproc)"
# `import fmbem` in that environment: pip installs the module built above (pyproject.toml), from
# the same build folder, so that nothing is compiled twice.
CMAKE_GENERATOR="Unix Makefiles" $python_env/bin/pip install -q --no-build-isolation \
  --config-settings=build-dir="$build" .

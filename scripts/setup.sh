#!/usr/bin/env bash
# Installs every dependency from Debian's packages and builds fmbem in build/.
#   scripts/setup.sh            (as root; set BUILD_DIR to build elsewhere)
set -euo pipefail
cd "$(dirname "$0")/.."
packages=(build-essential cmake pkg-config python3 libpetsc-complex-dev libgmsh-dev gmsh
          libvtk9-dev libboost-dev libopenmpi-dev openmpi-bin googletest libgtest-dev libseccomp-dev
          python3-matplotlib)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
build=${BUILD_DIR:-build}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release
cmake --build "$build" -j "$(nproc)"

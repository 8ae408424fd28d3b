#!/usr/bin/env bash
# Runs the whole test suite (unit and system tests) of the build in build/.
set -euo pipefail
cd "$(dirname "$0")/.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure -j 2 --timeout 900

#!/usr/bin/env bash
# Runs the whole test suite (unit, fuzz and system tests) of the build in build/, then
# builds the unit tests with AddressSanitizer + UndefinedBehaviorSanitizer in
# build-sanitize/ (FMBEM_SANITIZE=ON; no CUDA, no benchmarks) and runs them there.
#   scripts/test.sh                      (SANITIZE=0 skips the sanitizer pass)
set -euo pipefail
cd "$(dirname "$0")/.."
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ctest --test-dir "${BUILD_DIR:-build}" --output-on-failure -j 2 --timeout 900
if [ "${SANITIZE:-1}" != 0 ]; then
  sanitize=${SANITIZE_DIR:-build-sanitize}
  cmake -S . -B "$sanitize" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFMBEM_SANITIZE=ON \
        -DFMBEM_WITH_CUDA=OFF -DFMBEM_BUILD_BENCH=OFF -DFMBEM_WITH_PYTHON=OFF >/dev/null
  cmake --build "$sanitize" -j "$(nproc)"
  # The sanitizers look for memory and undefined-behaviour errors in the code paths, which the
  # small cases of each test reach; the convergence studies below (each 30-70 s sanitized, run
  # unsanitized in the main pass above) repeat the same paths on larger problems.
  heavy='ErrorFallsWithOrder|FmmNormalDerivative.MatchesTheDirectSum|MatchesDirectOperator/box'
  heavy+='|HypersingularOperatorConvergesOnTheSphere|DensityReconstruction.FmmMatchesDirect'
  heavy+='|FoldedCorrectionEqualsDenseAccurateOperator|AdjointDoubleLayerConvergesOnTheSphere'
  heavy+='|RegularisedProblem.SolvesTheMixedMonopole'
  # The wideband FMM's p = 21 case (dense translations' set-up), the rotations against every
  # dense matrix (the translations' and the M2L plan's) and the two-level diagonal chain: the same
  # paths as their smaller siblings.
  heavy+='|WidebandFmm.MatchesTheDirectSum/sphere, k = 32, eps = 1e-06'
  heavy+='|RotationTranslations.EqualDenseMatrices|HighFrequency.TwoLevelChainMatchesDirectSum'
  heavy+='|M2LPlanTest.RotationsEqualTheDenseMatrices'
  ctest --test-dir "$sanitize" --output-on-failure -j 2 --timeout 900 -L unit -E "$heavy"
fi

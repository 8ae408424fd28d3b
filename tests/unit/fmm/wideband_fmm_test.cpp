#include <gtest/gtest.h>
#include <omp.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <random>
#include <vector>

#include "fmbem/core/error.hpp"
#include "fmbem/fmm/direct_sum.hpp"
#include "fmbem/fmm/fmm.hpp"
#include "point_sets.hpp"

// The wideband FMM (levels too large for the low-frequency expansions in the diagonal form,
// docs/wideband.md) against the direct sum on sampled targets, the error relative to the part of
// the potentials the expansions carry (the direct sum minus the near field's).
namespace fmbem::fmm {
namespace {

using testing::PointSet;
using testing::relative_error;
using testing::skip_radius;
using testing::wide_case_points;
using testing::WideCase;

// The direct sum's phi + weight dphi/dn_t at every stride-th target.
std::vector<cplx> direct_sampled(double k, const PointSet& set, cplx weight, std::size_t stride) {
  std::vector<std::size_t> order(set.sources.size());
  std::iota(order.begin(), order.end(), 0);
  const PointSources sources(set.sources, set.normals, order, set.charges, set.dipoles);
  std::vector<cplx> phi((set.targets.size() + stride - 1) / stride);
#pragma omp parallel for
  for (std::size_t s = 0; s < phi.size(); ++s) {
    const std::size_t i = s * stride;
    const auto vd = sources.potential_and_normal_derivative(
        0, sources.size(), k, set.targets[i], set.target_normals[i], skip_radius * skip_radius);
    phi[s] = vd.value + weight * vd.normal_derivative;
  }
  return phi;
}

// The near lists' part of phi + weight dphi/dn_t at every stride-th target: what the FMM sums
// directly, so that direct - near is the part its expansions carry.
std::vector<cplx> near_part_sampled(const Fmm& fmm, const PointSet& set, cplx weight,
                                    std::size_t stride) {
  const NearFieldLists lists = fmm.near_field_lists();
  const PointSources sources(PointSources::PointsInOrder{}, lists.sources, lists.normals,
                             lists.source_order, set.charges, set.dipoles);
  std::vector<std::size_t> leaf_of_position(lists.target_order.size());
  for (std::size_t l = 0; l < lists.leaf_targets.size(); ++l)
    for (std::size_t i = lists.leaf_targets[l][0]; i < lists.leaf_targets[l][1]; ++i)
      leaf_of_position[i] = l;
  std::vector<std::size_t> position_of(lists.target_order.size());
  for (std::size_t i = 0; i < position_of.size(); ++i) position_of[lists.target_order[i]] = i;
  std::vector<cplx> near((set.targets.size() + stride - 1) / stride);
  for (std::size_t s = 0; s < near.size(); ++s) {
    const std::size_t t = s * stride, l = leaf_of_position[position_of[t]];
    for (std::size_t r = lists.offsets[l]; r < lists.offsets[l + 1]; ++r) {
      const auto vd = sources.potential_and_normal_derivative(
          lists.ranges[r][0], lists.ranges[r][1], lists.k, set.targets[t], set.target_normals[t],
          skip_radius * skip_radius);
      near[s] += vd.value + weight * vd.normal_derivative;
    }
  }
  return near;
}

class WidebandFmm : public ::testing::TestWithParam<WideCase> {};

TEST_P(WidebandFmm, MatchesTheDirectSum) {
  const WideCase c = GetParam();
  const PointSet set = wide_case_points(c, 5);
  const cplx weight(0.0, 1.0 / c.k);  // Burton-Miller's alpha = i / k
  FmmOptions options;
  options.tolerance = c.tolerance;
  options.max_leaf = 40;
  options.skip_radius = skip_radius;
  const auto t0 = std::chrono::steady_clock::now();
  // Both point sets split the tree (the sources alone where the targets are apart).
  std::vector<Vec3> splitting = set.targets;
  if (c.apart) splitting.insert(splitting.end(), set.sources.begin(), set.sources.end());
  const Fmm fmm(c.k, set.sources, set.normals, set.targets, splitting, options, nullptr,
                TargetNormalDerivative{set.target_normals, weight});
  const auto t1 = std::chrono::steady_clock::now();
  std::vector<cplx> phi(set.targets.size());
  fmm.apply(set.charges, set.dipoles, phi);
  const auto t2 = std::chrono::steady_clock::now();
  const std::size_t stride = 97;
  const std::vector<cplx> expected = direct_sampled(c.k, set, weight, stride);
  std::vector<cplx> sampled;
  for (std::size_t i = 0; i < phi.size(); i += stride) sampled.push_back(phi[i]);
  // The FMM's error as order_for_tolerance defines it (the whole potential's relative error),
  // and relative to the part the expansions carry (the direct sum minus the near lists' sums),
  // which the diagonal levels' error cannot hide behind the near field's size: for targets
  // apart from the sources the two are one.
  const double error = relative_error(sampled, expected);
  const std::vector<cplx> near = near_part_sampled(fmm, set, weight, stride);
  double num = 0.0, den = 0.0;
  for (std::size_t i = 0; i < sampled.size(); ++i) {
    num += std::norm(sampled[i] - expected[i]);
    den += std::norm(expected[i] - near[i]);
  }
  const double far_error = std::sqrt(num / den);
  const FmmStatistics& s = fmm.statistics();
  std::printf("[ measured ] %s k D ~ %.0f eps %.0e: p %d, levels %d, switch level %d, bandwidths",
              c.apart    ? "two spheres"
              : c.sphere ? "sphere"
                         : "box",
              2 * c.k, c.tolerance, s.order, s.levels, s.switch_level);
  for (int b : s.diagonal_bandwidths) std::printf(" %d", b);
  if (!s.level_orders.empty()) {
    std::printf(", level orders");
    for (std::size_t l = std::size_t(s.switch_level + 1); l < s.level_orders.size(); ++l)
      std::printf(" %d", s.level_orders[l]);
  }
  std::printf(
      ", %zu diagonal pairs; error %.2e, of the far part %.2e; set-up %.2f s, apply %.2f s\n",
      s.diagonal_pairs, error, far_error, std::chrono::duration<double>(t1 - t0).count(),
      std::chrono::duration<double>(t2 - t1).count());
  EXPECT_GE(s.switch_level, 2);
  // The tree is split down to the conversion level: no leaf on the diagonal levels, no deferred
  // pair summed directly.
  for (int leaf : fmm.tree().leaves()) EXPECT_GT(fmm.tree().cells()[leaf].level, s.switch_level);
  EXPECT_EQ(s.deferred_direct_pairs, 0u);
  // Where p rose above the tolerance's for the coarsest low-frequency level, the finer ones keep
  // theirs (their expansions truncated): the accuracy below holds with them.
  if (s.order > order_for_tolerance(c.tolerance)) {
    ASSERT_FALSE(s.level_orders.empty());
    EXPECT_EQ(s.level_orders.back(), order_for_tolerance(c.tolerance));
  }
  EXPECT_LT(error, c.tolerance);
  if (c.apart) EXPECT_LT(far_error, c.tolerance);
}

INSTANTIATE_TEST_SUITE_P(HighFrequency, WidebandFmm,
                         ::testing::Values(WideCase{true, 16.0, 1e-4}, WideCase{true, 32.0, 1e-4},
                                           WideCase{true, 32.0, 1e-6}, WideCase{false, 32.0, 1e-4},
                                           WideCase{true, 32.0, 1e-4, true},
                                           WideCase{true, 32.0, 1e-6, true},
                                           WideCase{true, 64.0, 1e-4, true}));

}  // namespace
}  // namespace fmbem::fmm

#include "fmbem/fmm/wideband_plan.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "fmbem/core/error.hpp"

namespace fmbem::fmm {
namespace {

// Points on the unit sphere (a BEM surface's shape) and a sparse cluster off it, so that the
// adaptive tree has leaves on the coarse levels too.
std::vector<Vec3> surface_and_cluster(int on_sphere, int in_cluster, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> gauss;
  std::uniform_real_distribution<double> u(-0.05, 0.05);
  std::vector<Vec3> points;
  for (int i = 0; i < on_sphere; ++i)
    points.push_back(normalized(Vec3{gauss(rng), gauss(rng), gauss(rng)}));
  for (int i = 0; i < in_cluster; ++i) points.push_back(Vec3{1.6 + u(rng), 1.5 + u(rng), u(rng)});
  return points;
}

// Per target leaf, how many times each source (by sorted position) is accounted for by the
// near field (U, W, X lists), the plan's direct pairs, the low-frequency M2L of the levels the
// plan leaves to it and the plan's diagonal pairs, each through the leaf's ancestors as the FMM
// applies them (M2L at an ancestor, L2L down). A correct plan counts every pair once.
void expect_every_pair_once(const Octree& tree, const WidebandPlan& plan) {
  const auto& cells = tree.cells();
  const std::size_t sources = tree.source_order().size();
  std::vector<std::vector<int>> direct_of(cells.size());
  for (const auto& [leaf, cell] : plan.direct_pairs) direct_of[std::size_t(leaf)].push_back(cell);
  std::vector<std::vector<int>> diagonal_of(cells.size());
  for (const DiagonalLevelPlan& lv : plan.levels)
    for (const M2LPair& pair : lv.pairs)
      diagonal_of[std::size_t(pair.target)].push_back(pair.source);
  std::size_t checked = 0, wrong = 0;
  for (int leaf : tree.leaves()) {
    const Cell& l = cells[std::size_t(leaf)];
    if (l.target_begin == l.target_end) continue;
    std::vector<int> difference(sources + 1, 0);
    const auto add = [&](int cell) {
      ++difference[cells[std::size_t(cell)].source_begin];
      --difference[cells[std::size_t(cell)].source_end];
    };
    tree.for_each_near_source_cell(leaf, add);
    for (int c : direct_of[std::size_t(leaf)]) add(c);
    for (int a = leaf; a >= 0; a = cells[std::size_t(a)].parent) {
      const int level = cells[std::size_t(a)].level;
      if (level >= 2 && plan.low_frequency_m2l(level))
        for (int s : tree.m2l(a)) add(s);
      for (int s : diagonal_of[std::size_t(a)]) add(s);
    }
    int count = 0;
    for (std::size_t i = 0; i < sources; ++i) {
      count += difference[i];
      ++checked;
      if (count != 1) ++wrong;
    }
  }
  EXPECT_GT(checked, 0u);
  EXPECT_EQ(wrong, 0u) << "of " << checked << " (target leaf, source) pairs";
}

TEST(WidebandPlan, WithoutLargeCellsThereIsNoDiagonalLevel) {
  const std::vector<Vec3> points = surface_and_cluster(3000, 40, 1);
  const Octree tree(points, points, OctreeOptions{.max_leaf = 8});
  const WidebandPlan plan = build_wideband_plan(tree, 8, 2.0, 1e-4);
  EXPECT_FALSE(plan.uses_diagonal_form());
  EXPECT_TRUE(plan.levels.empty());
  EXPECT_TRUE(plan.direct_pairs.empty());
  expect_every_pair_once(tree, plan);  // the checker itself on the plain FMM's lists
}

// Large cells: levels 2 .. switch_level diagonal. Every pair is counted once; the diagonal
// pairs are at least 3 widths apart with offsets in [-5, 5]; pairs were deferred to children
// and, where they met a leaf of the sparse cluster, summed directly.
TEST(WidebandPlan, EveryPairIsAccountedForOnce) {
  const std::vector<Vec3> points = surface_and_cluster(3000, 40, 2);
  const Octree tree(points, points, OctreeOptions{.max_leaf = 8});
  for (double k : {12.0, 20.0, 40.0}) {
    const int order = 8;
    const WidebandPlan plan = build_wideband_plan(tree, order, k, 1e-4);
    ASSERT_TRUE(plan.uses_diagonal_form()) << "k = " << k;
    EXPECT_TRUE(needs_high_frequency(k, tree.width(plan.switch_level), order, 1e-4));
    EXPECT_FALSE(needs_high_frequency(k, tree.width(plan.switch_level + 1), order, 1e-4));
    EXPECT_GE(k * tree.width(plan.switch_level + 1), diagonal_far_min_kw(1e-4));
    ASSERT_EQ(plan.levels.size(), std::size_t(plan.switch_level));
    std::size_t beyond_three = 0;
    for (const DiagonalLevelPlan& lv : plan.levels) {
      EXPECT_DOUBLE_EQ(lv.width, tree.width(lv.level));
      ASSERT_EQ(lv.transfer_begin.size(), lv.transfer.size() + 1);
      for (std::size_t g = 0; g < lv.transfer.size(); ++g) {
        const Vec3 t = wide_transfer_offset(lv.transfer[g]);
        EXPECT_GE(dot(t, t), 9.0);
        beyond_three += std::max({std::abs(t.x), std::abs(t.y), std::abs(t.z)}) > 3.0;
        for (std::size_t i = lv.transfer_begin[g]; i < lv.transfer_begin[g + 1]; ++i) {
          const M2LPair& pair = lv.pairs[i];
          EXPECT_EQ(pair.matrix, int(g));
          EXPECT_EQ(tree.cells()[std::size_t(pair.target)].level, lv.level);
          EXPECT_EQ(wide_transfer_index(tree.cells()[std::size_t(pair.target)].coords,
                                        tree.cells()[std::size_t(pair.source)].coords),
                    lv.transfer[g]);
        }
      }
    }
    EXPECT_GT(beyond_three, 0u) << "no pair was deferred to the children, k = " << k;
    EXPECT_GT(plan.diagonal_pair_count(), 0u);
    std::printf(
        "[ measured ] k = %g: diagonal levels 2..%d (+ conversion), %zu diagonal pairs, "
        "%zu direct pairs from deferred leaves\n",
        k, plan.switch_level, plan.diagonal_pair_count(), plan.direct_pairs.size());
    expect_every_pair_once(tree, plan);
  }
}

// Each low-frequency level's order is the smallest from the floor that the level's cells no
// longer need more of (needs_high_frequency), at most the FMM's; the levels above keep the FMM's.
TEST(WidebandPlan, LowFrequencyLevelOrdersAreTheSmallestTheCellsAllow) {
  const std::vector<Vec3> points = surface_and_cluster(4000, 0, 5);
  const Octree tree(points, points, OctreeOptions{.max_leaf = 8});
  const double k = 32.0, eps = 1e-6;
  const int order = 21, floor = 17, first = 3;
  const std::vector<int> orders = low_frequency_level_orders(tree, order, floor, k, eps, first);
  ASSERT_EQ(orders.size(), std::size_t(tree.levels()));
  int raised = 0;
  for (int level = 0; level < tree.levels(); ++level) {
    const int p = orders[std::size_t(level)];
    if (level < first) {
      EXPECT_EQ(p, order) << "level " << level;
      continue;
    }
    EXPECT_GE(p, floor);
    EXPECT_LE(p, order);
    if (p < order) EXPECT_FALSE(needs_high_frequency(k, tree.width(level), p, eps)) << level;
    if (p > floor) EXPECT_TRUE(needs_high_frequency(k, tree.width(level), p - 1, eps)) << level;
    raised += p > floor;
  }
  // The case has both: the conversion level needs more than the floor, the finer ones do not.
  EXPECT_GT(raised, 0);
  EXPECT_LT(orders.back(), order);
  EXPECT_THROW(low_frequency_level_orders(tree, 0, floor, k, eps, first), Error);
  EXPECT_THROW(low_frequency_level_orders(tree, order, 0, k, eps, first), Error);
}

TEST(WidebandPlan, BadInputIsAnError) {
  const std::vector<Vec3> points = surface_and_cluster(200, 0, 3);
  const Octree tree(points, points, OctreeOptions{.max_leaf = 8});
  EXPECT_THROW(build_wideband_plan(tree, 0, 1.0, 1e-4), Error);
  EXPECT_THROW(build_wideband_plan(tree, 8, -1.0, 1e-4), Error);
  EXPECT_THROW(build_wideband_plan(tree, 8, std::nan(""), 1e-4), Error);
  EXPECT_THROW(build_wideband_plan(tree, 8, 1.0, 0.0), Error);
  EXPECT_THROW(build_wideband_plan(tree, 8, 1.0, 1.0), Error);
}

}  // namespace
}  // namespace fmbem::fmm

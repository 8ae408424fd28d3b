#include "fmbem/fmm/m2l_plan.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <set>
#include <tuple>

#include "fmbem/core/error.hpp"
#include "fmbem/fmm/translations.hpp"
#include "m2l_test_geometry.hpp"

namespace fmbem::fmm {
namespace {

using testing::Cloud;

// Largest ||a_c - b_c|| / ||b_c - base_c|| over the cells that an M2L changes.
double max_cell_error(const std::vector<cplx>& a, const std::vector<cplx>& b,
                      const std::vector<cplx>& base, int size) {
  double worst = 0.0;
  for (std::size_t c = 0; c < a.size() / size; ++c) {
    double diff = 0.0, ref = 0.0;
    for (int i = 0; i < size; ++i) {
      diff += std::norm(a[c * size + i] - b[c * size + i]);
      ref += std::norm(b[c * size + i] - base[c * size + i]);
    }
    if (ref > 0.0) worst = std::max(worst, std::sqrt(diff / ref));
  }
  return worst;
}

// The pairs the CPU FMM applies, written from the tree's lists independently of the plan.
std::set<std::tuple<int, int>> tree_pairs(const Octree& tree, int level) {
  std::set<std::tuple<int, int>> pairs;
  const auto& cells = tree.cells();
  for (int c : tree.cells_at_level(level)) {
    if (cells[c].target_begin == cells[c].target_end) continue;
    for (int s : tree.m2l(c))
      if (cells[s].source_begin < cells[s].source_end) pairs.insert({c, s});
  }
  return pairs;
}

class M2LPlanTest : public ::testing::TestWithParam<bool> {
 protected:
  Cloud cloud() const {
    return GetParam() ? testing::two_sphere_cloud() : testing::icosphere_cloud(4);
  }
};

TEST_P(M2LPlanTest, PairsAreTheTreesM2LLists) {
  const Cloud points = cloud();
  const Octree tree = testing::make_tree(points, 32);
  const M2LPlan plan = build_m2l_plan(tree, 4, 8.0);
  ASSERT_GE(tree.levels(), 4);
  EXPECT_EQ(plan.num_cells, tree.cells().size());
  std::size_t expected_total = 0, levels_with_pairs = 0;
  for (int level = 2; level < tree.levels(); ++level) {
    const auto expected = tree_pairs(tree, level);
    expected_total += expected.size();
    levels_with_pairs += !expected.empty();
    const auto it = std::find_if(plan.levels.begin(), plan.levels.end(),
                                 [&](const M2LLevelPlan& lv) { return lv.level == level; });
    if (expected.empty()) {
      EXPECT_EQ(it, plan.levels.end());
      continue;
    }
    ASSERT_NE(it, plan.levels.end()) << "level " << level;
    const M2LLevelPlan& lv = *it;
    EXPECT_DOUBLE_EQ(lv.sigma, tree.width(level));
    std::set<std::tuple<int, int>> got;
    for (const M2LPair& pair : lv.pairs) got.insert({pair.target, pair.source});
    EXPECT_EQ(got.size(), lv.pairs.size()) << "a pair twice";
    EXPECT_EQ(got, expected) << "level " << level;
    // Groups: one per transfer vector, ascending, matching the cells' offset, targets ascending.
    ASSERT_EQ(lv.matrix_begin.size(), lv.transfer.size() + 1);
    EXPECT_EQ(lv.matrix_begin.front(), 0u);
    EXPECT_EQ(lv.matrix_begin.back(), lv.pairs.size());
    EXPECT_TRUE(std::is_sorted(lv.transfer.begin(), lv.transfer.end()));
    EXPECT_EQ(std::adjacent_find(lv.transfer.begin(), lv.transfer.end()), lv.transfer.end());
    EXPECT_LE(lv.transfer.size(), 316u);
    EXPECT_EQ(lv.matrices.size(), lv.transfer.size() * 16 * 16);
    for (std::size_t m = 0; m < lv.transfer.size(); ++m) {
      EXPECT_LT(lv.matrix_begin[m], lv.matrix_begin[m + 1]) << "an empty group";
      for (std::size_t x = lv.matrix_begin[m]; x < lv.matrix_begin[m + 1]; ++x) {
        const M2LPair& pair = lv.pairs[x];
        EXPECT_EQ(pair.matrix, int(m));
        EXPECT_EQ(Octree::transfer_index(plan.coords[pair.target], plan.coords[pair.source]),
                  lv.transfer[m]);
        if (x > lv.matrix_begin[m]) EXPECT_LT(lv.pairs[x - 1].target, pair.target);
      }
    }
  }
  EXPECT_EQ(plan.levels.size(), levels_with_pairs);
  EXPECT_EQ(plan.pair_count(), expected_total);
  EXPECT_DOUBLE_EQ(plan.flops(), 8.0 * 16 * 16 * double(expected_total));
  for (std::size_t c = 0; c < tree.cells().size(); ++c) {
    EXPECT_EQ(plan.coords[c], tree.cells()[c].coords);
    EXPECT_EQ(plan.parent[c], tree.cells()[c].parent);
  }
}

TEST_P(M2LPlanTest, MatricesAreTheTranslations) {
  const Octree tree = testing::make_tree(cloud(), 32);
  const int p = 5;
  const double k = 3.0;
  const M2LPlan plan = build_m2l_plan(tree, p, k);
  const GauntTable gaunt(p);
  for (const M2LLevelPlan& lv : plan.levels)
    for (std::size_t m : {std::size_t(0), lv.transfer.size() / 2, lv.transfer.size() - 1}) {
      const int v = lv.transfer[m];
      const Vec3 t =
          Vec3{double(v / 49 - 3), double(v / 7 % 7 - 3), double(v % 7 - 3)} * tree.width(lv.level);
      const TranslationMatrix expected = multipole_to_local(gaunt, p, k, tree.width(lv.level), t);
      // The table and the direct construction sum the same terms in the same order.
      for (int e = 0; e < p * p * p * p; ++e)
        EXPECT_EQ(lv.matrices[m * p * p * p * p + e], expected[e]) << "level " << lv.level;
    }
}

// Tolerance: the reference and the naive loop form each local coefficient from the same
// n = K p^2 products (K <= 189 pairs) in the same order, differing only in how a complex
// product is rounded (and fused multiply-adds), so they differ by at most about
// 2 n u sum|T||M| (u = 2^-53): 1.2e-13 sum|T||M| at p = 6, K = 189. Relative to ||L|| the
// sum of absolute values is of the same order for random moments (no systematic
// cancellation), and rounding errors grow like sqrt(n) u in practice: 1e-12 is a bound with
// room, and a wrong pair or matrix shows as an error of order 1.
TEST_P(M2LPlanTest, ReferenceApplyEqualsANaivePerPairLoop) {
  const Octree tree = testing::make_tree(cloud(), 24);
  const int p = 6, size = p * p;
  const M2LPlan plan = build_m2l_plan(tree, p, 8.0);
  ASSERT_GE(plan.levels.size(), 2u);
  const std::size_t count = plan.num_cells * size;
  const std::vector<cplx> multipole = testing::random_coefficients(count, 1);
  const std::vector<cplx> base = testing::random_coefficients(count, 2);
  std::vector<cplx> naive = base, reference = base;
  for (const M2LLevelPlan& lv : plan.levels)
    for (const M2LPair& pair : lv.pairs) {
      const cplx* t = lv.matrices.data() + std::size_t(pair.matrix) * size * size;
      for (int i = 0; i < size; ++i) {
        cplx sum = 0.0;
        for (int j = 0; j < size; ++j) sum += t[i * size + j] * multipole[pair.source * size + j];
        naive[pair.target * size + i] += sum;
      }
    }
  apply_m2l_reference(plan, multipole.data(), reference.data());
  const double error = max_cell_error(reference, naive, base, size);
  RecordProperty("max_relative_error", std::to_string(error));
  EXPECT_LE(error, 1e-12);
  // Cells without pairs keep their values exactly.
  std::set<int> targets;
  for (const auto& lv : plan.levels)
    for (const auto& pair : lv.pairs) targets.insert(pair.target);
  for (std::size_t c = 0; c < plan.num_cells; ++c)
    if (!targets.count(int(c)))
      for (int i = 0; i < size; ++i) ASSERT_EQ(reference[c * size + i], base[c * size + i]);
}

TEST_P(M2LPlanTest, ReferenceApplyDoesNotDependOnTheThreadCount) {
  const Octree tree = testing::make_tree(cloud(), 24);
  const int size = 16;
  const M2LPlan plan = build_m2l_plan(tree, 4, 1.0);
  const std::vector<cplx> multipole = testing::random_coefficients(plan.num_cells * size, 3);
  std::vector<cplx> one(plan.num_cells * size, 0.0), many = one;
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  apply_m2l_reference(plan, multipole.data(), one.data());
  omp_set_num_threads(std::max(3, threads));
  apply_m2l_reference(plan, multipole.data(), many.data());
  omp_set_num_threads(threads);
  EXPECT_EQ(one, many);
}

INSTANTIATE_TEST_SUITE_P(Trees, M2LPlanTest, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "TwoSpheres" : "Icosphere"; });

TEST(M2LPlan, TheAdaptiveTreeHasEmptyAndMissingCells) {
  // What the two-sphere cloud is for: leaves on many levels, cells with sources only and with
  // targets only, so that blocking schemes meet partial clusters and chunks.
  const Octree tree = testing::make_tree(testing::two_sphere_cloud(), 32);
  const auto& cells = tree.cells();
  std::set<int> leaf_levels;
  int sources_only = 0, targets_only = 0, partial_parents = 0;
  for (const Cell& c : cells) {
    if (c.is_leaf()) leaf_levels.insert(c.level);
    sources_only += c.source_begin < c.source_end && c.target_begin == c.target_end;
    targets_only += c.target_begin < c.target_end && c.source_begin == c.source_end;
    partial_parents += !c.is_leaf() && c.num_children < 8;
  }
  EXPECT_GE(tree.levels(), 9);
  EXPECT_GE(leaf_levels.size(), 5u);
  EXPECT_GT(sources_only, 0);
  EXPECT_GT(targets_only, 0);
  EXPECT_GT(partial_parents, 0);
}

// The GPU path's plan: the same pairs, no host matrices, and the reference refuses it.
TEST_P(M2LPlanTest, WithoutHostMatricesThePairsAreTheSame) {
  const Octree tree = testing::make_tree(cloud(), 32);
  const M2LPlan with = build_m2l_plan(tree, 4, 8.0), without = build_m2l_plan(tree, 4, 8.0, false);
  ASSERT_EQ(without.levels.size(), with.levels.size());
  ASSERT_FALSE(with.levels.empty());
  for (std::size_t l = 0; l < with.levels.size(); ++l) {
    EXPECT_EQ(without.levels[l].level, with.levels[l].level);
    EXPECT_EQ(without.levels[l].sigma, with.levels[l].sigma);
    EXPECT_EQ(without.levels[l].transfer, with.levels[l].transfer);
    EXPECT_EQ(without.levels[l].pairs, with.levels[l].pairs);
    EXPECT_EQ(without.levels[l].matrix_begin, with.levels[l].matrix_begin);
    EXPECT_TRUE(without.levels[l].matrices.empty());
  }
  std::vector<cplx> m(without.num_cells * 16, 1.0), l(without.num_cells * 16, 2.0);
  EXPECT_THROW(apply_m2l_reference(without, m.data(), l.data()), Error);
}

// The host M2L by rotation (the default from rotation_m2l_min_order) against the dense matrices
// on the same plan: the same pairs, and each local the same sum of pair translations. Each
// translation agrees to 10 p^2 eps of the largest terms (RotationTranslations.EqualDenseMatrices'
// bound); a local sums at most 189 pairs of random coefficients, which adds sqrt(189) ~ 14 to
// the relative rounding: 10 p^2 eps * 14 is 4.4e-12 at p = 12, 7.9e-12 at p = 16.
TEST_P(M2LPlanTest, RotationsEqualTheDenseMatrices) {
  const Octree tree = testing::make_tree(cloud(), 32);
  for (int p : {12, 16}) {
    const M2LPlan dense = build_m2l_plan(tree, p, 8.0, true, 2, max_degree + 1);
    const M2LPlan rotated = build_m2l_plan(tree, p, 8.0, true, 2, 1);
    ASSERT_EQ(rotated.levels.size(), dense.levels.size());
    for (std::size_t l = 0; l < dense.levels.size(); ++l) {
      EXPECT_EQ(rotated.levels[l].pairs, dense.levels[l].pairs);
      EXPECT_TRUE(rotated.levels[l].matrices.empty());
      ASSERT_NE(rotated.levels[l].rotations, nullptr);
      EXPECT_EQ(dense.levels[l].rotations, nullptr);
    }
    const std::size_t size = std::size_t(p) * p;
    std::vector<cplx> m(dense.num_cells * size);
    std::mt19937 rng(5);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (cplx& x : m) x = cplx(u(rng), u(rng));
    std::vector<cplx> l_dense(m.size(), 0.0), l_rotated(m.size(), 0.0);
    apply_m2l_reference(dense, m.data(), l_dense.data());
    apply_m2l_reference(rotated, m.data(), l_rotated.data());
    double num = 0.0, den = 0.0;
    for (std::size_t i = 0; i < m.size(); ++i) {
      num += std::norm(l_rotated[i] - l_dense[i]);
      den += std::norm(l_dense[i]);
    }
    EXPECT_LT(std::sqrt(num / den), 10.0 * p * p * 2.2e-16 * 14.0) << "p " << p;
  }
}

TEST(M2LPlan, RejectsBadInput) {
  const Octree tree = testing::make_tree(testing::icosphere_cloud(2), 16);
  EXPECT_THROW(build_m2l_plan(tree, 0, 1.0), Error);
  EXPECT_THROW(build_m2l_plan(tree, max_degree + 1, 1.0), Error);
  EXPECT_THROW(build_m2l_plan(tree, 4, -1.0), Error);
  EXPECT_THROW(build_m2l_plan(tree, 4, std::nan("")), Error);
}

TEST(M2LPlan, AShallowTreeHasNoLevels) {
  const Octree tree = testing::make_tree(testing::icosphere_cloud(1), 1000);
  const M2LPlan plan = build_m2l_plan(tree, 4, 1.0);
  EXPECT_TRUE(plan.levels.empty());
  EXPECT_EQ(plan.pair_count(), 0u);
  std::vector<cplx> m(plan.num_cells * 16, 1.0), l(plan.num_cells * 16, 2.0);
  apply_m2l_reference(plan, m.data(), l.data());
  for (const cplx& x : l) EXPECT_EQ(x, cplx(2.0));
}

}  // namespace
}  // namespace fmbem::fmm

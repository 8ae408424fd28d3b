#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <random>

#include "bem_test_support.hpp"
#include "fmbem/bem/fmm_layer_potentials.hpp"
#include "fmbem/mesh/mesh.hpp"

namespace fmbem {
namespace {

using test::random_density;

// Rows split as MPI ranks own them (PETSc's contiguous blocks): each block builds its own FMM
// from all collocation points as splitting points, so every block has the tree of the whole
// and sums, for each of its rows, the same terms in the same order as one block does (same
// multipoles from all sources, same M2L pairs and matrices, taken in the same transfer-vector
// order, same near ranges). The potentials are therefore equal bit for bit, not just to
// rounding, and the near-field point pairs of the blocks add up to those of one block. Before
// the splitting points, each block split cells on its own rows only: a leaf took in up to P
// times as many sources and the summed near pairs grew with P.
TEST(FmmRowBlocks, BlocksShareTheTreeAndGiveTheOneBlockPotentials) {
  const Mesh mesh = Mesh::from_surface(make_icosphere(4, 1.0), "icosphere");
  const Discretization disc(mesh, 3);
  const std::size_t n = disc.size();
  const NearFieldOptions near;
  const double k = 8.0;
  const fmm::FmmOptions options{.order = 6, .max_leaf = 40};
  const auto double_density = random_density(n, 1), single_density = random_density(n, 2);

  const FmmLayerPotentials one_block(disc, k, RowRange{0, n}, near, options);
  std::vector<cplx> expected(n);
  one_block.apply(double_density, single_density, expected);
  const fmm::FmmStatistics& whole = one_block.fmm().statistics();
  ASSERT_GE(whole.levels, 4);

  for (std::size_t blocks : {2, 3, 4}) {
    std::size_t near_pairs = 0;
    for (std::size_t block = 0; block < blocks; ++block) {
      const RowRange rows{n * block / blocks, n * (block + 1) / blocks};
      const FmmLayerPotentials part(disc, k, rows, near, options);
      const fmm::FmmStatistics& stats = part.fmm().statistics();
      EXPECT_EQ(stats.levels, whole.levels);
      EXPECT_EQ(stats.leaves, whole.leaves);
      EXPECT_LT(stats.target_leaves, whole.target_leaves);
      EXPECT_LE(stats.max_leaf_targets, std::size_t(options.max_leaf));
      near_pairs += stats.near_pairs;
      std::vector<cplx> y(rows.size());
      part.apply(double_density, single_density, y);
      for (std::size_t i = 0; i < rows.size(); ++i)
        ASSERT_EQ(y[i], expected[rows.begin + i])
            << "row " << rows.begin + i << ", " << blocks << " blocks";
    }
    EXPECT_EQ(near_pairs, whole.near_pairs) << blocks << " blocks";
  }
}

// The upward pass split among the blocks (share_upward_pass): each block forms the moments of
// its share of the leaves, M2M translates them (linear), and the sum over the blocks replaces
// what MPI_Allreduce does in bem_solve. Here the sum is taken in two passes: the first records
// each block's partial multipoles, the second hands every block their sum. The potentials
// then equal the one-block ones up to the reordered additions in the moments: relative
// rounding of a few units of 1e-16 times the moments' condition (the far field is a small
// part of each row), so 1e-13 of the largest row bounds it with room.
TEST(FmmRowBlocks, ASharedUpwardPassGivesTheOneBlockPotentials) {
  const Mesh mesh = Mesh::from_surface(make_icosphere(4, 1.0), "icosphere");
  const Discretization disc(mesh, 3);
  const std::size_t n = disc.size();
  const double k = 8.0;
  const fmm::FmmOptions options{.order = 6, .max_leaf = 40};
  const auto double_density = random_density(n, 3), single_density = random_density(n, 4);
  const FmmLayerPotentials one_block(disc, k, RowRange{0, n}, NearFieldOptions{}, options);
  std::vector<cplx> expected(n);
  one_block.apply(double_density, single_density, expected);
  double largest = 0;
  for (const cplx& v : expected) largest = std::max(largest, std::abs(v));

  for (int blocks : {2, 3, 4}) {
    std::vector<std::unique_ptr<FmmLayerPotentials>> parts;
    std::vector<RowRange> rows;
    for (int b = 0; b < blocks; ++b) {
      rows.push_back({n * b / blocks, n * (b + 1) / blocks});
      parts.push_back(
          std::make_unique<FmmLayerPotentials>(disc, k, rows.back(), NearFieldOptions{}, options));
    }
    std::vector<std::vector<cplx>> partial(blocks);
    for (int b = 0; b < blocks; ++b) {
      parts[b]->share_upward_pass(
          b, blocks, [&partial, b](std::span<cplx> m) { partial[b].assign(m.begin(), m.end()); });
      std::vector<cplx> y(rows[b].size());
      parts[b]->apply(double_density, single_density, y);
    }
    std::size_t nonzero_blocks = 0;
    for (const auto& m : partial)
      nonzero_blocks += std::any_of(m.begin(), m.end(), [](const cplx& c) { return c != 0.0; });
    EXPECT_EQ(nonzero_blocks, std::size_t(blocks)) << "every block forms some moments";
    for (int b = 0; b < blocks; ++b) {
      parts[b]->share_upward_pass(b, blocks, [&partial](std::span<cplx> m) {
        for (std::size_t i = 0; i < m.size(); ++i) {
          m[i] = 0;
          for (const auto& block : partial) m[i] += block[i];
        }
      });
      std::vector<cplx> y(rows[b].size());
      parts[b]->apply(double_density, single_density, y);
      for (std::size_t i = 0; i < y.size(); ++i)
        ASSERT_LT(std::abs(y[i] - expected[rows[b].begin + i]), 1e-13 * largest)
            << "row " << rows[b].begin + i << ", " << blocks << " blocks";
    }
  }
}

}  // namespace
}  // namespace fmbem

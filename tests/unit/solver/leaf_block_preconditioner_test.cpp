// The leaf-block preconditioner: its groups of rows, the blocks' inverses against a direct dense
// solve in long double, the identity it must give on a block-diagonal near-field matrix, and the
// GPU's application against the CPU's.
#include "fmbem/solver/leaf_block_preconditioner.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <set>
#include <vector>

#include "../fmm/gpu_test_skip.hpp"
#include "fmbem/bem/direct_layer_potentials.hpp"
#include "fmbem/core/error.hpp"
#include "fmbem/fmm/gpu_m2l.hpp"  // gpu_available (SKIP_WITHOUT_GPU)
#include "fmbem/solver/gpu_block_inverse.hpp"

namespace fmbem {
namespace {

constexpr double unit_roundoff = std::numeric_limits<double>::epsilon() / 2;
using Device = LeafBlockPreconditioner::Device;
using lcplx = std::complex<long double>;

std::vector<cplx> random_vector(std::size_t n, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<cplx> v(n);
  for (auto& x : v) x = {u(rng), u(rng)};
  return v;
}

double relative_difference(const std::vector<cplx>& a, const std::vector<cplx>& b) {
  double num = 0.0, den = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    num += std::norm(a[i] - b[i]);
    den += std::norm(b[i]);
  }
  return std::sqrt(num / den);
}

// The inverse of a column-major n x n matrix by Gauss-Jordan elimination with partial pivoting in
// long double (64-bit mantissa: 2^11 times finer than double), the reference for the blocks.
std::vector<lcplx> reference_inverse(const cplx* a, std::size_t n) {
  std::vector<lcplx> m(n * n), inv(n * n, 0.0L);
  for (std::size_t i = 0; i < n * n; ++i) m[i] = lcplx(a[i].real(), a[i].imag());
  for (std::size_t i = 0; i < n; ++i) inv[i + i * n] = 1.0L;
  for (std::size_t col = 0; col < n; ++col) {
    std::size_t pivot = col;
    for (std::size_t r = col + 1; r < n; ++r)
      if (std::abs(m[r + col * n]) > std::abs(m[pivot + col * n])) pivot = r;
    for (std::size_t c = 0; c < n; ++c) {
      std::swap(m[col + c * n], m[pivot + c * n]);
      std::swap(inv[col + c * n], inv[pivot + c * n]);
    }
    const lcplx scale = 1.0L / m[col + col * n];
    for (std::size_t c = 0; c < n; ++c) {
      m[col + c * n] *= scale;
      inv[col + c * n] *= scale;
    }
    for (std::size_t r = 0; r < n; ++r) {
      if (r == col) continue;
      const lcplx f = m[r + col * n];
      for (std::size_t c = 0; c < n; ++c) {
        m[r + c * n] -= f * m[col + c * n];
        inv[r + c * n] -= f * inv[col + c * n];
      }
    }
  }
  return inv;
}

// The 1-norm condition number of a block, with the reference inverse.
double condition_number(const cplx* a, std::size_t n) {
  const std::vector<lcplx> inv = reference_inverse(a, n);
  double norm_a = 0.0, norm_inv = 0.0;
  for (std::size_t c = 0; c < n; ++c) {
    double sa = 0.0, si = 0.0;
    for (std::size_t r = 0; r < n; ++r) {
      sa += std::abs(a[r + c * n]);
      si += double(std::abs(inv[r + c * n]));
    }
    norm_a = std::max(norm_a, sa);
    norm_inv = std::max(norm_inv, si);
  }
  return norm_a * norm_inv;
}

// What the preconditioner must give, from the reference inverses: for each block, its inverse
// times x gathered on its rows, written to the rows it owns; x elsewhere.
std::vector<cplx> reference_apply(const RowBlocks& blocks, const std::vector<cplx>& dense,
                                  RowRange rows, const std::vector<cplx>& x) {
  std::vector<cplx> y = x;
  std::size_t offset = 0;
  for (std::size_t b = 0; b < blocks.count(); ++b) {
    const std::size_t n = blocks.size(b);
    const std::vector<lcplx> inv = reference_inverse(dense.data() + offset, n);
    const std::int32_t* members = blocks.rows.data() + blocks.offsets[b];
    for (std::size_t i = 0; i < blocks.owned[b]; ++i) {
      lcplx sum = 0.0L;
      for (std::size_t j = 0; j < n; ++j) {
        const cplx xj = x[std::size_t(members[j]) - rows.begin];
        sum += inv[i + j * n] * lcplx(xj.real(), xj.imag());
      }
      y[std::size_t(members[i]) - rows.begin] = cplx(double(sum.real()), double(sum.imag()));
    }
    offset += n * n;
  }
  return y;
}

// Blocks of the given sizes over a shuffled range of rows, each overlapping the next block's
// first `overlap` rows; dense entries random with a dominant diagonal (condition numbers of a
// few), so that the tolerances below are tight.
struct RandomBlocks {
  RowBlocks blocks;
  std::vector<cplx> dense;
  RowRange rows;
  double max_condition = 0.0;
};

RandomBlocks random_blocks(const std::vector<std::size_t>& sizes, std::size_t overlap,
                           std::size_t unowned, std::mt19937_64& rng) {
  RandomBlocks out;
  std::size_t total = unowned;
  for (const std::size_t n : sizes) total += n;
  out.rows = {1000, 1000 + total};
  std::vector<std::int32_t> order(total);
  for (std::size_t i = 0; i < total; ++i) order[i] = std::int32_t(out.rows.begin + i);
  std::shuffle(order.begin(), order.end(), rng);
  std::size_t at = 0;
  std::vector<std::vector<std::int32_t>> owned_rows;
  for (const std::size_t n : sizes) {
    owned_rows.emplace_back(order.begin() + std::ptrdiff_t(at),
                            order.begin() + std::ptrdiff_t(at + n));
    at += n;
  }
  for (std::size_t b = 0; b < sizes.size(); ++b) {
    std::vector<std::int32_t> members = owned_rows[b];
    if (b + 1 < sizes.size())
      for (std::size_t i = 0; i < std::min(overlap, sizes[b + 1]); ++i)
        members.push_back(owned_rows[b + 1][i]);
    out.blocks.rows.insert(out.blocks.rows.end(), members.begin(), members.end());
    out.blocks.offsets.push_back(out.blocks.rows.size());
    out.blocks.owned.push_back(sizes[b]);
    const std::size_t n = members.size();
    std::vector<cplx> block = random_vector(n * n, rng);
    for (std::size_t i = 0; i < n; ++i) block[i + i * n] += cplx(double(n), 0.5 * double(n));
    out.max_condition = std::max(out.max_condition, condition_number(block.data(), n));
    out.dense.insert(out.dense.end(), block.begin(), block.end());
  }
  return out;
}

TEST(CompactRowBlocks, EveryRowOnceAndNoBlockAboveTheCap) {
  const Mesh mesh = Mesh::from_surface(make_icosphere(3, 1.0), "icosphere");
  const RowRange rows{100, 1000};  // a rank's share
  for (const int cap : {1, 5, 37, 64, 2000}) {
    const RowBlocks blocks = compact_row_blocks(mesh.centroids(), rows, cap);
    ASSERT_EQ(blocks.owned.size(), blocks.count());
    std::vector<int> seen(rows.size(), 0);
    for (std::size_t b = 0; b < blocks.count(); ++b) {
      EXPECT_GE(blocks.size(b), 1u);
      EXPECT_LE(blocks.size(b), std::size_t(cap));
      EXPECT_EQ(blocks.owned[b], blocks.size(b));  // no overlap yet
    }
    for (const std::int32_t row : blocks.rows) {
      ASSERT_GE(std::size_t(row), rows.begin);
      ASSERT_LT(std::size_t(row), rows.end);
      seen[std::size_t(row) - rows.begin]++;
    }
    EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](int s) { return s == 1; })) << cap;
    if (cap == 1) EXPECT_EQ(blocks.count(), rows.size());
    if (cap >= int(rows.size())) EXPECT_EQ(blocks.count(), 1u);  // the root is the only leaf
  }
  EXPECT_EQ(compact_row_blocks(mesh.centroids(), RowRange{5, 5}, 8).count(), 0u);
  EXPECT_THROW(compact_row_blocks(mesh.centroids(), rows, 0), Error);
}

// Groups of at most B nearby elements: on the unit sphere's icosphere:3 (1,280 elements of about
// 4 pi / 1280 each) a block of B elements is a patch of area B * 4 pi / 1280; consecutive octree
// leaves stay close, so the mean distance of a block's centroids from their mean is of the order
// of that patch's radius, far below the 1.0 of random groups on the unit sphere.
TEST(CompactRowBlocks, BlocksArePatches) {
  const Mesh mesh = Mesh::from_surface(make_icosphere(3, 1.0), "icosphere");
  const int cap = 32;
  const RowBlocks blocks = compact_row_blocks(mesh.centroids(), RowRange{0, mesh.size()}, cap);
  const double patch_radius = std::sqrt(cap * 4 * M_PI / double(mesh.size()) / M_PI);
  double spread = 0.0;
  for (std::size_t b = 0; b < blocks.count(); ++b) {
    Vec3 mean{};
    for (std::size_t at = blocks.offsets[b]; at < blocks.offsets[b + 1]; ++at)
      mean = mean + mesh.centroids()[std::size_t(blocks.rows[at])];
    mean = mean * (1.0 / double(blocks.size(b)));
    double mine = 0.0;
    for (std::size_t at = blocks.offsets[b]; at < blocks.offsets[b + 1]; ++at)
      mine += norm(mesh.centroids()[std::size_t(blocks.rows[at])] - mean);
    spread += mine / double(blocks.size(b));
  }
  spread /= double(blocks.count());
  EXPECT_LT(spread, 1.5 * patch_radius) << "patch radius " << patch_radius;
}

TEST(OverlappingBlocks, OneRingAddsTheRowsNeighboursInRange) {
  // Rows 10..19 of a 30-column pattern: row r's columns are r - 2 .. r + 2 (clipped).
  const RowRange rows{10, 20};
  std::vector<std::int64_t> row_start{0};
  std::vector<std::int32_t> columns;
  for (std::size_t i = rows.begin; i < rows.end; ++i) {
    for (int j = int(i) - 2; j <= int(i) + 2; ++j) columns.push_back(j);
    row_start.push_back(std::int64_t(columns.size()));
  }
  RowBlocks blocks;
  blocks.rows = {12, 13, 18, 19};
  blocks.offsets = {0, 2, 4};
  blocks.owned = {2, 2};
  const RowBlocks none = overlapping_blocks(blocks, row_start, columns, rows, 0);
  EXPECT_EQ(none.rows, blocks.rows);
  const RowBlocks one = overlapping_blocks(blocks, row_start, columns, rows, 1);
  EXPECT_EQ(one.owned, blocks.owned);
  ASSERT_EQ(one.count(), 2u);
  // Block 0 owns 12, 13 and takes 10, 11, 14, 15; block 1 owns 18, 19 and takes 16, 17 (20 and
  // 21 are another rank's).
  const std::set<std::int32_t> first(one.rows.begin(), one.rows.begin() + 6);
  EXPECT_EQ(one.size(0), 6u);
  EXPECT_EQ(first, (std::set<std::int32_t>{10, 11, 12, 13, 14, 15}));
  EXPECT_EQ(std::vector<std::int32_t>(one.rows.begin(), one.rows.begin() + 2),
            (std::vector<std::int32_t>{12, 13}));  // owned rows first
  EXPECT_EQ(one.size(1), 4u);
  const RowBlocks two = overlapping_blocks(blocks, row_start, columns, rows, 2);
  EXPECT_EQ(two.size(0), 8u);  // 10 .. 17
  EXPECT_EQ(two.size(1), 6u);  // 14 .. 19
}

// On an icosphere every vertex has 6 triangles (the 12 of the icosahedron 5): the elements
// sharing a vertex with a triangle are 3 x 6 minus the triangle counted three times and its three
// edge neighbours counted twice, 13 (12 at an icosahedron vertex); the relation is symmetric.
TEST(VertexNeighbours, TwelveOrThirteenOnAnIcosphere) {
  const Mesh mesh = Mesh::from_surface(make_icosphere(2, 1.0), "icosphere");
  const RowRange all{0, mesh.size()};
  const Neighbours n = vertex_neighbours(mesh, all);
  ASSERT_EQ(n.row_start.size(), mesh.size() + 1);
  std::set<std::pair<std::int32_t, std::int32_t>> pairs;
  std::size_t twelve = 0;
  for (std::size_t i = 0; i < mesh.size(); ++i) {
    const auto first = n.columns.begin() + n.row_start[i],
               last = n.columns.begin() + n.row_start[i + 1];
    const std::size_t count = std::size_t(last - first);
    EXPECT_TRUE(count == 12 || count == 13) << i << ": " << count;
    twelve += count == 12;
    EXPECT_TRUE(std::is_sorted(first, last));
    EXPECT_TRUE(std::binary_search(first, last, std::int32_t(i)));
    for (auto at = first; at != last; ++at) pairs.insert({std::int32_t(i), *at});
  }
  EXPECT_EQ(twelve, 12u * 5);  // five triangles at each of the 12 valence-5 vertices
  for (const auto& [i, j] : pairs) EXPECT_TRUE(pairs.count({j, i})) << i << ", " << j;
  // A rank's rows: the same rows as the whole mesh's, columns anywhere.
  const Neighbours part = vertex_neighbours(mesh, RowRange{100, 200});
  for (std::size_t r = 0; r < 100; ++r)
    EXPECT_TRUE(std::equal(
        part.columns.begin() + part.row_start[r], part.columns.begin() + part.row_start[r + 1],
        n.columns.begin() + n.row_start[100 + r], n.columns.begin() + n.row_start[101 + r]));
}

// LU with partial pivoting then the explicit inverse, applied to x: each owned entry is row i of
// (A^-1 + E) x with |E| bounded by c n u |A^-1| |L| |U| |A^-1|-type terms (Higham, Accuracy and
// Stability, ch. 14), which for these diagonally dominant blocks (growth factor ~1) gives a
// relative error of at most about n u kappa_1(A) per block; tolerance 8 n u kappa with n the
// largest block and kappa the largest condition number, measured by the reference.
TEST(LeafBlockPreconditioner, InvertsEveryBlockAsADirectSolveDoes) {
  std::mt19937_64 rng(11);
  for (const std::size_t overlap : {std::size_t(0), std::size_t(5)}) {
    RandomBlocks r = random_blocks({1, 7, 40, 64, 3}, overlap, 9, rng);
    const std::size_t largest = r.blocks.largest();
    const double tolerance = 8 * double(largest) * unit_roundoff * r.max_condition;
    ASSERT_LT(tolerance, 1e-12);
    const std::vector<cplx> x = random_vector(r.rows.size(), rng);
    const std::vector<cplx> expected = reference_apply(r.blocks, r.dense, r.rows, x);
    const LeafBlockPreconditioner pc(r.blocks, r.dense, r.rows, Device::cpu);
    std::vector<cplx> y(x.size());
    pc.apply(x, y);
    EXPECT_LT(relative_difference(y, expected), tolerance) << "overlap " << overlap;
    // Rows no block owns come back unchanged.
    std::vector<int> owner(r.rows.size(), 0);
    for (std::size_t b = 0; b < r.blocks.count(); ++b)
      for (std::size_t i = 0; i < r.blocks.owned[b]; ++i)
        owner[std::size_t(r.blocks.rows[r.blocks.offsets[b] + i]) - r.rows.begin] = 1;
    for (std::size_t i = 0; i < x.size(); ++i)
      if (!owner[i]) EXPECT_EQ(y[i], x[i]);
  }
}

TEST(LeafBlockPreconditioner, RefusesBadBlocks) {
  std::mt19937_64 rng(3);
  RandomBlocks r = random_blocks({4, 4}, 0, 0, rng);
  // A singular block: its second column zero.
  std::vector<cplx> singular = r.dense;
  for (std::size_t i = 0; i < 4; ++i) singular[16 + i + 4] = 0.0;
  EXPECT_THROW(LeafBlockPreconditioner(r.blocks, singular, r.rows, Device::cpu), Error);
  // A row outside the range, a row owned twice, entries of the wrong count.
  RowBlocks outside = r.blocks;
  outside.rows[0] = std::int32_t(r.rows.end);
  EXPECT_THROW(LeafBlockPreconditioner(outside, r.dense, r.rows, Device::cpu), Error);
  RowBlocks twice = r.blocks;
  twice.rows[4] = twice.rows[0];
  EXPECT_THROW(LeafBlockPreconditioner(twice, r.dense, r.rows, Device::cpu), Error);
  std::vector<cplx> short_dense(r.dense.begin(), r.dense.end() - 1);
  EXPECT_THROW(LeafBlockPreconditioner(r.blocks, short_dense, r.rows, Device::cpu), Error);
}

// On a near-field matrix that is block diagonal for the blocks (the close pairs within a block
// kept, the others dropped: A_near's block-diagonal part, which is what dense_blocks takes with
// near entries), the preconditioner is its exact inverse: apply(A_near x) = x to within the
// blocks' 8 n u kappa (as above, kappa of the real blocks, measured).
TEST(LeafBlockPreconditioner, GivesXBackOnABlockDiagonalNearMatrix) {
  const Mesh mesh = Mesh::from_surface(make_icosphere(2, 1.0), "icosphere");
  const Discretization disc(mesh, 3);
  const RowRange rows{30, 290};  // a rank's rows
  for (const cplx coupling : {cplx(0.0), cplx(0.0, 0.5)}) {
    const DirectLayerPotentials layers(disc, 3.0, rows, NearFieldOptions{}, coupling);
    const OperatorCoefficients c{0.5, -1.0, coupling};
    const RowBlocks blocks = compact_row_blocks(mesh.centroids(), rows, 24);
    const std::vector<cplx> dense = dense_blocks(layers, c, blocks, BlockEntries::near);
    std::vector<std::int64_t> block_of(rows.size());
    for (std::size_t b = 0; b < blocks.count(); ++b)
      for (std::size_t at = blocks.offsets[b]; at < blocks.offsets[b + 1]; ++at)
        block_of[std::size_t(blocks.rows[at]) - rows.begin] = std::int64_t(b);
    double condition = 0.0;
    std::size_t offset = 0;
    for (std::size_t b = 0; b < blocks.count(); ++b) {
      condition = std::max(condition, condition_number(dense.data() + offset, blocks.size(b)));
      offset += blocks.size(b) * blocks.size(b);
    }
    const double tolerance = 8 * double(blocks.largest()) * unit_roundoff * condition;
    ASSERT_LT(tolerance, 1e-11);
    // y = A_near x over the close pairs within a block, from the correction's CSR pattern.
    std::mt19937_64 rng(5);
    const std::vector<cplx> x = random_vector(rows.size(), rng);
    const std::vector<cplx> near = layers.near_block(c);
    const auto row_start = layers.near_field().row_start();
    const auto columns = layers.near_field().columns();
    std::vector<cplx> y(rows.size(), 0.0);
    for (std::size_t r = 0; r < rows.size(); ++r)
      for (std::int64_t at = row_start[r]; at < row_start[r + 1]; ++at) {
        const std::size_t j = std::size_t(columns[std::size_t(at)]);
        if (j >= rows.begin && j < rows.end && block_of[j - rows.begin] == block_of[r])
          y[r] += near[std::size_t(at)] * x[j - rows.begin];
      }
    const LeafBlockPreconditioner pc(blocks, dense, rows, Device::cpu);
    std::vector<cplx> back(rows.size());
    pc.apply(y, back);
    EXPECT_LT(relative_difference(back, x), tolerance) << "coupling " << coupling;
  }
}

// With full entries a block is the operator's own restriction to its rows: the close pairs'
// accurate entries and the regular rule's for the rest, the identity on the diagonal.
TEST(DenseBlocks, FullEntriesAreTheOperatorsRestriction) {
  const Mesh mesh = Mesh::from_surface(make_icosphere(2, 1.0), "icosphere");
  const Discretization disc(mesh, 3);
  const RowRange rows{0, mesh.size()};
  const DirectLayerPotentials layers(disc, 2.0, rows, NearFieldOptions{});
  const OperatorCoefficients c{0.5, -1.0, 0.0};
  const RowBlocks blocks = compact_row_blocks(mesh.centroids(), rows, 16);
  const std::vector<cplx> near = dense_blocks(layers, c, blocks, BlockEntries::near);
  const std::vector<cplx> full = dense_blocks(layers, c, blocks, BlockEntries::full);
  const std::vector<cplx> close = layers.near_block(c);
  const auto row_start = layers.near_field().row_start();
  const auto columns = layers.near_field().columns();
  std::size_t offset = 0;
  for (std::size_t b = 0; b < blocks.count(); ++b) {
    const std::size_t n = blocks.size(b);
    const std::int32_t* members = blocks.rows.data() + blocks.offsets[b];
    for (std::size_t col = 0; col < n; ++col)
      for (std::size_t row = 0; row < n; ++row) {
        const std::size_t i = std::size_t(members[row]), j = std::size_t(members[col]);
        const auto first = columns.begin() + row_start[i],
                   last = columns.begin() + row_start[i + 1];
        const auto found = std::lower_bound(first, last, std::int32_t(j));
        const bool is_close = found != last && *found == std::int32_t(j);
        const cplx expected_near = is_close ? close[std::size_t(found - columns.begin())] : 0.0;
        const cplx expected_full = is_close ? expected_near : layers.regular_entry(c, i, j);
        EXPECT_EQ(near[offset + row + col * n], expected_near);
        EXPECT_EQ(full[offset + row + col * n], expected_full);
      }
    offset += n * n;
  }
}

// Where no GPU can be used the blocks asked for on it are one error that says why.
TEST(LeafBlockPreconditioner, AMissingGpuIsOneClearError) {
  std::string why;
  if (fmm::gpu_available(&why)) GTEST_SKIP() << "a GPU is present";
  std::mt19937_64 rng(23);
  const RandomBlocks r = random_blocks({3, 5}, 0, 0, rng);
  try {
    const LeafBlockPreconditioner gpu(r.blocks, r.dense, r.rows, Device::gpu);
    FAIL() << "blocks on a GPU that is not there";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "the leaf-block preconditioner on the GPU: " + why);
  }
}

// The GPU's inverses (cuBLAS's batched LU and inverse, blocks padded with the identity) and its
// application against the CPU's (LAPACK): each within 8 n u kappa of the exact result (above),
// so within twice that of each other; asserted below 1e-12. Block counts above one cuBLAS batch
// (32,768) check the batching.
TEST(GpuBlockInverse, AppliesAsTheCpuDoes) {
  SKIP_WITHOUT_GPU();
  std::mt19937_64 rng(17);
  for (const std::size_t overlap : {std::size_t(0), std::size_t(6)}) {
    RandomBlocks r = random_blocks({1, 7, 40, 64, 3, 33}, overlap, 5, rng);
    const double tolerance = 16 * double(r.blocks.largest()) * unit_roundoff * r.max_condition;
    ASSERT_LT(tolerance, 1e-12);
    const std::vector<cplx> x = random_vector(r.rows.size(), rng);
    const LeafBlockPreconditioner cpu(r.blocks, r.dense, r.rows, Device::cpu);
    const LeafBlockPreconditioner gpu(r.blocks, r.dense, r.rows, Device::gpu);
    std::vector<cplx> y_cpu(x.size()), y_gpu(x.size());
    cpu.apply(x, y_cpu);
    gpu.apply(x, y_gpu);
    EXPECT_LT(relative_difference(y_gpu, y_cpu), tolerance) << "overlap " << overlap;
    EXPECT_GT(gpu.device_bytes(), 0u);
  }
  std::vector<std::size_t> many(40000, 2);
  RandomBlocks r = random_blocks(many, 1, 0, rng);
  const double tolerance = 16 * 3 * unit_roundoff * r.max_condition;
  const std::vector<cplx> x = random_vector(r.rows.size(), rng);
  const LeafBlockPreconditioner cpu(r.blocks, r.dense, r.rows, Device::cpu);
  const LeafBlockPreconditioner gpu(r.blocks, r.dense, r.rows, Device::gpu);
  std::vector<cplx> y_cpu(x.size()), y_gpu(x.size());
  cpu.apply(x, y_cpu);
  gpu.apply(x, y_gpu);
  EXPECT_LT(relative_difference(y_gpu, y_cpu), tolerance);
  // A singular block is refused on the GPU too.
  RandomBlocks s = random_blocks({4, 4}, 0, 0, rng);
  for (std::size_t i = 0; i < 4; ++i) s.dense[16 + i + 4] = 0.0;
  EXPECT_THROW(LeafBlockPreconditioner(s.blocks, s.dense, s.rows, Device::gpu), Error);
}

}  // namespace
}  // namespace fmbem

namespace fmbem {
namespace {

// The leaf-block PC formed and inverted on the GPU from the GPU's near field against the CPU's
// (near block and dense blocks on the host, LAPACK). The blocks differ by the near block's
// GPU - CPU difference, within 2e-11 of each row's scale (gpu_near_block_test.cpp), so
// ||dA||_1 / ||A||_1 <= n 2e-11 per block, and the preconditioned result moves by at most
// kappa times that, plus both inversions' rounding (16 n u kappa, as above). Against the GPU
// inverse of the same blocks downloaded (dense_blocks on the GPU's near block) only the
// forming differs: the same entries, so the inversions' rounding alone.
TEST(LeafBlockPreconditioner, FromTheGpuAppliesAsTheCpuDoes) {
  SKIP_WITHOUT_GPU();
  const Mesh mesh = Mesh::from_surface(make_icosphere(3, 1.0), "icosphere");
  const RowRange rows{100, 1200};
  for (const bool quadratic : {false, true})
    for (const double k : {0.5, 8.0}) {
      const Discretization disc(mesh, quadratic ? 6 : 3);
      const DensityModel model = quadratic ? DensityModel::quadratic : DensityModel::constant;
      const cplx coupling(0.0, 1.0 / k);
      NearFieldOptions options;
      const DirectLayerPotentials cpu_layers(disc, k, rows, options, coupling, model);
      options.gpu = true;
      const DirectLayerPotentials gpu_layers(disc, k, rows, options, coupling, model);
      const OperatorCoefficients c{0.5, 1.0, cplx(0.0, k) * coupling};
      const Neighbours neighbours = vertex_neighbours(mesh, rows);
      const RowBlocks blocks =
          overlapping_blocks(compact_row_blocks(mesh.centroids(), rows, 32), neighbours.row_start,
                             neighbours.columns, rows, 1);
      const std::vector<cplx> dense = dense_blocks(cpu_layers, c, blocks, BlockEntries::near);
      double condition = 0.0;
      std::size_t offset = 0;
      for (std::size_t b = 0; b < blocks.count(); ++b) {
        condition = std::max(condition, condition_number(dense.data() + offset, blocks.size(b)));
        offset += blocks.size(b) * blocks.size(b);
      }
      const double n = double(blocks.largest());
      const double rounding = 16 * n * unit_roundoff * condition;
      const double tolerance = condition * n * 2e-11 + rounding;
      ASSERT_LT(tolerance, 1e-6);
      std::mt19937_64 rng(9);
      const std::vector<cplx> x = random_vector(rows.size(), rng);
      const LeafBlockPreconditioner cpu(blocks, dense, rows, Device::cpu);
      const LeafBlockPreconditioner gpu(blocks, gpu_layers, c);
      const LeafBlockPreconditioner downloaded(
          blocks, dense_blocks(gpu_layers, c, blocks, BlockEntries::near), rows, Device::gpu);
      std::vector<cplx> y_cpu(x.size()), y_gpu(x.size()), y_downloaded(x.size());
      cpu.apply(x, y_cpu);
      gpu.apply(x, y_gpu);
      downloaded.apply(x, y_downloaded);
      const double d_cpu = relative_difference(y_gpu, y_cpu);
      const double d_same = relative_difference(y_gpu, y_downloaded);
      std::printf(
          "[ measured ] leaf blocks from the GPU, k = %g, %s read, %zu blocks of at most %zu, "
          "kappa %.1f: vs CPU %.2e (tolerance %.1e), vs the same blocks downloaded %.2e "
          "(tolerance %.1e)\n",
          k, quadratic ? "quadratic" : "constant", blocks.count(), blocks.largest(), condition,
          d_cpu, tolerance, d_same, 2 * rounding);
      EXPECT_LT(d_cpu, tolerance);
      EXPECT_LT(d_same, 2 * rounding);
      EXPECT_EQ(gpu.device(), Device::gpu);
    }
  // Without the near field on the GPU this constructor refuses.
  const Discretization disc(mesh, 3);
  const DirectLayerPotentials host_layers(disc, 1.0, rows, NearFieldOptions{});
  EXPECT_THROW(LeafBlockPreconditioner(compact_row_blocks(mesh.centroids(), rows, 32), host_layers,
                                       OperatorCoefficients{0.5, 1.0, 0.0}),
               Error);
}

}  // namespace
}  // namespace fmbem

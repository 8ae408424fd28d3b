// A part's layer potentials under mpiexec (issue 13): each rank builds FmmLayerPotentials for its
// rows with the part and the partition's tree given (FmmOptions::part, part_tree), as bem_solve
// does: its FMM orders its part's points alone, and its densities hold
// the entries of the elements it reads alone (LayerPotentials::column_elements, the rank's
// column space). Against the same rows' layers of the whole problem (every element a column,
// the FMM not distributed): the correction, its near block and every per-row term are the same
// operations in the same order (equal bit for bit); the regular sums differ only in the order
// the distributed FMM adds the partial multipoles (rounding: 1e-13 of the largest entry, the
// FMM's own distributed bound in fmm_distributed_test.cpp). tests/CMakeLists.txt runs it for
// P = 1..4.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <numeric>
#include <random>
#include <vector>

#include "fmbem/bem/boundary_operator.hpp"
#include "fmbem/bem/curvature_correction.hpp"
#include "fmbem/bem/discretization.hpp"
#include "fmbem/bem/fmm_layer_potentials.hpp"
#include "fmbem/core/error.hpp"
#include "fmbem/fmm/distributed.hpp"
#include "fmbem/fmm/gpu_device.hpp"
#include "fmbem/mesh/mesh.hpp"
#include "fmbem/problem/problem.hpp"
#include "mpi_world.hpp"

namespace fmbem {
namespace {

using test::world_rank;
using test::world_size;

// The problem's elements renumbered part by part as bem_solve numbers them: the partition computed
// by the ranks from their slabs of the elements (fmm::DistributedFmmPartition), this rank's rows,
// its locally essential tree and the partition's tree, the shape its FMMs sort their points into
// (FmmOptions::part_tree).
struct Partitioned {
  Mesh mesh;
  RowRange rows;
  fmm::LocallyEssentialTree let;
  std::shared_ptr<const fmm::Octree> tree;
};

Partitioned partition(const Surface& surface, const fmm::FmmOptions& options,
                      std::size_t points_per_element) {
  const Mesh user_mesh = Mesh::from_surface(surface, "test");
  const int rank = world_rank(), size = world_size();
  const std::size_t first = user_mesh.size() * std::size_t(rank) / std::size_t(size);
  const std::size_t last = user_mesh.size() * std::size_t(rank + 1) / std::size_t(size);
  const std::vector<Vec3> sources =
      quadrature_points_of(user_mesh, triangle_rule(int(points_per_element)), first, last);
  std::vector<std::size_t> source_element(sources.size());
  for (std::size_t s = 0; s < source_element.size(); ++s)
    source_element[s] = s / points_per_element;
  const fmm::DistributedFmmPartition partition(
      MPI_COMM_WORLD, sources,
      std::span<const Vec3>(user_mesh.centroids()).subspan(first, last - first), source_element,
      first, options);
  const std::vector<std::size_t>& sizes = partition.part_sizes();
  const std::size_t begin = std::accumulate(sizes.begin(), sizes.begin() + rank, std::size_t(0));
  Surface numbered{user_mesh.vertices(), {}};
  for (std::size_t e : partition.element_order())
    numbered.triangles.push_back(user_mesh.triangles()[e]);
  return {Mesh::from_surface(std::move(numbered), "test"),
          RowRange{begin, begin + sizes[std::size_t(rank)]}, partition.locally_essential_tree(),
          partition.shared_tree()};
}

// The entries of `whole` (every element) at a part's columns.
std::vector<cplx> at_columns(const std::vector<cplx>& whole, const LayerPotentials& part) {
  std::vector<cplx> out;
  for (std::size_t e : part.column_elements()) out.push_back(whole[e]);
  return out;
}

// max |a - b| / max |b| over every rank.
double relative_difference(const std::vector<cplx>& a, const std::vector<cplx>& b) {
  double worst[2] = {0.0, 0.0};
  for (std::size_t i = 0; i < a.size(); ++i) {
    worst[0] = std::max(worst[0], std::abs(a[i] - b[i]));
    worst[1] = std::max(worst[1], std::abs(b[i]));
  }
  MPI_Allreduce(MPI_IN_PLACE, worst, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return worst[0] / worst[1];
}

struct Case {
  double k;
  bool burton_miller;  // the default coupling i / k and the quadratic read
  fmm::FmmOptions::Device device = fmm::FmmOptions::Device::cpu;
  int level = 3, max_leaf = 20;  // the icosphere and the FMM's leaf size
};

void expect_part_equals_whole(const Case& c) {
  const int size = world_size();
  fmm::FmmOptions options{.order = 8, .max_leaf = c.max_leaf};
  options.device = c.device;
  const Partitioned p = partition(make_icosphere(c.level, 1.0), options, 3);
  // One leaf: one rank owns every element, the others none.
  const bool one_leaf = c.max_leaf >= int(p.mesh.size());
  const Discretization disc(p.mesh, 3);
  const std::size_t n = disc.size();
  // A radiation problem: its right-hand side applies the layers to boundary data.
  ProblemSpec spec;
  spec.kind = ProblemKind::Radiation;
  spec.k = c.k;
  spec.source = Vec3{0.1, -0.2, 0.15};
  spec.formulation = c.burton_miller ? Formulation::BurtonMiller : Formulation::Conventional;
  const Problem problem(p.mesh, spec, p.rows);
  const DensityModel model = c.burton_miller ? DensityModel::quadratic : DensityModel::constant;
  const NearFieldOptions near;
  const FmmLayerPotentials whole(disc, c.k, p.rows, near, options, nullptr, problem.coupling(),
                                 model);
  fmm::FmmOptions part_options = options;
  part_options.part = &p.let;
  part_options.part_tree = p.tree.get();
  FmmLayerPotentials part(disc, c.k, p.rows, near, part_options, nullptr, problem.coupling(),
                          model);
  part.distribute(p.let, MPI_COMM_WORLD);
  // The FMM's tree is a part's view, holding fewer source points than the problem's on 2+ ranks.
  EXPECT_TRUE(part.fmm().tree().is_part_view());
  if (size > 1 && !one_leaf) EXPECT_LT(part.fmm().tree().source_order().size(), 3 * n);

  // The column space: ascending, the rows contiguous in it, fewer than all on 2 ranks or more.
  const std::span<const std::size_t> columns = part.column_elements();
  ASSERT_EQ(part.columns(), columns.size());
  EXPECT_TRUE(std::is_sorted(columns.begin(), columns.end()));
  const std::size_t first = part.first_row_column();
  for (std::size_t r = 0; r < p.rows.size(); ++r) ASSERT_EQ(columns[first + r], p.rows.begin + r);
  if (size > 1 && !one_leaf) EXPECT_LT(part.columns(), n);
  if (one_leaf) {
    int owners = p.rows.size() > 0 ? 1 : 0;
    MPI_Allreduce(MPI_IN_PLACE, &owners, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    EXPECT_EQ(owners, 1);
  }
  EXPECT_EQ(whole.columns(), n);
  EXPECT_TRUE(whole.column_elements().empty());
  EXPECT_EQ(whole.first_row_column(), p.rows.begin);

  // The correction's pattern is the whole layers' through the column space, and its near block
  // (with the quadratic read the fold's stencils, found through the map) equal bit for bit.
  const auto part_columns = part.near_field().columns(),
             whole_columns = whole.near_field().columns();
  ASSERT_EQ(part_columns.size(), whole_columns.size());
  std::size_t mismatched = 0;
  for (std::size_t at = 0; at < part_columns.size(); ++at)
    mismatched += columns[std::size_t(part_columns[at])] != std::size_t(whole_columns[at]);
  EXPECT_EQ(mismatched, 0u);
  const OperatorCoefficients coefficients = problem.coefficients();
  const std::vector<cplx> part_block = part.near_block(coefficients),
                          whole_block = whole.near_block(coefficients);
  EXPECT_TRUE(part_block == whole_block) << "near blocks differ";

  // The operator on a density and the right-hand side (which applies the layers to the
  // monopole's data on the part's columns).
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<cplx> x(n);
  for (cplx& value : x) value = {u(rng), u(rng)};
  std::vector<cplx> y_part(p.rows.size()), y_whole(p.rows.size());
  BoundaryOperator(part, coefficients).apply(at_columns(x, part), y_part);
  BoundaryOperator(whole, coefficients).apply(x, y_whole);
  const double tolerance = c.device == fmm::FmmOptions::Device::gpu ? 1e-11 : 1e-13;
  const double operator_difference = relative_difference(y_part, y_whole);
  // Every rank takes part in the reductions; a rank without rows compares nothing.
  EXPECT_LT(operator_difference, tolerance);
  const double rhs_difference =
      relative_difference(problem.right_hand_side(part), problem.right_hand_side(whole));
  EXPECT_LT(rhs_difference, tolerance);
  // A density of every element is refused where the part reads fewer.
  if (part.columns() < n) EXPECT_THROW(part.apply({}, x, y_part), Error);
  if (world_rank() == 0)
    std::printf("  %d rank(s): a rank's columns up to %zu of %zu; operator %.2e, rhs %.2e\n", size,
                part.columns(), n, operator_difference, rhs_difference);
}

TEST(DistributedLayers, ConventionalPartInItsColumnsEqualsWhole) {
  expect_part_equals_whole(Case{2.0, false});
}

TEST(DistributedLayers, BurtonMillerQuadraticPartInItsColumnsEqualsWhole) {
  expect_part_equals_whole(Case{2.0, true});
}

// A tree of one leaf (20 elements, leaves of up to 100): on 2 ranks or more, one rank owns every
// element and the others none (their FMMs were refused before: "the upward pass is distributed
// already"); their column spaces hold what their empty rows read.
TEST(DistributedLayers, RanksWithoutElements) {
  expect_part_equals_whole(Case{1.0, true, fmm::FmmOptions::Device::cpu, 0, 100});
}

TEST(DistributedLayers, GpuBurtonMillerPartInItsColumnsEqualsWhole) {
  if (!fmm::gpu_available()) GTEST_SKIP() << "no GPU";
  expect_part_equals_whole(Case{2.0, true, fmm::FmmOptions::Device::gpu});
}

// Burton-Miller's curvature correction from two parts' Laplace layers (their densities built in
// their column spaces) equals that from the whole layers.
TEST(DistributedLayers, CurvatureCorrectionFromPartsEqualsWhole) {
  const fmm::FmmOptions options{.order = 8, .max_leaf = 20};
  const Partitioned p = partition(make_icosphere(3, 1.0), options, 3);
  const Discretization disc(p.mesh, 3);
  const NearFieldOptions near;
  fmm::FmmOptions part_options = options;
  part_options.part = &p.let;
  part_options.part_tree = p.tree.get();
  const auto make = [&](const fmm::FmmOptions& o, cplx coupling) {
    auto layers =
        std::make_unique<FmmLayerPotentials>(disc, 0.0, p.rows, near, o, nullptr, coupling);
    if (o.part) layers->distribute(p.let, MPI_COMM_WORLD);
    return layers;
  };
  const std::vector<double> from_whole = adjoint_double_layer_curvature_correction(
      p.mesh, *make(options, 0.0), *make(options, 1.0), near.feature_angle);
  const std::vector<double> from_parts = adjoint_double_layer_curvature_correction(
      p.mesh, *make(part_options, 0.0), *make(part_options, 1.0), near.feature_angle);
  std::vector<cplx> a(from_parts.begin(), from_parts.end()),
      b(from_whole.begin(), from_whole.end());
  EXPECT_LT(relative_difference(a, b), 1e-13);
}

}  // namespace
}  // namespace fmbem

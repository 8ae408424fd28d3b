// A part's layer potentials under mpiexec: each rank builds FmmLayerPotentials for its
// rows with the part and the partition's tree given (fmm::FmmPart: the let and the tree), as
// bem_solve does: its FMM orders its part's points alone, and its densities hold the entries of the
// elements it reads alone (LayerPotentials::column_elements, the rank's column space). Against the
// same rows' layers of the whole problem (every element a column, the FMM not distributed): the
// correction, its near block and every per-row term are the same operations in the same order
// (equal bit for bit); the regular sums differ only in the order the distributed FMM adds the
// partial multipoles (rounding: 1e-13 of the largest entry, the FMM's own distributed bound in
// fmm_distributed_test.cpp). tests/CMakeLists.txt runs it for P = 1..4.
#include <gtest/gtest.h>
#include <mpi.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <numeric>
#include <random>
#include <ranges>
#include <vector>

#include "fmbem/bem/boundary_operator.hpp"
#include "fmbem/bem/curvature_correction.hpp"
#include "fmbem/bem/direct_layer_potentials.hpp"
#include "fmbem/bem/discretization.hpp"
#include "fmbem/bem/distributed_mesh.hpp"
#include "fmbem/bem/fmm_layer_potentials.hpp"
#include "fmbem/core/error.hpp"
#include "fmbem/fmm/distributed.hpp"
#include "fmbem/fmm/gpu_device.hpp"
#include "fmbem/mesh/feature_edges.hpp"
#include "fmbem/mesh/mesh.hpp"
#include "fmbem/mesh/neighbourhoods.hpp"
#include "fmbem/problem/problem.hpp"
#include "mpi_world.hpp"

namespace fmbem {
namespace {

using test::on_every_rank;
using test::world_rank;
using test::world_size;

// The problem's elements renumbered part by part as bem_solve numbers them: the partition computed
// by the ranks from their slabs of the elements (fmm::DistributedFmmPartition), this rank's rows,
// its locally essential tree and the partition's tree, the shape its FMMs sort their points into
// (FmmPart::tree).
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
  // The wideband FMM at this -fmm_eps (the order from it, the partition's tree without leaves on
  // the diagonal levels of k); 0: order 8.
  double tolerance = 0.0;
};

fmm::FmmOptions case_options(const Case& c) {
  fmm::FmmOptions options{.order = 8, .max_leaf = c.max_leaf};
  options.device = c.device;
  if (c.tolerance > 0.0) {
    options.order = 0;
    options.tolerance = c.tolerance;
    options.largest_wavenumber = c.k;
  }
  return options;
}

// A part's FMM layer potentials as bem_solve builds them: the part and the partition's tree
// given, then distributed over the ranks.
std::unique_ptr<FmmLayerPotentials> part_layers(const Discretization& disc, double k, RowRange rows,
                                                const fmm::LocallyEssentialTree& let,
                                                const fmm::Octree& tree, fmm::FmmOptions options,
                                                cplx coupling, DensityModel model) {
  auto layers =
      std::make_unique<FmmLayerPotentials>(disc, k, rows, NearFieldOptions{}, options, nullptr,
                                           coupling, model, fmm::FmmPart{let, &tree});
  layers->distribute(let, MPI_COMM_WORLD);
  return layers;
}

// A monopole radiating from inside the unit sphere, at the case's k and formulation.
ProblemSpec radiation_spec(const Case& c) {
  ProblemSpec spec;
  spec.kind = ProblemKind::Radiation;
  spec.k = c.k;
  spec.source = Vec3{0.1, -0.2, 0.15};
  spec.formulation = c.burton_miller ? Formulation::BurtonMiller : Formulation::Conventional;
  return spec;
}

void expect_part_equals_whole(const Case& c) {
  const int size = world_size();
  const fmm::FmmOptions options = case_options(c);
  const Partitioned p = partition(make_icosphere(c.level, 1.0), options, 3);
  // One leaf: one rank owns every element, the others none.
  const bool one_leaf = c.max_leaf >= int(p.mesh.size());
  const Discretization disc(p.mesh, 3);
  const std::size_t n = disc.size();
  // A radiation problem: its right-hand side applies the layers to boundary data.
  const Problem problem(p.mesh, radiation_spec(c), p.rows);
  const DensityModel model = c.burton_miller ? DensityModel::quadratic : DensityModel::constant;
  const NearFieldOptions near;
  const FmmLayerPotentials whole(disc, c.k, p.rows, near, options, nullptr, problem.coupling(),
                                 model);
  const auto part_pointer =
      part_layers(disc, c.k, p.rows, p.let, *p.tree, options, problem.coupling(), model);
  const FmmLayerPotentials& part = *part_pointer;
  // The FMM's tree is a part's view, holding fewer source points than the problem's on 2+ ranks.
  EXPECT_TRUE(part.fmm().tree().is_part_view());
  if (c.tolerance > 0.0) {
    EXPECT_GE(part.fmm().statistics().switch_level, 2)
        << "no diagonal level: the case tests nothing";
    EXPECT_EQ(part.fmm().statistics().switch_level, whole.fmm().statistics().switch_level);
  }
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
// The wideband FMM (k D = 32, -fmm_eps 1e-4: diagonal level 2, converted at level 3): every part
// forms the coarse tree's signatures from the conversion level's multipoles summed over the ranks.
TEST(DistributedLayers, WidebandBurtonMillerPartInItsColumnsEqualsWhole) {
  expect_part_equals_whole(Case{16.0, true, fmm::FmmOptions::Device::cpu, 3, 8, 1e-4});
}

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
  const fmm::FmmPart part{p.let, p.tree.get()};
  const auto make = [&](const std::optional<fmm::FmmPart>& of, cplx coupling) {
    auto layers = std::make_unique<FmmLayerPotentials>(disc, 0.0, p.rows, near, options, nullptr,
                                                       coupling, DensityModel::constant, of);
    if (of) layers->distribute(p.let, MPI_COMM_WORLD);
    return layers;
  };
  const std::vector<double> from_whole = adjoint_double_layer_curvature_correction(
      p.mesh, *make(std::nullopt, 0.0), *make(std::nullopt, 1.0), near.feature_angle);
  const std::vector<double> from_parts = adjoint_double_layer_curvature_correction(
      p.mesh, *make(part, 0.0), *make(part, 1.0), near.feature_angle);
  std::vector<cplx> a(from_parts.begin(), from_parts.end()),
      b(from_whole.begin(), from_whole.end());
  EXPECT_LT(relative_difference(a, b), 1e-13);
}

// The mesh distributed (DistributedMesh): each rank holds its part's elements
// and a halo, in local indices; its operator on that mesh against the same part's operator on
// the whole mesh (expect_part_equals_whole's `part`): the same columns through the solver
// indices, the same correction pattern and near block, the same product, bit for bit on the CPU
// (the same points in the same order, the same leaves, the same fits).
struct LocalCase {
  Case c;
  Surface surface;
  bool halo_below_whole = true;
};

void expect_local_mesh_equals_whole_mesh(const LocalCase& lc) {
  const Case& c = lc.c;
  const int size = world_size();
  const fmm::FmmOptions options = case_options(c);
  const Partitioned p = partition(lc.surface, options, 3);
  const bool one_leaf = c.max_leaf >= int(p.mesh.size());
  const std::size_t n = p.mesh.size();
  const Problem problem(p.mesh, radiation_spec(c), p.rows);
  const DensityModel model = c.burton_miller ? DensityModel::quadratic : DensityModel::constant;
  const NearFieldOptions near;
  const Discretization disc(p.mesh, 3);
  const auto reference_pointer =
      part_layers(disc, c.k, p.rows, p.let, *p.tree, options, problem.coupling(), model);
  const FmmLayerPotentials& reference = *reference_pointer;

  const Mesh user_mesh = Mesh::from_surface(lc.surface, "test");
  const DistributedMesh local(MPI_COMM_WORLD, world_rank() == 0 ? &user_mesh : nullptr, "test", 3,
                              options, halo_reach(near, model, false));
  const Mesh& mesh = local.mesh();
  ASSERT_TRUE(mesh.is_part());
  EXPECT_EQ(local.whole_size(), n);
  EXPECT_EQ(local.first_row(), p.rows.begin);
  ASSERT_EQ(local.rows().size(), p.rows.size());
  const std::span<const std::size_t> solver = local.solver_elements();
  ASSERT_EQ(solver.size(), mesh.size());
  EXPECT_TRUE(std::is_sorted(solver.begin(), solver.end()));
  for (std::size_t r = 0; r < local.rows().size(); ++r)
    ASSERT_EQ(solver[local.rows().begin + r], p.rows.begin + r);
  // Each element's geometry is the whole mesh's (solver and input numbering), bit for bit.
  std::size_t moved = 0;
  for (std::size_t e = 0; e < mesh.size(); ++e) {
    moved += !(mesh.centroids()[e] == p.mesh.centroids()[solver[e]]) ||
             !(mesh.normals()[e] == p.mesh.normals()[solver[e]]) ||
             mesh.areas()[e] != p.mesh.areas()[solver[e]] ||
             !(mesh.centroids()[e] == user_mesh.centroids()[local.input_elements()[e]]);
  }
  EXPECT_EQ(moved, 0u);
  EXPECT_EQ(mesh.diameter(), p.mesh.diameter());
  EXPECT_EQ(mesh.extent().elements, n);
  // The halo: fewer than every element on 2 ranks or more (the small meshes' halos of the
  // quadratic read, three rings and the refined radius deep, may reach every element: at
  // icosphere:4 on 2 ranks 4,175 of 5,120, bench/mesh_halo for the large meshes).
  if (size > 1 && !one_leaf && lc.halo_below_whole) EXPECT_LT(mesh.size(), n);

  const Discretization local_disc(mesh, 3);
  const auto layers_pointer =
      part_layers(local_disc, c.k, local.rows(), local.locally_essential_tree(), *local.tree(),
                  options, problem.coupling(), model);
  const FmmLayerPotentials& layers = *layers_pointer;
  if (c.tolerance > 0.0) {
    EXPECT_GE(layers.fmm().statistics().switch_level, 2)
        << "no diagonal level: the case tests nothing";
    EXPECT_EQ(layers.fmm().statistics().switch_level, reference.fmm().statistics().switch_level);
  }
  const std::span<const std::size_t> columns = layers.column_elements(),
                                     reference_columns = reference.column_elements();
  ASSERT_EQ(columns.size(), reference_columns.size());
  std::size_t mismatched = 0;
  for (std::size_t j = 0; j < columns.size(); ++j)
    mismatched += solver[columns[j]] != reference_columns[j];
  EXPECT_EQ(mismatched, 0u);
  const auto near_columns = layers.near_field().columns(),
             reference_near = reference.near_field().columns();
  EXPECT_TRUE(std::equal(near_columns.begin(), near_columns.end(), reference_near.begin(),
                         reference_near.end()));
  const OperatorCoefficients coefficients = problem.coefficients();
  EXPECT_TRUE(layers.near_block(coefficients) == reference.near_block(coefficients))
      << "near blocks differ";

  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<cplx> x(n);
  for (cplx& value : x) value = {u(rng), u(rng)};
  std::vector<cplx> x_local;
  for (std::size_t e : columns) x_local.push_back(x[solver[e]]);
  std::vector<cplx> y_local(p.rows.size()), y_reference(p.rows.size());
  BoundaryOperator(layers, coefficients).apply(x_local, y_local);
  BoundaryOperator(reference, coefficients).apply(at_columns(x, reference), y_reference);
  if (c.device == fmm::FmmOptions::Device::cpu)
    EXPECT_TRUE(y_local == y_reference) << "products differ";
  const double difference = relative_difference(y_local, y_reference);
  EXPECT_LT(difference, 1e-13);
  // The problem on the part, with the whole surface's facts from rank 0: the same exact values
  // and right-hand side as the whole mesh's rows; without the facts it is refused.
  SurfaceFacts facts;
  if (world_rank() == 0) facts = surface_facts(user_mesh, radiation_spec(c));
  MPI_Bcast(&facts, int(sizeof facts), MPI_BYTE, 0, MPI_COMM_WORLD);
  const Problem local_problem(mesh, radiation_spec(c), local.rows(), &facts);
  EXPECT_TRUE(*local_problem.exact_solution() == *problem.exact_solution());
  const std::vector<cplx> local_rhs = local_problem.right_hand_side(layers),
                          reference_rhs = problem.right_hand_side(reference);
  if (c.device == fmm::FmmOptions::Device::cpu)
    EXPECT_TRUE(local_rhs == reference_rhs) << "right-hand sides differ";
  EXPECT_LT(relative_difference(local_rhs, reference_rhs), 1e-13);
  EXPECT_THROW(Problem(mesh, radiation_spec(c), local.rows()), Error);
  std::size_t largest = mesh.size();
  MPI_Allreduce(MPI_IN_PLACE, &largest, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
  if (world_rank() == 0)
    std::printf("  %d rank(s): a rank's mesh up to %zu of %zu elements; product %.2e\n", size,
                largest, n, difference);
}

TEST(DistributedMesh, ConventionalOperatorEqualsWholeMeshPart) {
  expect_local_mesh_equals_whole_mesh(
      {Case{2.0, false, fmm::FmmOptions::Device::cpu, 4, 40}, make_icosphere(4, 1.0)});
}

TEST(DistributedMesh, BurtonMillerQuadraticOperatorEqualsWholeMeshPart) {
  expect_local_mesh_equals_whole_mesh({Case{2.0, true}, make_icosphere(3, 1.0), false});
}

// Feature edges at the parts' rims: the one-sided fits beside the cube's edges.
TEST(DistributedMesh, BoxWithFeatureEdgesEqualsWholeMeshPart) {
  expect_local_mesh_equals_whole_mesh({Case{1.5, true}, make_box(6, 1.0), false});
}

// The wideband FMM on the local meshes: the rank's shape of its FMMs holds every cell of the
// diagonal levels and their lists besides the cells its part reads.
TEST(DistributedMesh, WidebandBurtonMillerOperatorEqualsWholeMeshPart) {
  expect_local_mesh_equals_whole_mesh(
      {Case{16.0, true, fmm::FmmOptions::Device::cpu, 3, 8, 1e-4}, make_icosphere(3, 1.0), false});
}

TEST(DistributedMesh, GpuWidebandBurtonMillerOperatorEqualsWholeMeshPart) {
  if (!fmm::gpu_available()) GTEST_SKIP() << "no GPU";
  expect_local_mesh_equals_whole_mesh(
      {Case{16.0, true, fmm::FmmOptions::Device::gpu, 3, 8, 1e-4}, make_icosphere(3, 1.0), false});
}

TEST(DistributedMesh, RanksWithoutElements) {
  expect_local_mesh_equals_whole_mesh(
      {Case{1.0, true, fmm::FmmOptions::Device::cpu, 0, 100}, make_icosphere(0, 1.0)});
}

TEST(DistributedMesh, GpuBurtonMillerOperatorEqualsWholeMeshPart) {
  if (!fmm::gpu_available()) GTEST_SKIP() << "no GPU";
  expect_local_mesh_equals_whole_mesh(
      {Case{2.0, true, fmm::FmmOptions::Device::gpu, 4, 40}, make_icosphere(4, 1.0)});
}

// Burton-Miller's curvature correction on the local meshes (halos a vertex ring deeper, as
// halo_reach gives with the correction), the cube's feature edges gathered from the ranks' rows,
// equals that of the whole mesh's parts; only the feature edges' sum runs in another order
// (rounding). Without the gathered edges a part's correction is refused.
TEST(DistributedMesh, CurvatureCorrectionOnTheLocalMeshEqualsWholeMeshPart) {
  const fmm::FmmOptions options{.order = 8, .max_leaf = 20};
  const Surface surface = make_box(6, 1.0);
  const Partitioned p = partition(surface, options, 3);
  const NearFieldOptions near;
  const Discretization disc(p.mesh, 3);
  const std::vector<double> reference = adjoint_double_layer_curvature_correction(
      p.mesh, *part_layers(disc, 0.0, p.rows, p.let, *p.tree, options, 0.0, DensityModel::constant),
      *part_layers(disc, 0.0, p.rows, p.let, *p.tree, options, 1.0, DensityModel::constant),
      near.feature_angle);

  const Mesh user_mesh = Mesh::from_surface(surface, "test");
  const DistributedMesh local(MPI_COMM_WORLD, world_rank() == 0 ? &user_mesh : nullptr, "test", 3,
                              options, halo_reach(near, DensityModel::constant, true));
  const std::vector<FeatureSegment> segments =
      gather_feature_segments(MPI_COMM_WORLD, local, near.feature_angle);
  EXPECT_EQ(segments.size(), feature_edge_segments(p.mesh, near.feature_angle).size());
  EXPECT_EQ(segments.size(), 12u * 6u);  // the cube's 12 edges, 6 segments each
  const Discretization local_disc(local.mesh(), 3);
  const auto make = [&](cplx coupling) -> std::unique_ptr<LayerPotentials> {
    return part_layers(local_disc, 0.0, local.rows(), local.locally_essential_tree(), *local.tree(),
                       options, coupling, DensityModel::constant);
  };
  const std::vector<double> on_local = adjoint_double_layer_curvature_correction(
      local.mesh(), [&](const std::vector<double>&) { return make(0.0); },
      [&](const std::vector<double>&) { return make(1.0); }, near.feature_angle, &segments);
  ASSERT_EQ(on_local.size(), reference.size());
  // c is the small remainder of O(1) terms (the feature edges' line integrals, D[n], S[w]):
  // the rounding of their sums, in another order here (the edges' sum, each element's
  // curvature vector from its three edges), is measured against the feature term's size.
  const std::vector<double> feature_term =
      feature_edge_curvature_term(local.mesh(), local.rows(), segments);
  double scale = 0.0;
  for (const double value : feature_term) scale = std::max(scale, std::abs(value));
  MPI_Allreduce(MPI_IN_PLACE, &scale, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  double worst = 0.0;
  for (std::size_t r = 0; r < on_local.size(); ++r)
    worst = std::max(worst, std::abs(on_local[r] - reference[r]));
  MPI_Allreduce(MPI_IN_PLACE, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  const double difference = worst / scale;
  EXPECT_GT(scale, 0.1);
  EXPECT_LT(difference, 1e-13);
  EXPECT_THROW(adjoint_double_layer_curvature_correction(
                   local.mesh(), [&](const std::vector<double>&) { return make(0.0); },
                   [&](const std::vector<double>&) { return make(1.0); }, near.feature_angle),
               Error);
  if (world_rank() == 0)
    std::printf("  %d rank(s): the curvature correction on the local meshes %.2e\n", world_size(),
                difference);
}

// The halo bounds formed by the ranks from their slabs (each vertex's star on one rank) are
// neighbourhood_reach's of the whole mesh bit for bit, with every corner's valence, on meshes of
// uniform (icosphere) and mixed valences (the box), for 0, 1 and 3 rings; bad vertices are
// refused on every rank.
// Image planes on the distributed FMM: each element's mirror sources are sources of it in the
// partition's tree (DistributedMesh), and a rank's FMM holds the mirror images of the quadrature
// points its part reads, weighted by their image's sign (FmmLayerPotentials). Against the direct
// sum with images over the whole mesh (DirectLayerPotentials: the regular sum exact, the same
// correction): the difference is the FMM's alone, to its tolerance (1e-8 asked, 1e-7 of the
// largest entry allowed, as the one-rank image FMM's test,
// ImageLayers.FmmLayersEqualTheDirectOnes). The local mesh classifies its elements against the
// planes as the whole mesh does (flush elements), and every halo a mirror image reads is complete
// (the FMM's part view checks each leaf it reads holds all its sources).
struct PlanesCase {
  Surface surface;
  const char* planes;
  LayerCoupling coupling;
  DensityModel model;
  fmm::FmmOptions::Device device = fmm::FmmOptions::Device::cpu;
};

void expect_distributed_planes_equal_direct(const PlanesCase& pc) {
  constexpr double k = 3.0;
  const Mesh whole = Mesh::from_surface(pc.surface, "test", parse_image_planes(pc.planes));
  fmm::FmmOptions options;
  options.tolerance = 1e-8;
  options.max_leaf = 16;
  options.device = pc.device;
  const NearFieldOptions near;
  const DistributedMesh local(MPI_COMM_WORLD, world_rank() == 0 ? &whole : nullptr, "test", 6,
                              options, halo_reach(near, pc.model, false));
  const Mesh& mesh = local.mesh();
  ASSERT_EQ(mesh.image_planes().description(), whole.image_planes().description());
  ASSERT_TRUE(std::ranges::equal(mesh.image_planes().sides(), whole.image_planes().sides()));
  const std::span<const std::size_t> input = local.input_elements();
  std::size_t misclassified = 0;
  for (std::size_t e = 0; e < mesh.size(); ++e)
    misclassified += mesh.flush(e) != whole.flush(input[e]);
  EXPECT_EQ(misclassified, 0u);

  const Discretization local_disc(mesh, 6), whole_disc(whole, 6);
  const auto layers = part_layers(local_disc, k, local.rows(), local.locally_essential_tree(),
                                  *local.tree(), options, pc.coupling.alpha, pc.model);
  // (part_layers takes the coupling as alpha: the derivative apart is built here.)
  std::unique_ptr<FmmLayerPotentials> apart;
  if (pc.coupling.apart) {
    apart = std::make_unique<FmmLayerPotentials>(
        local_disc, k, local.rows(), near, options, nullptr, pc.coupling, pc.model,
        fmm::FmmPart{local.locally_essential_tree(), local.tree().get()});
    apart->distribute(local.locally_essential_tree(), MPI_COMM_WORLD);
  }
  const FmmLayerPotentials& fast = apart ? *apart : *layers;
  const DirectLayerPotentials direct(whole_disc, k, {0, whole.size()}, near, pc.coupling, pc.model);
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  std::vector<cplx> u(whole.size()), q(whole.size());
  for (std::vector<cplx>* density : {&u, &q})
    for (cplx& value : *density) value = {uniform(rng), uniform(rng)};
  std::vector<cplx> u_columns, q_columns;
  for (std::size_t e : fast.column_elements()) {
    u_columns.push_back(u[input[e]]);
    q_columns.push_back(q[input[e]]);
  }
  const int outputs = pc.coupling.outputs();
  const std::size_t rows = local.rows().size(), n = whole.size();
  std::vector<cplx> y_fast(std::size_t(outputs) * rows), y_direct(std::size_t(outputs) * n);
  fast.apply(u_columns, q_columns, y_fast);
  direct.apply(u, q, y_direct);
  std::vector<cplx> y_own(y_fast.size());
  for (int o = 0; o < outputs; ++o)
    for (std::size_t r = 0; r < rows; ++r)
      y_own[std::size_t(o) * rows + r] =
          y_direct[std::size_t(o) * n + input[local.rows().begin + r]];
  const double difference = relative_difference(y_fast, y_own);
  EXPECT_LT(difference, 1e-7) << pc.planes;
  std::size_t largest = mesh.size(), owned = rows;
  MPI_Allreduce(MPI_IN_PLACE, &largest, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &owned, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_EQ(owned, n);
  if (world_rank() == 0)
    std::printf("  %s, %d rank(s): a rank's mesh up to %zu of %zu elements; product %.2e\n",
                pc.planes, world_size(), largest, n, difference);
}

Surface octasphere_part(const std::string& axes, int level = 3) {
  std::array<bool, 3> keep{};
  for (char a : axes) keep[std::size_t(a - 'x')] = true;
  return make_octasphere(level, 1.0, keep);
}

// A sphere above a plane, shifted clear of it.
Surface raised_sphere(double height) {
  Surface surface = make_icosphere(3, 1.0);
  for (Vec3& v : surface.vertices) v.z += height;
  return surface;
}

TEST(DistributedMesh, ImagePlanesConventionalEqualTheDirectSum) {
  expect_distributed_planes_equal_direct(
      {octasphere_part("x"), "x=0:symmetric", LayerCoupling(0.0), DensityModel::constant});
  expect_distributed_planes_equal_direct({octasphere_part("xz"), "x=0:antisymmetric,z=0:soft",
                                          LayerCoupling(0.0), DensityModel::constant});
}

TEST(DistributedMesh, ImagePlanesBurtonMillerEqualTheDirectSum) {
  // Three planes (an eighth, with a rigid one it touches), the quadratic read fitted across them.
  expect_distributed_planes_equal_direct(
      {octasphere_part("xyz"), "x=0:rigid,y=0:symmetric,z=0:antisymmetric",
       LayerCoupling(cplx(0.0, 1.0 / 3.0)), DensityModel::quadratic});
  // The regularised formulation's derivative apart, above a soft plane it does not touch.
  expect_distributed_planes_equal_direct(
      {raised_sphere(1.3), "z=0:soft", LayerCoupling::derivative_apart(), DensityModel::quadratic});
}

TEST(DistributedMesh, GpuImagePlanesBurtonMillerEqualTheDirectSum) {
  if (!fmm::gpu_available()) GTEST_SKIP() << "no GPU";
  expect_distributed_planes_equal_direct(
      {octasphere_part("xyz"), "x=0:rigid,y=0:symmetric,z=0:antisymmetric",
       LayerCoupling(cplx(0.0, 1.0 / 3.0)), DensityModel::quadratic, fmm::FmmOptions::Device::gpu});
  expect_distributed_planes_equal_direct({raised_sphere(1.3), "z=0:soft",
                                          LayerCoupling::derivative_apart(),
                                          DensityModel::quadratic, fmm::FmmOptions::Device::gpu});
}

// With planes the mirror images' leaves go to the ranks owning the real leaves they mirror, so a
// rank's mesh is its part and a halo about it. The Morton cut alone gave the mirror octants'
// leaves (sources, no targets) to the first ranks along the curve, whose P2M then read every
// element: that rank held the whole mesh and received the densities of every element not its
// own (n / 2 and more on 2-4 ranks). A quarter sphere of 2048 elements with two planes, no
// operator built (measured: a rank's mesh up to 1519 / 1946 / 1492 elements on 2 / 3 / 4 ranks,
// densities received up to 175 / 784 / 515; at this size the halo of a Morton part's border, as
// without planes, is a large share).
TEST(DistributedMesh, ImagePlanesDivideTheMesh) {
  const Mesh whole = Mesh::from_surface(octasphere_part("xz", 5), "quarter sphere",
                                        parse_image_planes("x=0:symmetric,z=0:rigid"));
  fmm::FmmOptions options;
  options.max_leaf = 16;
  const DistributedMesh local(MPI_COMM_WORLD, world_rank() == 0 ? &whole : nullptr,
                              "quarter sphere", 6, options,
                              halo_reach(NearFieldOptions{}, DensityModel::quadratic, true));
  const std::size_t n = whole.size();
  std::size_t largest = local.mesh().size(), received = 0;
  for (const auto& from : local.locally_essential_tree().receive_densities) received += from.size();
  MPI_Allreduce(MPI_IN_PLACE, &largest, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &received, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
  if (world_rank() == 0)
    std::printf(
        "  %d rank(s): a rank's mesh up to %zu of %zu elements, densities received up "
        "to %zu\n",
        world_size(), largest, n, received);
  if (world_size() == 1) return;
  EXPECT_LT(largest, n);
  EXPECT_LT(received, n / 2);
}

// Burton-Miller's curvature correction on the local meshes with a plane the mesh is cut at: a
// part's edges in the plane, where its vertices have all their triangles, pair with their
// mirror faces as on the whole mesh (they are not the part's rim), and the gathered feature
// segments are the whole's. The half sphere cut at x = 0 (its edges there curve with the
// mirror half's faces), on the distributed FMM (mirror sources) at 1e-8,
// against the one-rank FMM's (mirror targets) on the whole half: two FMMs each within 1e-8 of
// the products' largest entries, c a sum of O(1) such products: 1e-7 of the largest |c|
// allowed (measured 2.1e-9). Where a part dropped its edges in the plane as rim edges the
// correction was wrong at them by O(1) (1.9 of the largest |c|).
TEST(DistributedMesh, CurvatureCorrectionWithAPlaneEqualsTheWholeMeshs) {
  const Mesh whole =
      Mesh::from_surface(octasphere_part("x", 4), "half sphere", parse_image_planes("x=0:soft"));
  fmm::FmmOptions options;
  options.tolerance = 1e-8;
  options.max_leaf = 16;
  const NearFieldOptions near;
  const double angle = near.feature_angle;
  const DistributedMesh local(MPI_COMM_WORLD, world_rank() == 0 ? &whole : nullptr, "half sphere",
                              3, options, halo_reach(near, DensityModel::constant, true));
  const Discretization local_disc(local.mesh(), 3), whole_disc(whole, 3);
  const auto maker = [&](cplx coupling, bool distributed) -> LayerMaker {
    return [&, coupling, distributed](const std::vector<double>& weights) {
      NearFieldOptions weighted = near;
      weighted.image_weights = weights;
      if (!distributed)
        return std::unique_ptr<LayerPotentials>(std::make_unique<FmmLayerPotentials>(
            whole_disc, 0.0, RowRange{0, whole.size()}, weighted, options, nullptr, coupling));
      auto layers = std::make_unique<FmmLayerPotentials>(
          local_disc, 0.0, local.rows(), weighted, options, nullptr, coupling,
          DensityModel::constant, fmm::FmmPart{local.locally_essential_tree(), local.tree().get()});
      layers->distribute(local.locally_essential_tree(), MPI_COMM_WORLD);
      return std::unique_ptr<LayerPotentials>(std::move(layers));
    };
  };
  const std::vector<FeatureSegment> segments =
      gather_feature_segments(MPI_COMM_WORLD, local, angle);
  const std::vector<double> c_local = adjoint_double_layer_curvature_correction(
      local.mesh(), maker(0.0, true), maker(1.0, true), angle, &segments);
  const std::vector<double> c_whole =
      adjoint_double_layer_curvature_correction(whole, maker(0.0, false), maker(1.0, false), angle);
  ASSERT_EQ(c_local.size(), local.rows().size());
  std::vector<cplx> a, b;
  for (std::size_t r = 0; r < c_local.size(); ++r) {
    a.push_back(c_local[r]);
    b.push_back(c_whole[local.input_elements()[local.rows().begin + r]]);
  }
  const double difference = relative_difference(a, b);
  EXPECT_LT(difference, 1e-7);
  if (world_rank() == 0)
    std::printf("  %d rank(s): the correction to %.2e of its largest value\n", world_size(),
                difference);
}

TEST(DistributedMesh, NeighbourhoodBoundsFromTheSlabsAreTheWholeMeshs) {
  const int rank = world_rank(), size = world_size();
  for (const Surface& surface : {make_icosphere(3, 1.0), make_box(5, 2.0)}) {
    const Mesh whole = Mesh::from_surface(surface, "test");
    const VertexStars stars = vertex_stars(whole);
    const std::size_t n = whole.size();
    const std::size_t first = n * std::size_t(rank) / std::size_t(size),
                      last = n * std::size_t(rank + 1) / std::size_t(size);
    // The slab as DistributedMesh holds it: each element's own corners, the whole's vertex ids.
    std::vector<Vec3> corners;
    std::vector<Triangle> triangles;
    std::vector<std::int64_t> vertex_ids;
    for (std::size_t e = first; e < last; ++e) {
      const std::int32_t at = std::int32_t(corners.size());
      for (std::int32_t v : whole.triangles()[e]) {
        corners.push_back(whole.vertices()[std::size_t(v)]);
        vertex_ids.push_back(v);
      }
      triangles.push_back({at, at + 1, at + 2});
    }
    std::vector<std::uint8_t> complete(corners.size(), 0);
    const Mesh slab = Mesh::part_of("test", std::move(corners), std::move(triangles),
                                    std::move(complete), whole.extent());
    for (int rings : {0, 1, 3}) {
      const NeighbourhoodReach expected = neighbourhood_reach(whole, stars, rings);
      const SlabNeighbourhoodReach formed = distributed_neighbourhood_reach(
          MPI_COMM_WORLD, slab, vertex_ids, whole.vertices().size(), rings);
      bool same = formed.bounds.reach.size() == last - first &&
                  formed.bounds.largest_corner_radius.size() == last - first &&
                  formed.valences.size() == 3 * (last - first);
      for (std::size_t e = first; same && e < last; ++e) {
        same = formed.bounds.reach[e - first] == expected.reach[e] &&
               formed.bounds.largest_corner_radius[e - first] == expected.largest_corner_radius[e];
        for (std::size_t c = 0; same && c < 3; ++c) {
          const std::size_t v = std::size_t(whole.triangles()[e][c]);
          same = formed.valences[3 * (e - first) + c] ==
                 std::uint32_t(stars.start[v + 1] - stars.start[v]);
        }
      }
      EXPECT_TRUE(on_every_rank(same)) << rings << " rings";
    }
    // A vertex not of the mesh, on one rank, is refused on every rank.
    std::vector<std::int64_t> bad = vertex_ids;
    if (rank == size - 1 && !bad.empty()) bad.back() = std::int64_t(whole.vertices().size());
    EXPECT_THROW(
        distributed_neighbourhood_reach(MPI_COMM_WORLD, slab, bad, whole.vertices().size(), 1),
        Error);
    EXPECT_THROW(distributed_neighbourhood_reach(MPI_COMM_WORLD, slab, vertex_ids,
                                                 whole.vertices().size(), -1),
                 Error);
  }
}

// A halo too thin for the quadratic read (no rings) is found where it is read: a fit whose
// corners' triangles are not all there is refused on some rank, not formed wrong.
TEST(DistributedMesh, TooThinHaloIsRefused) {
  const fmm::FmmOptions options{.order = 8, .max_leaf = 20};
  const Mesh user_mesh = Mesh::from_surface(make_icosphere(3, 1.0), "test");
  const NearFieldOptions near;
  const DistributedMesh local(MPI_COMM_WORLD, world_rank() == 0 ? &user_mesh : nullptr, "test", 3,
                              options, HaloReach{0, near.refined_factor});
  const Discretization disc(local.mesh(), 3);
  int refused = 0;
  try {
    const FmmLayerPotentials layers(
        disc, 2.0, local.rows(), near, options, nullptr, cplx(0.0, 0.5), DensityModel::quadratic,
        fmm::FmmPart{local.locally_essential_tree(), local.tree().get()});
  } catch (const Error& e) {
    refused = std::string(e.what()).find("halo is too thin") != std::string::npos;
  }
  MPI_Allreduce(MPI_IN_PLACE, &refused, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (world_size() > 1) EXPECT_EQ(refused, 1);
  // One rank holds every element: nothing is missing.
  if (world_size() == 1) EXPECT_EQ(refused, 0);
}

bool same_bits(const Vec3& a, const Vec3& b) { return std::memcmp(&a, &b, sizeof(Vec3)) == 0; }

// This rank's slab of an icosphere, generated alone.
MeshSlab own_icosphere_slab(int level, double radius, const Vec3& center = {}) {
  const std::size_t n = icosphere_triangles(level);
  return icosphere_slab(level, radius, mesh_slab_begin(n, world_rank(), world_size()),
                        mesh_slab_begin(n, world_rank() + 1, world_size()), center);
}

// Each rank generating its own slab gives what rank 0's whole mesh gives: the same parts, halos,
// local meshes (bit for bit, vertex for vertex), locally essential trees and kept trees.
void expect_generated_slabs_give_the_whole_meshs_parts(int level, int max_leaf,
                                                       const HaloReach& reach) {
  const fmm::FmmOptions options{.order = 8, .max_leaf = max_leaf};
  const Vec3 center{0.3, -0.1, 0.2};
  const Mesh user_mesh = Mesh::from_surface(make_icosphere(level, 1.3, center), "test");
  const DistributedMesh from_whole(MPI_COMM_WORLD, world_rank() == 0 ? &user_mesh : nullptr, "test",
                                   3, options, reach);
  const DistributedMesh from_slabs(MPI_COMM_WORLD, own_icosphere_slab(level, 1.3, center), "test",
                                   3, options, reach);
  EXPECT_EQ(from_slabs.whole_size(), from_whole.whole_size());
  EXPECT_EQ(from_slabs.first_row(), from_whole.first_row());
  EXPECT_EQ(from_slabs.rows().begin, from_whole.rows().begin);
  EXPECT_EQ(from_slabs.rows().end, from_whole.rows().end);
  EXPECT_EQ(from_slabs.part_sizes(), from_whole.part_sizes());
  EXPECT_EQ(from_slabs.work(), from_whole.work());
  EXPECT_TRUE(std::ranges::equal(from_slabs.solver_elements(), from_whole.solver_elements()));
  EXPECT_TRUE(std::ranges::equal(from_slabs.input_elements(), from_whole.input_elements()));
  const Mesh &a = from_slabs.mesh(), &b = from_whole.mesh();
  ASSERT_EQ(a.size(), b.size());
  ASSERT_EQ(a.vertices().size(), b.vertices().size());
  EXPECT_EQ(a.triangles(), b.triangles());
  std::size_t differ = 0;
  for (std::size_t v = 0; v < a.vertices().size(); ++v)
    differ += !same_bits(a.vertices()[v], b.vertices()[v]) ||
              a.vertex_complete(v) != b.vertex_complete(v);
  for (std::size_t e = 0; e < a.size(); ++e)
    differ += !same_bits(a.centroids()[e], b.centroids()[e]) || a.areas()[e] != b.areas()[e];
  EXPECT_EQ(differ, 0u);
  // The extent: exact under min, max and counts; the volume summed in another order.
  const MeshExtent x = a.extent(), y = b.extent();
  EXPECT_TRUE(same_bits(x.box_min, y.box_min) && same_bits(x.box_max, y.box_max));
  EXPECT_EQ(x.max_edge, y.max_edge);
  EXPECT_EQ(x.elements, y.elements);
  EXPECT_EQ(x.vertices, y.vertices);
  EXPECT_EQ(x.flipped, 0u);
  EXPECT_EQ(y.flipped, 0u);
  // Summing n terms of at most |v_max| in two orders: within 2 n eps sum |v_e| of each other.
  double volume_terms = 0.0;
  for (std::size_t e = 0; e < user_mesh.size(); ++e)
    volume_terms += std::abs(
        dot(user_mesh.corner(e, 0), cross(user_mesh.corner(e, 1), user_mesh.corner(e, 2))) / 6.0);
  EXPECT_LE(std::abs(x.volume - y.volume),
            2.0 * double(user_mesh.size()) * std::numeric_limits<double>::epsilon() * volume_terms);
  EXPECT_TRUE(from_slabs.locally_essential_tree() == from_whole.locally_essential_tree());
  EXPECT_EQ(from_slabs.tree()->cells().size(), from_whole.tree()->cells().size());
}

TEST(DistributedMesh, GeneratedSlabsGiveTheWholeMeshsParts) {
  expect_generated_slabs_give_the_whole_meshs_parts(
      4, 40, halo_reach(NearFieldOptions{}, DensityModel::constant, false));
  expect_generated_slabs_give_the_whole_meshs_parts(
      3, 20, halo_reach(NearFieldOptions{}, DensityModel::quadratic, true));
}

// The surface's facts formed from the slabs: the whole mesh's (the nearest element bit for bit;
// the sums within the bound of summing them in another order).
TEST(DistributedMesh, SurfaceFactsFromTheSlabsAreTheWholeMeshs) {
  constexpr double eps = std::numeric_limits<double>::epsilon();
  const int level = 3;
  const double radius = 1.3;
  const Vec3 center{0.3, -0.1, 0.2};
  const Mesh whole = Mesh::from_surface(make_icosphere(level, radius, center), "test");
  const MeshSlab slab = own_icosphere_slab(level, radius, center);
  std::vector<ProblemSpec> specs(3);
  specs[1].kind = ProblemKind::Radiation;
  specs[1].source = center + Vec3{0.1, -0.2, 0.15};
  specs[2].incident = exact::Incident::point_source(center + Vec3{2.0, 0.5, -1.0});
  for (const ProblemSpec& spec : specs) {
    const SurfaceFacts x = surface_facts(MPI_COMM_WORLD, slab, spec),
                       y = surface_facts(whole, spec);
    ASSERT_TRUE(x.is_sphere && y.is_sphere);
    // The fit's sums of V terms of size R^4 (the normal equations, well conditioned on a whole
    // sphere): the centre and radius within V eps R of each other.
    const double bound = double(whole.vertices().size()) * eps * radius;
    EXPECT_LE(norm(x.sphere.center - y.sphere.center), bound);
    EXPECT_LE(std::abs(x.sphere.radius - y.sphere.radius), bound);
    EXPECT_LE(norm(x.sphere.center - center), 1e-12 * radius);
    ASSERT_EQ(x.has_source, y.has_source);
    if (!y.has_source) continue;
    EXPECT_EQ(x.source_distance.distance, y.source_distance.distance);
    EXPECT_EQ(x.source_distance.element_size, y.source_distance.element_size);
    // The solid angles (each at most 2 pi, summing to 4 pi inside and 0 outside; their
    // magnitudes to at most 4 pi either way): within 2 n eps of each other over 4 pi.
    EXPECT_LE(std::abs(x.source_winding - y.source_winding), 2.0 * double(whole.size()) * eps);
    EXPECT_NEAR(x.source_winding, spec.kind == ProblemKind::Radiation ? 1.0 : 0.0, 1e-12);
  }
  // Each vertex once: V in all.
  std::size_t held = slab_vertex_block(MPI_COMM_WORLD, slab).size();
  MPI_Allreduce(MPI_IN_PLACE, &held, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  EXPECT_EQ(held, whole.vertices().size());
}

// Slabs that are not the split, or not a mesh the solver can compute with, are refused on every
// rank, with what is wrong.
TEST(DistributedMesh, BadSlabsAreRefusedOnEveryRank) {
  const fmm::FmmOptions options{.order = 8, .max_leaf = 20};
  const auto refused_with = [&](const MeshSlab& slab, const std::string& needle) {
    try {
      const DistributedMesh local(MPI_COMM_WORLD, slab, "test", 3, options, HaloReach{});
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
      return;
    }
    ADD_FAILURE() << "not refused: " << needle;
  };
  // The last rank holds one element too few.
  MeshSlab short_slab = own_icosphere_slab(2, 1.0);
  if (world_rank() == world_size() - 1) {
    short_slab.corners.resize(short_slab.corners.size() - 3);
    short_slab.vertices.resize(short_slab.vertices.size() - 3);
  }
  refused_with(short_slab, "slab is elements");
  MeshSlab not_finite = own_icosphere_slab(2, 1.0);
  if (world_rank() == world_size() - 1) not_finite.corners.back().y = std::nan("");
  refused_with(not_finite, "non-finite");
  MeshSlab missing_vertex = own_icosphere_slab(2, 1.0);
  if (world_rank() == world_size() - 1) missing_vertex.vertices.back() = 162;
  refused_with(missing_vertex, "missing vertex");
  refused_with(own_icosphere_slab(2, 1e-40), "too small to compute with");
  refused_with(own_icosphere_slab(2, 1.0, Vec3{1e14, 0, 0}), "move it near the origin");
}

// Bad input is refused on every rank.
TEST(DistributedMesh, RejectsBadInputOnEveryRank) {
  const fmm::FmmOptions options{.order = 8, .max_leaf = 20};
  EXPECT_THROW(DistributedMesh(MPI_COMM_WORLD, nullptr, "test", 3, options, HaloReach{}), Error);
  const Mesh user_mesh = Mesh::from_surface(make_icosphere(1, 1.0), "test");
  EXPECT_THROW(DistributedMesh(MPI_COMM_WORLD, &user_mesh, "test", 3, options, HaloReach{-1, 2.5}),
               Error);
}

}  // namespace
}  // namespace fmbem

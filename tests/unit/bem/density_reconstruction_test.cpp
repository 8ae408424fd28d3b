// The quadratic read of the double density: the reconstruction, its point strengths,
// the folded near-field correction (against dense accurate integrals), the FMM against the
// direct backend, and the consistency of the hypersingular operator it exists for.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <vector>

#include "bem_test_support.hpp"
#include "fmbem/bem/density_reconstruction.hpp"
#include "fmbem/bem/direct_layer_potentials.hpp"
#include "fmbem/bem/fmm_layer_potentials.hpp"
#include "fmbem/bem/moment_integrals.hpp"
#include "fmbem/bem/near_field.hpp"
#include "fmbem/bem/point_strengths.hpp"
#include "fmbem/core/error.hpp"
#include "fmbem/mesh/mesh.hpp"

namespace fmbem {
namespace {

using test::random_density;
using test::relative_error;

// The surface of the unit cube, n x n squares a face, two triangles a square.
Mesh cube(int n) {
  Surface s;
  for (int axis = 0; axis < 3; ++axis)
    for (const double side : {0.0, 1.0}) {
      const auto point = [&](double a, double b) {
        Vec3 p;
        double* c[3] = {&p.x, &p.y, &p.z};
        *c[axis] = side;
        *c[(axis + 1) % 3] = a;
        *c[(axis + 2) % 3] = b;
        return p;
      };
      const std::int32_t base = std::int32_t(s.vertices.size());
      for (int i = 0; i <= n; ++i)
        for (int j = 0; j <= n; ++j) s.vertices.push_back(point(double(i) / n, double(j) / n));
      const auto at = [&](int i, int j) { return base + i * (n + 1) + j; };
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
          s.triangles.push_back({at(i, j), at(i + 1, j), at(i + 1, j + 1)});
          s.triangles.push_back({at(i, j), at(i + 1, j + 1), at(i, j + 1)});
        }
    }
  return Mesh::from_surface(s, "cube");
}

// u_e plus the quadratic of element e at y.
cplx read(const DensityReconstruction& r, const std::vector<cplx>& u, std::size_t e,
          const Vec3& y) {
  double m[DensityReconstruction::kTerms];
  r.monomials(e, y, m);
  cplx value = u[e];
  const auto stencil = r.stencil(e);
  for (int t = 0; t < DensityReconstruction::kTerms; ++t) {
    const auto c = r.coefficients(e, t);
    for (std::size_t s = 0; s < stencil.size(); ++s) value += m[t] * c[s] * u[stencil[s]];
  }
  return value;
}

// Elements of a cube face whose vertex neighbours all lie on that face: a quadratic of the
// face's coordinates is read back exactly (to rounding: values of order 1, 1e-12).
TEST(DensityReconstruction, ExactForQuadraticsOnAFlatNeighbourhood) {
  const Mesh mesh = cube(6);
  const DensityReconstruction r(mesh);
  EXPECT_EQ(r.linear_fits(), 0u);
  EXPECT_EQ(r.constant_fits(), 0u);
  const auto quadratic = [](const Vec3& p) {
    return cplx(1.0 + 2.0 * p.x - 3.0 * p.y + 0.5 * p.x * p.x - 1.5 * p.x * p.y + 2.0 * p.y * p.y,
                0.25 * p.x * p.x - p.y);
  };
  std::vector<cplx> u(mesh.size());
  for (std::size_t e = 0; e < mesh.size(); ++e) u[e] = quadratic(mesh.centroids()[e]);
  int checked = 0;
  for (std::size_t e = 0; e < mesh.size(); ++e) {
    bool flat = true;
    for (const std::int32_t o : r.stencil(e))
      flat = flat && std::abs(mesh.centroids()[std::size_t(o)].z - 1.0) < 1e-12;
    if (!flat) continue;
    ++checked;
    EXPECT_EQ(r.stencil(e).size(), 13u) << "a triangle of this mesh has 12 vertex neighbours";
    for (int corner = 0; corner < 3; ++corner) {
      const Vec3 y = mesh.corner(e, corner) * 0.9 + mesh.centroids()[e] * 0.1;
      EXPECT_NEAR(std::abs(read(r, u, e, y) - quadratic(y)), 0.0, 1e-12) << "element " << e;
    }
  }
  EXPECT_EQ(checked, 2 * 4 * 4) << "the inner 4 x 4 squares of the top face";
}

// At the cube's edges (feature edges at the default 60 degrees) the fit is one-sided and
// linear: every element with a corner on an edge has no quadratic terms and no coefficient for
// a neighbour on another face, and reads a density linear in space (so linear on each face,
// with a kink at the edges) exactly, to rounding; the others keep the quadratic fit. With the
// threshold at 180 degrees nothing is a feature and every element is fitted quadratically
// across the edges.
TEST(DensityReconstruction, OneSidedLinearReadNextToFeatureEdges) {
  const int n = 6;
  const Mesh mesh = cube(n);
  const std::vector<std::uint8_t> on_edge = feature_vertices(
      mesh, mesh_edges(mesh), kDefaultFeatureAngleDegrees * std::numbers::pi / 180);
  const DensityReconstruction r(mesh);
  const auto linear = [](const Vec3& p) {
    return cplx(1.0 + 2.0 * p.x - 3.0 * p.y + 0.5 * p.z, p.x);
  };
  std::vector<cplx> u(mesh.size());
  for (std::size_t e = 0; e < mesh.size(); ++e) u[e] = linear(mesh.centroids()[e]);
  std::size_t at_edge = 0;
  for (std::size_t e = 0; e < mesh.size(); ++e) {
    const Triangle& t = mesh.triangles()[e];
    const bool touches =
        on_edge[std::size_t(t[0])] || on_edge[std::size_t(t[1])] || on_edge[std::size_t(t[2])];
    at_edge += touches;
    double quadratic = 0.0, across = 0.0, linear_size = 0.0;
    const auto stencil = r.stencil(e);
    for (int m = 0; m < DensityReconstruction::kTerms; ++m)
      for (std::size_t s = 0; s < stencil.size(); ++s) {
        const double c = std::abs(r.coefficients(e, m)[s]);
        if (m >= 2) quadratic += c;
        if (m < 2) linear_size += c;
        if (dot(mesh.normals()[std::size_t(stencil[s])], mesh.normals()[e]) < 0.5) across += c;
      }
    if (!touches) {
      EXPECT_GT(quadratic, 0.0) << "element " << e;
      continue;
    }
    EXPECT_EQ(quadratic, 0.0) << "element " << e;
    EXPECT_EQ(across, 0.0) << "element " << e;
    EXPECT_GT(linear_size, 0.0) << "element " << e;
    for (int corner = 0; corner < 3; ++corner) {
      const Vec3 y = mesh.corner(e, corner) * 0.9 + mesh.centroids()[e] * 0.1;
      EXPECT_NEAR(std::abs(read(r, u, e, y) - linear(y)), 0.0, 1e-12) << "element " << e;
    }
  }
  // Per face both triangles of the outer ring's 4 (n - 1) squares, and no others.
  EXPECT_EQ(at_edge, std::size_t(6 * 2 * 4 * (n - 1)));
  EXPECT_EQ(r.feature_elements(), at_edge);
  EXPECT_EQ(r.constant_fits(), 0u);
  EXPECT_EQ(r.linear_fits(), 0u);
  const DensityReconstruction across(mesh, std::numbers::pi);
  EXPECT_EQ(across.feature_elements(), 0u);
  for (std::size_t e = 0; e < mesh.size(); ++e) {
    double size = 0.0;
    for (const double c : across.coefficients(e, 4)) size += std::abs(c);
    EXPECT_GT(size, 0.0) << "element " << e;
  }
}

// A constant density has no terms (every row of R sums to zero), on any mesh; the icosphere's
// fits are all quadratic; a tetrahedron's elements see three neighbours only: linear fits.
TEST(DensityReconstruction, ConstantsAndFallbacks) {
  const Mesh sphere = Mesh::from_surface(make_icosphere(3, 1.0), "icosphere");
  const DensityReconstruction r(sphere);
  EXPECT_EQ(r.linear_fits(), 0u);
  for (std::size_t e = 0; e < sphere.size(); ++e)
    for (int t = 0; t < DensityReconstruction::kTerms; ++t) {
      double sum = 0.0, size = 0.0;
      for (const double c : r.coefficients(e, t)) {
        sum += c;
        size += std::abs(c);
      }
      EXPECT_NEAR(sum, 0.0, 1e-13 * size);
    }
  Surface tetrahedron{{{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}},
                      {{0, 2, 1}, {0, 1, 3}, {0, 3, 2}, {1, 2, 3}}};
  // Its edges (109.5 degrees between normals) are feature edges at the default angle: with the
  // threshold at 180 degrees none is, and the fits fall back to linear.
  const DensityReconstruction t(Mesh::from_surface(tetrahedron, "tetrahedron"), std::numbers::pi);
  EXPECT_EQ(t.linear_fits(), 4u);
  EXPECT_EQ(t.constant_fits(), 0u);
}

// A part's reconstruction (a rank of the distributed FMM): the seeds grown by two vertex
// neighbourhoods are fitted, bit for bit as in the whole mesh's, the others not at all; its
// point strengths equal the whole one's at the fitted elements' points.
TEST(DensityReconstruction, APartsFitsAreTheWholeMeshs) {
  const Mesh mesh = Mesh::from_surface(make_icosphere(3, 1.0), "icosphere");
  const std::size_t n = mesh.size();
  const Discretization disc(mesh, 3);
  std::vector<std::uint8_t> seeds(n, 0);
  for (std::size_t e = 0; e < n; ++e) seeds[e] = mesh.centroids()[e].x > 0.6;
  const DensityReconstruction whole(mesh),
      part(mesh, kDefaultFeatureAngleDegrees * std::numbers::pi / 180.0, seeds, 2);
  // Two rings by hand: the elements sharing a corner with a seed, then with one of those.
  std::vector<std::uint8_t> want(seeds);
  for (int ring = 0; ring < 2; ++ring) {
    std::vector<std::uint8_t> corner(mesh.vertices().size(), 0);
    for (std::size_t e = 0; e < n; ++e)
      if (want[e])
        for (int c = 0; c < 3; ++c) corner[std::size_t(mesh.triangles()[e][c])] = 1;
    for (std::size_t e = 0; e < n; ++e)
      for (int c = 0; c < 3; ++c) want[e] |= corner[std::size_t(mesh.triangles()[e][c])];
  }
  std::size_t fitted = 0, seeded = 0;
  for (std::size_t e = 0; e < n; ++e) {
    seeded += seeds[e];
    ASSERT_EQ(part.fitted(e), want[e] != 0) << e;
    if (!want[e]) continue;
    ++fitted;
    ASSERT_TRUE(std::ranges::equal(part.stencil(e), whole.stencil(e))) << e;
    for (int t = 0; t < DensityReconstruction::kTerms; ++t)
      ASSERT_TRUE(std::ranges::equal(part.coefficients(e, t), whole.coefficients(e, t))) << e;
  }
  EXPECT_GT(fitted, seeded);
  EXPECT_LT(fitted, n / 2);
  EXPECT_LT(part.memory_bytes(), whole.memory_bytes());
  const auto u = random_density(n, 7);
  const std::vector<cplx> from_part = ReconstructedPointStrengths(disc, part)(u),
                          from_whole = ReconstructedPointStrengths(disc, whole)(u);
  for (std::size_t q = 0; q < from_part.size(); ++q)
    if (part.fitted(q / disc.points_per_element())) ASSERT_EQ(from_part[q], from_whole[q]) << q;
  EXPECT_THROW(DensityReconstruction(mesh, 1.0, std::vector<std::uint8_t>(n - 1, 1), 2), Error);
}

// ReconstructedPointStrengths: weight_q times the read at the quadrature point, to rounding.
TEST(DensityReconstruction, PointStrengthsAreTheWeightedRead) {
  const Mesh mesh = Mesh::from_surface(make_icosphere(2, 1.0), "icosphere");
  const Discretization disc(mesh, 6);
  const DensityReconstruction r(mesh);
  const ReconstructedPointStrengths strengths(disc, r);
  const auto u = random_density(mesh.size(), 5);
  const std::vector<cplx> s = strengths(u);
  ASSERT_EQ(s.size(), disc.quadrature_points().size());
  for (std::size_t q = 0; q < s.size(); ++q) {
    const std::size_t e = q / disc.points_per_element();
    const cplx want = disc.quadrature_weights()[q] * read(r, u, e, disc.quadrature_points()[q]);
    EXPECT_NEAR(std::abs(s[q] - want), 0.0, 1e-14 * std::abs(want) + 1e-16);
  }
  EXPECT_TRUE(strengths({}).empty());
}

// The strengths of some points alone (what a part of the distributed FMM reads), constant and
// quadratic read: each the same operations as the whole array's entry, so bitwise equal, in the
// order given (descending and repeated points included).
TEST(DensityReconstruction, StrengthsOfSomePointsAreTheWholeArraysEntries) {
  const Mesh mesh = Mesh::from_surface(make_icosphere(2, 1.0), "icosphere");
  const Discretization disc(mesh, 3);
  const DensityReconstruction r(mesh);
  const ReconstructedPointStrengths reconstructed(disc, r);
  const auto u = random_density(mesh.size(), 8);
  const std::vector<cplx> whole_constant = point_strengths(disc, u),
                          whole_quadratic = reconstructed(u);
  std::vector<std::size_t> points;
  for (std::size_t q = 0; q < whole_constant.size(); q += 7) points.push_back(q);
  points.push_back(whole_constant.size() - 1);
  points.push_back(5);
  points.push_back(5);
  const std::vector<cplx> constant = point_strengths(disc, u, points),
                          quadratic = reconstructed(u, points);
  ASSERT_EQ(constant.size(), points.size());
  ASSERT_EQ(quadratic.size(), points.size());
  for (std::size_t i = 0; i < points.size(); ++i) {
    EXPECT_EQ(constant[i], whole_constant[points[i]]) << points[i];
    EXPECT_EQ(quadratic[i], whole_quadratic[points[i]]) << points[i];
  }
  EXPECT_TRUE(point_strengths(disc, {}, points).empty());
  EXPECT_TRUE(reconstructed({}, points).empty());
}

// A column space (what a part of the distributed FMM reads: LayerPotentials::column_elements):
// the strengths, the strength matrix's and the correction's products from a density of those
// elements' entries alone are bitwise those from the whole density (the same operations, the
// entries found through the renumbered columns); a point or a column outside it is refused.
TEST(DensityReconstruction, ColumnSpaceProductsAreTheWholeOnes) {
  const Mesh mesh = Mesh::from_surface(make_icosphere(2, 1.0), "icosphere");
  const Discretization disc(mesh, 3);
  const std::size_t n = mesh.size(), m = disc.points_per_element();
  const DensityReconstruction r(mesh);
  const RowRange rows{40, 90};
  NearFieldOptions options;
  NearFieldCorrection renumbered(disc, 2.0, rows, options, cplx(0.0, 0.5), &r);
  const NearFieldCorrection whole(disc, 2.0, rows, options, cplx(0.0, 0.5), &r);
  // The columns: the correction's, the rows, and the stencils of the points read below.
  std::vector<char> marked(n, 0);
  for (std::int32_t j : whole.columns()) marked[std::size_t(j)] = 1;
  std::vector<std::size_t> points;
  for (std::size_t e = rows.begin; e < rows.end; e += 3)
    for (std::size_t l = 0; l < m; ++l) points.push_back(e * m + l);
  for (std::size_t q : points)
    for (std::int32_t j : r.stencil(q / m)) marked[std::size_t(j)] = 1;
  std::vector<std::size_t> columns;
  for (std::size_t e = 0; e < n; ++e)
    if (marked[e]) columns.push_back(e);
  ASSERT_LT(columns.size(), n);
  const auto u = random_density(n, 9), v = random_density(n, 10);
  std::vector<cplx> u_columns, v_columns;
  for (std::size_t e : columns) {
    u_columns.push_back(u[e]);
    v_columns.push_back(v[e]);
  }
  // The correction.
  renumbered.renumber_columns(ColumnEntries(columns));
  std::vector<cplx> y_whole(rows.size()), y_columns(rows.size());
  whole.add_to(u, v, y_whole);
  renumbered.add_to(u_columns, v_columns, y_columns);
  EXPECT_TRUE(y_whole == y_columns);
  for (std::size_t at = 0; at < whole.columns().size(); ++at)
    ASSERT_EQ(columns[std::size_t(renumbered.columns()[at])], std::size_t(whole.columns()[at]));
  // The constant read's strengths with each point's entry, and the quadratic read's.
  std::vector<std::int32_t> point_columns;
  for (std::size_t q : points)
    point_columns.push_back(
        std::int32_t(std::lower_bound(columns.begin(), columns.end(), q / m) - columns.begin()));
  EXPECT_TRUE(point_strengths(disc, u, points) ==
              point_strengths(disc, u_columns, points, point_columns));
  ReconstructedPointStrengths reconstructed(disc, r);
  const std::vector<cplx> from_whole = reconstructed(u, points);
  reconstructed.renumber_columns(ColumnEntries(columns));
  EXPECT_TRUE(reconstructed.reads_columns_only(points));
  EXPECT_TRUE(from_whole == reconstructed(u_columns, points));
  // An element whose stencil leaves the columns.
  std::size_t outside = 0;
  while (std::ranges::all_of(r.stencil(outside),
                             [&](std::int32_t j) { return marked[std::size_t(j)] != 0; }))
    ++outside;
  EXPECT_FALSE(reconstructed.reads_columns_only(std::vector<std::size_t>{outside * m}));
  // Columns without one of the correction's, or not ascending.
  NearFieldCorrection short_of_one(disc, 2.0, rows, options);
  std::vector<std::size_t> fewer(columns);
  fewer.erase(std::find(fewer.begin(), fewer.end(), std::size_t(short_of_one.columns()[0])));
  EXPECT_THROW(short_of_one.renumber_columns(ColumnEntries(fewer)), Error);
  std::vector<std::size_t> descending(columns.rbegin(), columns.rend());
  EXPECT_THROW(ColumnEntries{descending}, Error);
  EXPECT_THROW(point_strengths(disc, u, points, std::vector<std::int32_t>(1, 0)), Error);
}

// With every pair of icosphere:1 close (near radius 10) the operator with the quadratic read is
// the dense matrix of accurate integrals: A_ij = sum over l of the constant entry at j = l plus
// sum over m of the monomial entries times R's coefficient of u_j, from hypersingular_integrals
// and monomial_moments. The regular sum and the correction's subtraction cancel to rounding
// (sums of about 80 terms of size up to |alpha N_ii| ~ 10): 1e-12 as in
// BurtonMillerLayers.DirectEqualsDenseAccurateOperatorWhenAllPairsAreClose. The near-field
// block (near_block: regular_pair plus the correction) holds the same entries, and the
// double-layer diagonal is A_ii (all pairs close).
TEST(DensityReconstruction, FoldedCorrectionEqualsDenseAccurateOperator) {
  const Mesh mesh = Mesh::from_surface(make_icosphere(1, 1.0), "icosphere");
  const std::size_t n = mesh.size();
  const Discretization disc(mesh, 6);
  const RowRange rows{0, n};
  NearFieldOptions near;
  near.near_factor = 10.0;
  const GaussLegendre angular(near.angular_points), radial(6);
  const DensityReconstruction r(mesh);
  const auto dd = random_density(n, 6), sd = random_density(n, 7);
  for (const double k : {0.0, 8.0})
    for (const cplx alpha : {cplx(0.0), cplx(0.0, 1.0 / 8.0)}) {
      std::vector<cplx> dense(n * n, 0.0);
      for (std::size_t i = 0; i < n; ++i)
        for (std::size_t l = 0; l < n; ++l) {
          const Vec3 &a = mesh.corner(l, 0), &b = mesh.corner(l, 1), &c = mesh.corner(l, 2);
          const Vec3 &x = mesh.centroids()[i], &n_x = mesh.normals()[i];
          const HypersingularIntegrals h = hypersingular_integrals(k, a, b, c, x, n_x, angular);
          dense[i * n + l] += h.double_layer + alpha * h.hypersingular;
          const MonomialMoments m = monomial_moments(k, a, b, c, r.origin(l), r.axis(l, 0),
                                                     r.axis(l, 1), x, n_x, h, angular, radial);
          const auto stencil = r.stencil(l);
          for (int t = 0; t < DensityReconstruction::kTerms; ++t)
            for (std::size_t s = 0; s < stencil.size(); ++s)
              dense[i * n + std::size_t(stencil[s])] +=
                  (m.double_layer[t] + alpha * m.hypersingular[t]) * r.coefficients(l, t)[s];
        }
      std::vector<cplx> want(n, 0.0);
      for (std::size_t i = 0; i < n; ++i)
        for (std::size_t j = 0; j < n; ++j) want[i] += dense[i * n + j] * dd[j];
      const DirectLayerPotentials layers(disc, k, rows, near, alpha, DensityModel::quadratic);
      ASSERT_NE(layers.reconstruction(), nullptr);
      std::vector<cplx> y(n);
      layers.apply(dd, {}, y);
      EXPECT_LT(relative_error(y, want), 1e-12) << "k " << k << " alpha " << alpha;
      // The single layer keeps the constant read: as without the reconstruction.
      const DirectLayerPotentials constant(disc, k, rows, near, alpha);
      std::vector<cplx> ys(n), ys_constant(n);
      layers.apply({}, sd, ys);
      constant.apply({}, sd, ys_constant);
      EXPECT_LT(relative_error(ys, ys_constant), 1e-13);
      const std::vector<cplx> block = layers.near_block({0.0, 1.0, 0.0});
      const auto row_start = layers.near_field().row_start();
      const auto columns = layers.near_field().columns();
      double block_error = 0.0, block_size = 0.0;
      for (std::size_t i = 0; i < n; ++i) {
        EXPECT_EQ(row_start[i + 1] - row_start[i], std::int64_t(n)) << "every column is close";
        for (std::int64_t at = row_start[i]; at < row_start[i + 1]; ++at) {
          const cplx want_entry = dense[i * n + std::size_t(columns[std::size_t(at)])];
          block_error = std::max(block_error, std::abs(block[std::size_t(at)] - want_entry));
          block_size = std::max(block_size, std::abs(want_entry));
        }
        EXPECT_NEAR(std::abs(layers.double_layer_diagonal()[i] - dense[i * n + i]), 0.0,
                    1e-12 * block_size);
      }
      EXPECT_LT(block_error, 1e-12 * block_size);
    }
}

// What preconditioners read (near_block on the correction's pattern, regular_entry elsewhere)
// assembles the operator that apply applies, with the quadratic read, its folded close and
// refined pairs and their stencils: bm at k = 8 on icosphere:2 (close radius 2.5, refined 4). Both
// sides sum the same terms in other orders: 1e-12 relative (entries up to |alpha N_ii| ~ 10
// against results of order 1 to 10).
TEST(DensityReconstruction, NearBlockAndRegularEntriesAssembleTheOperator) {
  const Mesh mesh = Mesh::from_surface(make_icosphere(2, 1.0), "icosphere");
  const std::size_t n = mesh.size();
  const Discretization disc(mesh, 6);
  const RowRange rows{0, n};
  const cplx alpha(0.0, 1.0 / 8.0);
  const DirectLayerPotentials layers(disc, 8.0, rows, NearFieldOptions{}, alpha,
                                     DensityModel::quadratic);
  const OperatorCoefficients c{0.5, -1.0, 0.0};  // the rigid operator 1/2 - (D + alpha N)
  const std::vector<cplx> block = layers.near_block(c);
  const auto row_start = layers.near_field().row_start();
  const auto columns = layers.near_field().columns();
  std::vector<cplx> dense(n * n);
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) dense[i * n + j] = layers.regular_entry(c, i, j);
    dense[i * n + i] += c.identity;
    for (std::int64_t at = row_start[i]; at < row_start[i + 1]; ++at)
      dense[i * n + std::size_t(columns[std::size_t(at)])] = block[std::size_t(at)];
  }
  EXPECT_GT(layers.near_field().nonzeros(), 4 * 15 * n) << "the refined pairs and stencils";
  const auto u = random_density(n, 10);
  std::vector<cplx> want(n, 0.0), got(n);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) want[i] += dense[i * n + j] * u[j];
  const BoundaryOperator op(layers, c);
  op.apply(u, got);
  EXPECT_LT(relative_error(got, want), 1e-12);
}

// The FMM's regular sum with the reconstructed dipole strengths against the direct one (both
// with the quadratic read), bm at k = 8 on icosphere:3: the error falls with p and stays within
// the constant read's bounds of BurtonMillerLayers.FmmMatchesDirect (twice 5.46e-4 at p = 8 and
// 3.13e-7 at p = 16; the point strengths are the same kind of sources).
TEST(DensityReconstruction, FmmMatchesDirect) {
  const Mesh mesh = Mesh::from_surface(make_icosphere(3, 1.0), "icosphere");
  const Discretization disc(mesh, 6);
  const RowRange rows{0, disc.size()};
  const NearFieldOptions near;
  const double k = 8.0;
  const cplx alpha(0.0, 1.0 / k);
  const DirectLayerPotentials direct(disc, k, rows, near, alpha, DensityModel::quadratic);
  const auto dd = random_density(disc.size(), 8);
  std::vector<cplx> reference(disc.size());
  direct.apply(dd, {}, reference);
  double previous = 1.0;
  for (const int p : {8, 16}) {
    const FmmLayerPotentials fmm(disc, k, rows, near, fmm::FmmOptions{p, 0.0, 30}, nullptr, alpha,
                                 DensityModel::quadratic);
    std::vector<cplx> y(disc.size());
    fmm.apply(dd, {}, y);
    const double error = relative_error(y, reference);
    std::printf("quadratic read, bm k %g p %d error %.3e\n", k, p, error);
    EXPECT_LT(error, previous);
    previous = error;
    EXPECT_LT(error, p == 8 ? 2.0 * 5.46e-4 : 2.0 * 3.13e-7);
  }
}

// Why the constant read fails and what cures it: on the unit sphere
// N Y_n = -n(n+1)/(2n+1) Y_n (Laplace). With
// the constant read the discrete N is off by about 3 % at every level (measured 3.0e-2 to
// 3.2e-2, bench/results/hypersingular_consistency.md); with the quadratic read (and the 6-point
// rule and refined tier it needs) the error falls like h^2 (a factor 4 a level asymptotically;
// measured 2026-11-24 for Y_1: 1.81e-2, 4.73e-3, 1.40e-3 on icosphere:2, 3, 4, ratios 3.8 and
// 3.4). Required: more than 2.5 a level for Y_1 and Y_2, and the constant read's error above
// 2.5e-2 at every level (the inconsistency the test exists to show gone).
TEST(DensityReconstruction, HypersingularOperatorConvergesOnTheSphere) {
  std::vector<double> previous(2, 0.0);
  for (const int level : {2, 3, 4}) {
    const Mesh mesh = Mesh::from_surface(make_icosphere(level, 1.0), "icosphere");
    const Discretization disc(mesh, 6);
    const RowRange rows{0, mesh.size()};
    const NearFieldOptions near;
    for (const DensityModel model : {DensityModel::constant, DensityModel::quadratic}) {
      // N = (D + N) - D: the layers with coupling 1 and 0.
      const DirectLayerPotentials d(disc, 0.0, rows, near, 0.0, model);
      const DirectLayerPotentials d_plus_n(disc, 0.0, rows, near, 1.0, model);
      for (const int degree : {1, 2}) {
        std::vector<cplx> u(mesh.size()), y0(mesh.size()), y1(mesh.size());
        for (std::size_t e = 0; e < mesh.size(); ++e) {
          const Vec3 p = normalized(mesh.centroids()[e]);
          u[e] = degree == 1 ? p.z : p.x * p.y;
        }
        d.apply(u, {}, y0);
        d_plus_n.apply(u, {}, y1);
        const double eigenvalue = -double(degree * (degree + 1)) / (2 * degree + 1);
        double error = 0.0, size = 0.0;
        for (std::size_t e = 0; e < mesh.size(); ++e) {
          const double w = mesh.areas()[e];
          error += w * std::norm(y1[e] - y0[e] - eigenvalue * u[e]);
          size += w * std::norm(eigenvalue * u[e]);
        }
        const double relative = std::sqrt(error / size);
        std::printf("icosphere:%d %s Y_%d: %.3e\n", level,
                    model == DensityModel::constant ? "constant" : "quadratic", degree, relative);
        if (model == DensityModel::constant) {
          EXPECT_GT(relative, 2.5e-2);
        } else {
          if (level > 2)
            EXPECT_GT(previous[std::size_t(degree - 1)] / relative, 2.5) << "level " << level;
          previous[std::size_t(degree - 1)] = relative;
        }
      }
    }
  }
}

}  // namespace
}  // namespace fmbem

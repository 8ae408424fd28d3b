// The Burton-Miller layer potentials (S + alpha D', D + alpha N) of the direct and the FMM
// backends against dense matrices of the accurate panel integrals (hypersingular_integrals).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "bem_test_support.hpp"
#include "fmbem/bem/direct_layer_potentials.hpp"
#include "fmbem/bem/fmm_layer_potentials.hpp"
#include "fmbem/bem/hypersingular_integrals.hpp"
#include "fmbem/mesh/mesh.hpp"

namespace fmbem {
namespace {

using test::random_density;
using test::relative_error;

// y = (D + alpha N) dd + (S + alpha D') sd with every pair integrated accurately.
std::vector<cplx> dense_reference(const Mesh& mesh, double k, cplx alpha,
                                  const std::vector<cplx>& dd, const std::vector<cplx>& sd,
                                  const GaussLegendre& angular) {
  std::vector<cplx> y(mesh.size());
  for (std::size_t i = 0; i < mesh.size(); ++i)
    for (std::size_t j = 0; j < mesh.size(); ++j) {
      const HypersingularIntegrals h =
          hypersingular_integrals(k, mesh.corner(j, 0), mesh.corner(j, 1), mesh.corner(j, 2),
                                  mesh.centroids()[i], mesh.normals()[i], angular);
      y[i] += (h.double_layer + alpha * h.hypersingular) * dd[j] +
              (h.single_layer + alpha * h.adjoint_double_layer) * sd[j];
    }
  return y;
}

// With the near radius 10 element radii every pair of icosphere:1 (radius 0.37, diameter 2) is
// close: the regular rule's sum and the correction's subtraction of the same sum cancel, so
// the operator equals the dense accurate one up to rounding in sums of about 80 terms of
// magnitude up to |alpha N_ii| ~ 10 against results of order 1-10: 1e-12 relative leaves a
// factor of 100 over the 1e-14 expected and fails at once on a wrong sign, a lost alpha or a
// misplaced diagonal (changes of order 1e-2 and more).
TEST(BurtonMillerLayers, DirectEqualsDenseAccurateOperatorWhenAllPairsAreClose) {
  const Mesh mesh = Mesh::from_surface(make_icosphere(1, 1.0), "icosphere");
  const Discretization disc(mesh, 3);
  const RowRange rows{0, disc.size()};
  NearFieldOptions near;
  near.near_factor = 10.0;
  const GaussLegendre angular(near.angular_points);
  const auto dd = random_density(disc.size(), 1), sd = random_density(disc.size(), 2);
  for (const double k : {2.0, 8.0})
    for (const cplx alpha : {cplx(0.0, 1.0 / k), cplx(0.3, -0.7)}) {
      const DirectLayerPotentials layers(disc, k, rows, near, alpha);
      EXPECT_EQ(layers.coupling(), alpha);
      std::vector<cplx> y(disc.size());
      layers.apply(dd, sd, y);
      const std::vector<cplx> reference = dense_reference(mesh, k, alpha, dd, sd, angular);
      EXPECT_LT(relative_error(y, reference), 1e-12) << "k " << k << " alpha " << alpha;
      // Each layer alone, and the diagonals (the self terms of the two operators).
      std::vector<cplx> only_double(disc.size()), only_single(disc.size()), zero(disc.size());
      layers.apply(dd, {}, only_double);
      layers.apply({}, sd, only_single);
      EXPECT_LT(relative_error(only_double, dense_reference(mesh, k, alpha, dd, zero, angular)),
                1e-12);
      EXPECT_LT(relative_error(only_single, dense_reference(mesh, k, alpha, zero, sd, angular)),
                1e-12);
      for (std::size_t i = 0; i < disc.size(); ++i) {
        const HypersingularIntegrals self =
            hypersingular_integrals(k, mesh.corner(i, 0), mesh.corner(i, 1), mesh.corner(i, 2),
                                    mesh.centroids()[i], mesh.normals()[i], angular);
        EXPECT_NEAR(std::abs(layers.double_layer_diagonal()[i] -
                             (self.double_layer + alpha * self.hypersingular)),
                    0.0, 1e-13 * std::abs(self.hypersingular));
        EXPECT_NEAR(std::abs(layers.single_layer_diagonal()[i] - self.single_layer), 0.0, 1e-15);
      }
    }
}

// The FMM's regular sum with the target-normal derivative (L2P gradient and the near kernels'
// derivatives) against the direct one, k = 8 on icosphere:3: the error must fall with p and be
// no worse than the conventional operator's at the same p and mesh (FmmOperator's bounds in
// fmm_layer_potentials_test.cpp: twice its measured 5.46e-4 at p = 8 and 3.13e-7 at p = 16).
// Measured for Burton-Miller 2026-11-24: 9.7e-3, 7.0e-5, 1.5e-6, 8.5e-8 at p = 4, 8, 12, 16
// (the gradient loses a degree, but alpha N dominates the result's size).
TEST(BurtonMillerLayers, FmmMatchesDirect) {
  const Mesh mesh = Mesh::from_surface(make_icosphere(3, 1.0), "icosphere");
  const Discretization disc(mesh, 3);
  const RowRange rows{0, disc.size()};
  const NearFieldOptions near;
  const double k = 8.0;
  const cplx alpha(0.0, 1.0 / k);
  const DirectLayerPotentials direct(disc, k, rows, near, alpha);
  const auto dd = random_density(disc.size(), 3), sd = random_density(disc.size(), 4);
  std::vector<cplx> reference(disc.size());
  direct.apply(dd, sd, reference);
  double previous = 1.0;
  for (const int p : {4, 8, 12, 16}) {
    const FmmLayerPotentials fmm(disc, k, rows, near, fmm::FmmOptions{p, 0.0, 30}, nullptr, alpha);
    std::vector<cplx> y(disc.size());
    fmm.apply(dd, sd, y);
    const double error = relative_error(y, reference);
    std::printf("bm k %g p %d error %.3e\n", k, p, error);
    EXPECT_LT(error, previous) << "p " << p;
    previous = error;
    if (p == 8) EXPECT_LT(error, 2.0 * 5.46e-4);
    if (p == 16) EXPECT_LT(error, 2.0 * 3.13e-7);
  }
}

// The normal derivatives apart (LayerCoupling::derivative_apart: D u + S q, then N u + D' q).
// Direct, every pair close: against the dense accurate operators (the derivative part as the
// dense coupling-1 operator minus the coupling-0 one, exact in exact arithmetic), at the first
// test's 1e-12. Then, for both backends and both reads of the double density, the two outputs
// against the combined layers: value + alpha derivative against the coupling-alpha layers, value
// against the conventional ones, and the diagonals likewise. The same integrals and sums grouped
// apart differ only by rounding (sums of at most a few hundred terms of the row's scale, and the
// same FMM pass): 1e-12 relative, against changes of 1e-3 and more for a misplaced part.
TEST(BurtonMillerLayers, ApartGivesTheOperatorsAndTheirDerivatives) {
  const LayerCoupling apart = LayerCoupling::derivative_apart();
  {
    const Mesh mesh = Mesh::from_surface(make_icosphere(1, 1.0), "icosphere");
    const Discretization disc(mesh, 3);
    const std::size_t n = disc.size();
    NearFieldOptions near;
    near.near_factor = 10.0;
    const GaussLegendre angular(near.angular_points);
    const auto dd = random_density(n, 5), sd = random_density(n, 6);
    const double k = 8.0;
    const DirectLayerPotentials layers(disc, k, RowRange{0, n}, near, apart);
    EXPECT_EQ(layers.outputs(), 2);
    EXPECT_EQ(layers.coupling(), cplx(0.0));
    std::vector<cplx> y(2 * n), short_y(n);
    EXPECT_THROW(layers.apply(dd, sd, short_y), Error);
    layers.apply(dd, sd, y);
    const std::vector<cplx> value = dense_reference(mesh, k, 0.0, dd, sd, angular);
    const std::vector<cplx> with_one = dense_reference(mesh, k, 1.0, dd, sd, angular);
    std::vector<cplx> derivative(n);
    for (std::size_t i = 0; i < n; ++i) derivative[i] = with_one[i] - value[i];
    EXPECT_LT(relative_error(std::vector<cplx>(y.begin(), y.begin() + n), value), 1e-12);
    EXPECT_LT(relative_error(std::vector<cplx>(y.begin() + n, y.end()), derivative), 1e-12);
  }
  const Mesh mesh = Mesh::from_surface(make_icosphere(3, 1.0), "icosphere");
  const std::size_t n = mesh.size();
  const RowRange rows{0, n};
  const NearFieldOptions near;
  const double k = 8.0;
  const cplx alpha(0.0, 1.0 / k);
  const auto dd = random_density(n, 7), sd = random_density(n, 8);
  for (const DensityModel model : {DensityModel::constant, DensityModel::quadratic}) {
    const Discretization disc(mesh, model == DensityModel::quadratic ? 6 : 3);
    const auto check = [&](const LayerPotentials& plain, const LayerPotentials& combined,
                           const LayerPotentials& parts, const char* backend) {
      std::vector<cplx> y0(n), y_alpha(n), y(2 * n), joined(n);
      plain.apply(dd, sd, y0);
      combined.apply(dd, sd, y_alpha);
      parts.apply(dd, sd, y);
      for (std::size_t i = 0; i < n; ++i) joined[i] = y[i] + alpha * y[n + i];
      const bool quadratic = model == DensityModel::quadratic;
      EXPECT_LT(relative_error(std::vector<cplx>(y.begin(), y.begin() + n), y0), 1e-12)
          << backend << " " << quadratic;
      EXPECT_LT(relative_error(joined, y_alpha), 1e-12) << backend << " " << quadratic;
      std::vector<cplx> single(n), dbl(n);
      for (std::size_t i = 0; i < n; ++i) {
        single[i] = parts.single_layer_diagonal()[i] + alpha * parts.single_layer_diagonal()[n + i];
        dbl[i] = parts.double_layer_diagonal()[i] + alpha * parts.double_layer_diagonal()[n + i];
      }
      EXPECT_LT(relative_error(single, combined.single_layer_diagonal()), 1e-12) << backend;
      EXPECT_LT(relative_error(dbl, combined.double_layer_diagonal()), 1e-12) << backend;
    };
    check(DirectLayerPotentials(disc, k, rows, near, 0.0, model),
          DirectLayerPotentials(disc, k, rows, near, alpha, model),
          DirectLayerPotentials(disc, k, rows, near, apart, model), "direct");
    const fmm::FmmOptions options{12, 0.0, 30};
    const FmmLayerPotentials fmm_apart(disc, k, rows, near, options, nullptr, apart, model);
    check(FmmLayerPotentials(disc, k, rows, near, options, nullptr, 0.0, model),
          FmmLayerPotentials(disc, k, rows, near, options, nullptr, alpha, model), fmm_apart,
          "fmm");
    EXPECT_THROW(fmm_apart.near_block(OperatorCoefficients{}), Error);
  }
}

}  // namespace
}  // namespace fmbem

// The screened kernel's layers (fmm::Wavenumber::screened): the regularised Burton-Miller
// formulation's S~ = S_(i kappa).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "bem_test_support.hpp"
#include "fmbem/bem/density_reconstruction.hpp"
#include "fmbem/bem/direct_layer_potentials.hpp"
#include "fmbem/bem/fmm_layer_potentials.hpp"
#include "fmbem/core/error.hpp"
#include "fmbem/mesh/mesh.hpp"

namespace fmbem {
namespace {

using test::random_density;
using test::relative_error;

// S_(i kappa) of the density 1 on the unit sphere, at a point of it: with r^2 = 2 - 2 cos(theta),
// r dr = sin(theta) dtheta, the integral of exp(-kappa r) / (4 pi r) 2 pi r dr / r over
// r in [0, 2] is (1 - exp(-2 kappa)) / (2 kappa).
double sphere_single_layer_of_one(double kappa) {
  return -std::expm1(-2.0 * kappa) / (2.0 * kappa);
}

// The 3-point rule and the centroid rule, direct and FMM, against the exact value. With the
// 3-point rule the error is the flat icosphere's, O(h^2) (its centroids lie inside the sphere by
// O(h^2), its area short by O(h^2)): it must fall about 4 times a level (at least 3, allowing the
// next term). The centroid rule's error on the elements beyond the corrected ones, (R / d)^2 of
// each at distance d >= 2.5 R with signs that vary with the triangles' shapes, sums to O(h) with
// an erratic constant (measured 1.4e-3 .. 5.3e-3 here): held to 1e-2, where a wrong self term or
// a lost correction is several per cent (the self term alone is 5 % of S[1] on icosphere:2,
// 0.054 by the equilateral closed form). The regulariser
// needs no more: its S~ is the same on both sides of the equation. The FMM (p = 8) against the
// direct sum: order_for_tolerance's calibrated 2.6e-3, which the screened kernel's terms keep
// (tests/unit/fmm/screened_fmm_test.cpp).
TEST(ScreenedLayers, SingleLayerOfOneOnTheSphere) {
  for (double kappa : {0.5, 4.0}) {
    const fmm::Wavenumber k = fmm::Wavenumber::screened(kappa);
    const double exact = sphere_single_layer_of_one(kappa);
    double previous = 1.0;
    for (int level : {2, 3, 4}) {
      const Mesh mesh = Mesh::from_surface(make_icosphere(level, 1.0), "sphere");
      for (int points : {1, 3}) {
        const Discretization disc(mesh, points);
        const RowRange rows{0, disc.size()};
        const NearFieldOptions near;
        const DirectLayerPotentials direct(disc, k, rows, near);
        const FmmLayerPotentials fast(disc, k, rows, near, fmm::FmmOptions{8, 0.0, 30});
        const std::vector<cplx> zero(disc.size(), 0.0), one(disc.size(), 1.0);
        std::vector<cplx> y(disc.size()), z(disc.size());
        direct.apply(zero, one, y);
        fast.apply(zero, one, z);
        double error = 0.0, imaginary = 0.0;
        for (const cplx& v : y) {
          error = std::max(error, std::abs(v.real() - exact) / exact);
          imaginary = std::max(imaginary, std::abs(v.imag()));
        }
        const double fmm_error = relative_error(z, y);
        std::printf("kappa %g icosphere:%d %d points: max error %.3e, FMM against direct %.2e\n",
                    kappa, level, points, error, fmm_error);
        EXPECT_EQ(imaginary, 0.0);
        EXPECT_LE(fmm_error, 2.6e-3);
        if (points == 1) {
          EXPECT_LE(error, 1e-2) << "level " << level;
        } else {
          EXPECT_LT(error, previous / 3.0) << "level " << level;
          previous = error;
        }
      }
    }
  }
}

// The FMM and the direct layers on random densities of both layers, the screened kernel at
// p = 8 and 16: order_for_tolerance's calibration for the Laplace kernel holds (the terms are
// bounded by Laplace's), 2.6e-3 and 1.5e-6.
TEST(ScreenedLayers, FmmMatchesTheDirectSum) {
  const Mesh mesh = Mesh::from_surface(make_icosphere(3, 1.0), "sphere");
  const Discretization disc(mesh, 3);
  const RowRange rows{0, disc.size()};
  const NearFieldOptions near;
  const fmm::Wavenumber k = fmm::Wavenumber::screened(3.0);
  const DirectLayerPotentials direct(disc, k, rows, near);
  const auto dd = random_density(disc.size(), 1), sd = random_density(disc.size(), 2);
  std::vector<cplx> reference(disc.size());
  direct.apply(dd, sd, reference);
  for (int p : {8, 16}) {
    const FmmLayerPotentials fast(disc, k, rows, near, fmm::FmmOptions{p, 0.0, 30});
    std::vector<cplx> y(disc.size());
    fast.apply(dd, sd, y);
    const double error = relative_error(y, reference);
    std::printf("p %d: %.3e\n", p, error);
    EXPECT_LE(error, p == 8 ? 2.6e-3 : 1.5e-6);
    EXPECT_NE(fast.fmm().describe().find("screened, kappa = 3"), std::string::npos);
  }
}

// What the screened layers do not have: Burton-Miller's couplings, the quadratic read and the
// near block, each one clear error.
TEST(ScreenedLayers, WhatTheyLackIsAClearError) {
  const Mesh mesh = Mesh::from_surface(make_icosphere(1, 1.0), "sphere");
  const Discretization disc(mesh, 3);
  const RowRange rows{0, disc.size()};
  const NearFieldOptions near;
  const fmm::Wavenumber k = fmm::Wavenumber::screened(2.0);
  const auto message = [&](auto&& make) {
    try {
      make();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string lacking =
      "the near-field correction of the screened kernel: S and D with the constant read alone";
  EXPECT_EQ(message([&] { DirectLayerPotentials(disc, k, rows, near, cplx(0.0, 0.5)); }), lacking);
  EXPECT_EQ(
      message([&] { DirectLayerPotentials(disc, k, rows, near, {}, DensityModel::quadratic); }),
      lacking);
  const DirectLayerPotentials layers(disc, k, rows, near);
  EXPECT_EQ(message([&] { layers.near_block(OperatorCoefficients{}); }),
            "layer potentials: the near block of the screened kernel's layers (they serve the "
            "regulariser's product alone)");
}

}  // namespace
}  // namespace fmbem

// The screened (Yukawa) kernel exp(-kappa r) / (4 pi r) as the FMM's k = i kappa: its radial
// functions, its addition theorem, its direct sum and the FMM against that sum.
#include <gtest/gtest.h>

#include <boost/math/special_functions/bessel.hpp>
#include <cmath>
#include <cstdio>
#include <numbers>
#include <numeric>
#include <ostream>
#include <random>
#include <vector>

#include "fmbem/fmm/expansions.hpp"
#include "fmbem/fmm/fmm.hpp"
#include "point_sets.hpp"

namespace fmbem::fmm {
namespace {

using testing::make_points;
using testing::PointSet;
using testing::relative_error;
using testing::skip_radius;

double odd_factorial(int n) {  // (2n - 1)!!
  double f = 1.0;
  for (int i = 1; i <= n; ++i) f *= 2.0 * i - 1.0;
  return f;
}

// jhat_n(i y) = sqrt(pi / (2y)) I_(n+1/2)(y) (2n+1)!! / y^n and hhat_n(i y) = (2/pi)
// sqrt(pi / (2y)) K_(n+1/2)(y) y^(n+1) / (2n-1)!! (j_n(iy) = i^n sqrt(pi/(2y)) I_(n+1/2)(y),
// h_n(iy) = -(2/pi) i^-n sqrt(pi/(2y)) K_(n+1/2)(y)), against Boost's cylinder functions. Ours
// come from positive series and recurrences whose terms do not cancel (a few ulp a step, 30
// steps) and Boost's are good to a few ulp: 1e-12 relative holds with margin, and a wrong sign
// or factor in a recurrence is O(y^2 / n^2).
TEST(ScreenedKernel, RadialFunctionsMatchBoost) {
  const Wavenumber unit = Wavenumber::screened(1.0);
  for (double y : {1e-6, 0.01, 0.3, 1.0, 2.5, 7.0, 15.0, 30.0, 80.0}) {
    double ihat[31];
    cplx khat[31];
    regular_radial(30, unit, y, ihat);
    singular_radial(30, unit, y, khat);
    const double half = std::sqrt(std::numbers::pi / (2.0 * y));
    for (int n = 0; n <= 30; ++n) {
      const double i_n = half * boost::math::cyl_bessel_i(n + 0.5, y);
      const double k_n = half * boost::math::cyl_bessel_k(n + 0.5, y);
      // Boost's I underflows for tiny y and large n, its K overflows: compare where normal.
      if (i_n > 1e-290) {
        const double expected = i_n * odd_factorial(n + 1) / std::pow(y, n);
        EXPECT_NEAR(ihat[n], expected, 1e-12 * expected) << "n " << n << " y " << y;
      }
      if (std::isfinite(k_n) && k_n < 1e290) {
        const double expected =
            2.0 / std::numbers::pi * k_n * std::pow(y, n + 1) / odd_factorial(n);
        EXPECT_NEAR(khat[n].real(), expected, 1e-12 * expected) << "n " << n << " y " << y;
        EXPECT_EQ(khat[n].imag(), 0.0);
      }
    }
  }
  // The Laplace limit: both tend to 1.
  double ihat[3];
  cplx khat[3];
  regular_radial(2, unit, 0.0, ihat);
  singular_radial(2, unit, 0.0, khat);
  for (int n = 0; n <= 2; ++n) {
    EXPECT_EQ(ihat[n], 1.0);
    EXPECT_EQ(khat[n], cplx(1.0));
  }
}

// G(x - y) = 1/sigma sum_n 1/(2n+1) sum_m Shat_n^m(x - s) conj(Rhat_n^m(y - s)) at k = i kappa
// (expansions.hpp), for |y - s| <= |x - s| / 2: the terms fall like 2^-n times the products
// ihat_n khat_n, which tend to 1, so 60 degrees leave 1e-18 of the sum; the terms' rounding (a
// few ulp each, of size at most the kernel's e^(kappa |y - s|) times) keeps 1e-12 relative for
// kappa |y - s| <= 5.
TEST(ScreenedKernel, AdditionTheoremGivesTheKernel) {
  std::mt19937 rng(5);
  std::normal_distribution<double> gauss;
  const int degree = 60;
  std::vector<cplx> singular((degree + 1) * (degree + 1)), regular(singular.size());
  for (double kappa : {0.5, 5.0, 20.0}) {
    const Wavenumber k = Wavenumber::screened(kappa);
    for (int trial = 0; trial < 10; ++trial) {
      const Vec3 s{0.1, -0.2, 0.05};
      const double far = 0.5 + 0.05 * trial, near = std::min(0.5 * far, 5.0 / kappa);
      const Vec3 x = s + far * normalized(Vec3{gauss(rng), gauss(rng), gauss(rng)});
      const Vec3 y = s + near * normalized(Vec3{gauss(rng), gauss(rng), gauss(rng)});
      const double sigma = 0.7;
      singular_basis(degree, k, sigma, x - s, singular.data());
      regular_basis(degree, k, sigma, y - s, regular.data());
      cplx sum = 0.0;
      for (int n = 0; n <= degree; ++n)
        for (int m = -n; m <= n; ++m)
          sum += singular[coefficient_index(n, m)] * std::conj(regular[coefficient_index(n, m)]) /
                 (2.0 * n + 1.0);
      sum /= sigma;
      const double r = norm(x - y);
      const double exact = std::exp(-kappa * r) / (4.0 * std::numbers::pi * r);
      EXPECT_NEAR(sum.real(), exact, 1e-12 * exact) << "kappa " << kappa << " trial " << trial;
      EXPECT_NEAR(sum.imag(), 0.0, 1e-12 * exact);
    }
  }
}

// The direct sum at k = i kappa: each term against exp(-kappa r) / (4 pi r) and its
// derivatives, the normal derivative against a fourth-order central difference (the
// PointSources test's bound, whose e^(k/2) factor is e^(-kappa r) <= 1 here: 5.6e-8 of the sum
// of the terms' moduli).
TEST(ScreenedKernel, DirectSumIsTheKernel) {
  std::mt19937 rng(21);
  std::normal_distribution<double> gauss;
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const Vec3 x{0.1, -0.2, 0.3}, n_x = normalized(Vec3{1.0, 2.0, -0.5});
  const std::size_t count = 60;
  std::vector<Vec3> points, normals;
  std::vector<cplx> charges, dipoles;
  for (std::size_t i = 0; i < count; ++i) {
    const double r = 1.0 + 0.5 * (u(rng) + 1.0);
    points.push_back(x + r * normalized(Vec3{gauss(rng), gauss(rng), gauss(rng)}));
    normals.push_back(normalized(Vec3{gauss(rng), gauss(rng), gauss(rng)}));
    charges.emplace_back(u(rng), u(rng));
    dipoles.emplace_back(u(rng), u(rng));
  }
  std::vector<std::size_t> order(count);
  std::iota(order.begin(), order.end(), 0);
  const PointSources sources(points, normals, order, charges, dipoles);
  for (double kappa : {0.7, 4.0}) {
    const Wavenumber k = Wavenumber::screened(kappa);
    cplx value = 0.0;
    double scale = 0.0;
    for (std::size_t j = 0; j < count; ++j) {
      const Vec3 d = points[j] - x;
      const double r = norm(d), g = std::exp(-kappa * r) / (4.0 * std::numbers::pi * r);
      // dG/dn_y = -(kappa r + 1) G / r^2 (y - x) . n_y.
      const double dg = -(kappa * r + 1.0) * g / (r * r) * dot(d, normals[j]);
      value += g * charges[j] + dg * dipoles[j];
      scale += std::abs(g * charges[j]) + std::abs(dg * dipoles[j]);
    }
    const auto both = sources.potential_and_normal_derivative(0, count, k, x, n_x, 0.0);
    EXPECT_LE(std::abs(sources.potential(0, count, k, x, 0.0) - value), 1e-13 * scale);
    EXPECT_LE(std::abs(both.value - value), 1e-13 * scale);
    const double h = 1e-3;
    const auto phi = [&](double s) { return sources.potential(0, count, k, x + s * n_x, 0.0); };
    const cplx fd = (-phi(2 * h) + 8.0 * phi(h) - 8.0 * phi(-h) + phi(-2 * h)) / (12.0 * h);
    EXPECT_LE(std::abs(fd - both.normal_derivative), 5.6e-8 * scale) << "kappa " << kappa;
    EXPECT_GT(std::abs(both.normal_derivative), 1e3 * 5.6e-8 * scale);
  }
}

struct ScreenedCase {
  bool sphere;
  double kappa;
  int order;
};

void PrintTo(const ScreenedCase& c, std::ostream* os) {
  *os << (c.sphere ? "sphere" : "box") << ", kappa = " << c.kappa << ", p = " << c.order;
}

class ScreenedFmm : public ::testing::TestWithParam<ScreenedCase> {};

// The FMM at k = i kappa against the direct sum. Bounds: order_for_tolerance's Laplace
// calibration (2.6e-3 at p = 8, 1.5e-6 at p = 16) for the charges' potential: the degree-n term
// of the screened expansion is the Laplace one times ihat_n(kappa r<) khat_n(kappa r>) <= 1 for
// r< < r> (TermsAreBoundedByLaplaces), so its truncation error is no larger. Dipoles (the kernel's
// derivative along n_y) and the target normal derivative: FmmNormalDerivative's ten times that
// (a derivative of the truncated terms loses about one order). The plan is Laplace's: no
// diagonal levels at any kappa (k = 60 would need them).
TEST_P(ScreenedFmm, MatchesTheDirectSum) {
  const ScreenedCase c = GetParam();
  const PointSet set = make_points(c.sphere, 12000, 3000, 7);
  const Wavenumber k = Wavenumber::screened(c.kappa);
  FmmOptions options{c.order, 0.0, 40, skip_radius};
  options.screened = true;
  const Fmm fmm(c.kappa, set.sources, set.normals, set.targets, options);
  EXPECT_NE(fmm.describe().find("screened, kappa = "), std::string::npos) << fmm.describe();
  EXPECT_EQ(fmm.statistics().switch_level, -1) << fmm.describe();
  EXPECT_EQ(fmm.statistics().order, c.order);
  const double bound = c.order <= 8 ? 2.6e-3 : 1.5e-6;
  const std::size_t nt = set.targets.size();
  std::vector<std::size_t> order(set.sources.size());
  std::iota(order.begin(), order.end(), 0);
  // The charges alone.
  std::vector<cplx> phi(nt), exact(nt);
  fmm.apply(set.charges, {}, phi);
  const PointSources charges(set.sources, set.normals, order, set.charges, {});
#pragma omp parallel for
  for (std::size_t t = 0; t < nt; ++t)
    exact[t] = charges.potential(0, charges.size(), k, set.targets[t], skip_radius * skip_radius);
  const double charge_error = relative_error(phi, exact);
  // Charges and dipoles, with the target normal derivative apart: phi and dphi/dn_t.
  const Fmm apart(c.kappa, set.sources, set.normals, set.targets, set.targets, options, nullptr,
                  TargetNormalDerivative{set.target_normals, 0.0, true});
  std::vector<cplx> both(2 * nt);
  apart.apply(set.charges, set.dipoles, both);
  const PointSources sources(set.sources, set.normals, order, set.charges, set.dipoles);
  std::vector<cplx> value(nt), derivative(nt);
#pragma omp parallel for
  for (std::size_t t = 0; t < nt; ++t) {
    const auto v = sources.potential_and_normal_derivative(
        0, sources.size(), k, set.targets[t], set.target_normals[t], skip_radius * skip_radius);
    value[t] = v.value;
    derivative[t] = v.normal_derivative;
  }
  const double phi_error =
      relative_error(std::vector<cplx>(both.begin(), both.begin() + nt), value);
  const double derivative_error =
      relative_error(std::vector<cplx>(both.begin() + nt, both.end()), derivative);
  std::printf("%s kappa %g p %d: charges %.2e; charges and dipoles: phi %.2e, dphi/dn %.2e\n",
              c.sphere ? "sphere" : "box", c.kappa, c.order, charge_error, phi_error,
              derivative_error);
  EXPECT_LE(charge_error, bound);
  EXPECT_LE(phi_error, 10.0 * bound);
  EXPECT_LE(derivative_error, 10.0 * bound);
}

INSTANTIATE_TEST_SUITE_P(Geometries, ScreenedFmm,
                         ::testing::Values(ScreenedCase{true, 2.0, 8}, ScreenedCase{true, 2.0, 16},
                                           ScreenedCase{true, 60.0, 8}, ScreenedCase{false, 4.0, 8},
                                           ScreenedCase{false, 4.0, 16}));

// ihat_n(a) khat_n(b) <= 1 for a < b: the screened expansion's terms are bounded by Laplace's.
TEST(ScreenedKernel, TermsAreBoundedByLaplaces) {
  const Wavenumber unit = Wavenumber::screened(1.0);
  for (double b : {0.1, 1.0, 5.0, 30.0, 100.0})
    for (double ratio : {0.0, 0.3, 0.6, 0.9, 0.999}) {
      double ihat[41];
      cplx khat[41];
      regular_radial(40, unit, ratio * b, ihat);
      singular_radial(40, unit, b, khat);
      for (int n = 0; n <= 40; ++n)
        EXPECT_LE(ihat[n] * khat[n].real(), 1.0 + 1e-14) << "n " << n << " b " << b;
    }
}

}  // namespace
}  // namespace fmbem::fmm

#include "fmbem/fmm/expansions.hpp"

#include <gtest/gtest.h>

#include <boost/math/special_functions/bessel.hpp>
#include <cmath>
#include <numbers>
#include <random>

#include "fmbem/fmm/translations.hpp"
#include "fmbem/kernel/kernel.hpp"

namespace fmbem::fmm {
namespace {

double odd_factorial(int n) {  // (2n - 1)!!
  double f = 1.0;
  for (int i = 1; i <= n; ++i) f *= 2.0 * i - 1.0;
  return f;
}

TEST(FmmExpansions, ScaledBesselMatchesBoost) {
  for (double x : {1e-6, 0.01, 0.3, 1.0, 2.5, 7.0, 15.0, 30.0}) {
    double jhat[32];
    cplx hhat[32];
    scaled_bessel_j(30, x, jhat);
    scaled_hankel(30, x, hhat);
    for (int n = 0; n <= 30; ++n) {
      const double j = boost::math::sph_bessel(n, x), y = boost::math::sph_neumann(n, x);
      const double jn_scale = odd_factorial(n + 1) / std::pow(x, n);
      const double hn_scale = std::pow(x, n + 1) / odd_factorial(n);
      // Boost underflows j_n for tiny x and large n: compare where it is normal.
      if (std::abs(j) > 1e-290) EXPECT_NEAR(jhat[n], j * jn_scale, 1e-12 * std::abs(j * jn_scale));
      if (std::isfinite(y) && std::abs(y) < 1e290) {
        const cplx expected = cplx(0.0, 1.0) * cplx(j, y) * hn_scale;
        EXPECT_NEAR(std::abs(hhat[n] - expected), 0.0, 1e-12 * std::abs(expected))
            << "n " << n << " x " << x;
      }
    }
  }
  double jhat[3];
  scaled_bessel_j(2, 0.0, jhat);
  EXPECT_EQ(jhat[2], 1.0);
}

TEST(FmmExpansions, SphericalHarmonicsAreOrthonormal) {
  // Gauss-Legendre in cos(theta) x trapezoid in phi integrates degree <= 2*8 exactly.
  const int p = 8, size = (p + 1) * (p + 1);
  std::vector<cplx> gram(size * size, 0.0), y(size);
  const double nodes[] = {-0.9602898564975363, -0.7966664774136267, -0.5255324099163290,
                          -0.1834346424956498, 0.1834346424956498,  0.5255324099163290,
                          0.7966664774136267,  0.9602898564975363};
  const double weights[] = {0.1012285362903763, 0.2223810344533745, 0.3137066458778873,
                            0.3626837833783620, 0.3626837833783620, 0.3137066458778873,
                            0.2223810344533745, 0.1012285362903763};
  const int num_phi = 2 * p + 2;
  for (int it = 0; it < 8; ++it)
    for (int ip = 0; ip < num_phi; ++ip) {
      const double phi = 2.0 * std::numbers::pi * ip / num_phi, c = nodes[it];
      const double s = std::sqrt(1.0 - c * c);
      spherical_harmonics(p, Vec3{s * std::cos(phi), s * std::sin(phi), c}, y.data());
      const double w = weights[it] * 2.0 * std::numbers::pi / num_phi;
      for (int i = 0; i < 49; ++i)  // degrees <= 6 keep the product within the rule
        for (int j = 0; j < 49; ++j) gram[i * size + j] += w * y[i] * std::conj(y[j]);
    }
  for (int i = 0; i < 49; ++i)
    for (int j = 0; j < 49; ++j)
      EXPECT_NEAR(std::abs(gram[i * size + j] - (i == j ? 1.0 : 0.0)), 0.0, 1e-13);
  // Y_1^1 = -sqrt(3/8pi) sin(theta) e^{i phi} (Condon-Shortley phase).
  spherical_harmonics(1, Vec3{1.0, 0.0, 0.0}, y.data());
  EXPECT_NEAR(y[coefficient_index(1, 1)].real(), -std::sqrt(3.0 / (8.0 * std::numbers::pi)), 1e-15);
}

TEST(FmmExpansions, GauntCoefficientsMatchClosedForms) {
  const GauntTable gaunt(6);
  const double inv_sqrt_4pi = 0.5 / std::sqrt(std::numbers::pi);
  for (int n = 0; n <= 6; ++n)
    for (int m = -n; m <= n; ++m) EXPECT_NEAR(gaunt(n, m, 0, 0, n), inv_sqrt_4pi, 1e-14);
  // int Y_1^0 Y_1^0 Y_2^0 = 2 / sqrt(5 * 4 pi) (Wigner 3j (1 1 2; 0 0 0)^2 = 2/15).
  EXPECT_NEAR(gaunt(1, 0, 1, 0, 2), 2.0 / std::sqrt(20.0 * std::numbers::pi), 1e-14);
  EXPECT_EQ(gaunt(1, 0, 1, 0, 1), 0.0);  // parity
}

struct Cloud {
  std::vector<Vec3> points;
  std::vector<cplx> charges;
};

Cloud random_cloud(const Vec3& centre, double half_width, int count, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-half_width, half_width), c(-1.0, 1.0);
  Cloud cloud;
  for (int i = 0; i < count; ++i) {
    cloud.points.push_back(centre + Vec3{u(rng), u(rng), u(rng)});
    cloud.charges.emplace_back(c(rng), c(rng));
  }
  return cloud;
}

std::vector<cplx> moments(int p, double k, double sigma, const Vec3& centre, const Cloud& cloud) {
  std::vector<cplx> m(p * p, 0.0), r(p * p);
  for (std::size_t j = 0; j < cloud.points.size(); ++j) {
    regular_basis(p - 1, k, sigma, cloud.points[j] - centre, r.data());
    for (int i = 0; i < p * p; ++i) m[i] += cloud.charges[j] * std::conj(r[i]);
  }
  return m;
}

cplx direct_potential(double k, const Vec3& x, const Cloud& cloud) {
  cplx sum = 0.0;
  for (std::size_t j = 0; j < cloud.points.size(); ++j)
    sum += green(k, norm(x - cloud.points[j])) * cloud.charges[j];
  return sum;
}

cplx multipole_potential(int p, double k, double sigma, const Vec3& centre,
                         const std::vector<cplx>& m, const Vec3& x) {
  std::vector<cplx> s(p * p);
  singular_basis(p - 1, k, sigma, x - centre, s.data());
  cplx sum = 0.0;
  for (int n = 0; n < p; ++n)
    for (int mm = -n; mm <= n; ++mm)
      sum += s[coefficient_index(n, mm)] * m[coefficient_index(n, mm)] / (sigma * (2.0 * n + 1.0));
  return sum;
}

cplx local_potential(int p, double k, double sigma, const Vec3& centre,
                     const std::vector<cplx>& local, const Vec3& x) {
  std::vector<cplx> r(p * p);
  regular_basis(p - 1, k, sigma, x - centre, r.data());
  cplx sum = 0.0;
  for (int i = 0; i < p * p; ++i) sum += local[i] * r[i];
  return sum;
}

std::vector<cplx> multiply(const TranslationMatrix& a, const std::vector<cplx>& x, bool conjugate,
                           bool transpose) {
  const std::size_t size = x.size();
  std::vector<cplx> y(size, 0.0);
  for (std::size_t i = 0; i < size; ++i)
    for (std::size_t j = 0; j < size; ++j) {
      const cplx aij = transpose ? a[j * size + i] : a[i * size + j];
      y[i] += (conjugate ? std::conj(aij) : aij) * x[j];
    }
  return y;
}

// Each operator against direct summation: the error must fall geometrically
// with p at the rate the geometry sets (source radius / distance), for a
// low-frequency k sigma, a moderate one and Laplace.
class FmmTranslation : public ::testing::TestWithParam<double> {};

TEST_P(FmmTranslation, MultipoleExpansionConverges) {
  const double k = GetParam(), sigma = 0.5;
  const Cloud cloud = random_cloud({0.1, -0.2, 0.05}, 0.25, 30, 1);
  const Vec3 x{1.4, 0.9, -1.1};  // |x - c| ~ 2, source radius <= 0.43: ratio ~ 0.22
  const cplx exact = direct_potential(k, x, cloud);
  double previous = 1.0;
  for (int p : {4, 8, 12}) {
    const auto m = moments(p, k, sigma, {0.1, -0.2, 0.05}, cloud);
    const double error =
        std::abs(multipole_potential(p, k, sigma, {0.1, -0.2, 0.05}, m, x) - exact) /
        std::abs(exact);
    EXPECT_LT(error, 10.0 * std::pow(0.25, p)) << "p " << p;
    EXPECT_LT(error, previous);
    previous = error;
  }
}

TEST_P(FmmTranslation, MultipoleToMultipoleMatchesDirectMoments) {
  const double k = GetParam(), sigma = 1.0;
  const Vec3 parent{0.3, 0.1, -0.2}, t{0.25, -0.25, 0.25};
  const Cloud cloud = random_cloud(parent + t, 0.25, 30, 2);
  const GauntTable gaunt(13);
  const Vec3 x = parent + Vec3{3.0, -2.0, 2.0};  // ratio 0.87 / 4.1
  const cplx exact = direct_potential(k, x, cloud);
  for (int p : {8, 12}) {
    const auto child = moments(p, k, sigma / 2, parent + t, cloud);
    const auto shifted = multiply(regular_shift(gaunt, p, k, sigma, t), child, true, false);
    const double error =
        std::abs(multipole_potential(p, k, sigma, parent, shifted, x) - exact) / std::abs(exact);
    EXPECT_LT(error, 10.0 * std::pow(0.25, p)) << "p " << p;
  }
}

TEST_P(FmmTranslation, MultipoleToLocalAndLocalToLocalMatchDirectSum) {
  const double k = GetParam(), sigma = 1.0;
  const Vec3 source{-0.2, 0.4, 0.1}, t{3.0, -2.0, 0.0};  // a transfer vector of the octree
  const Cloud cloud = random_cloud(source, 0.3, 30, 3);
  const Cloud targets = random_cloud(source + t, 0.3, 10, 4);
  const GauntTable gaunt(17);
  double previous = 1.0;
  for (int p : {4, 8, 16}) {
    const auto m = moments(p, k, sigma, source, cloud);
    const auto local = multiply(multipole_to_local(gaunt, p, k, sigma, t), m, false, false);
    // L2L to a child of the target cell (width sigma / 2, offset tc).
    const Vec3 tc{-0.25, 0.25, 0.25};
    const auto child = multiply(regular_shift(gaunt, p, k, sigma, tc), local, false, true);
    double error = 0.0, error_child = 0.0, scale = 0.0;
    for (const Vec3& x : targets.points) {
      const cplx exact = direct_potential(k, x, cloud);
      error = std::max(error, std::abs(local_potential(p, k, sigma, source + t, local, x) - exact));
      error_child =
          std::max(error_child,
                   std::abs(local_potential(p, k, sigma / 2, source + t + tc, child, x) - exact));
      scale = std::max(scale, std::abs(exact));
    }
    // Sources and targets within 0.52 of their centres, 3.6 apart: ratio < 0.3.
    EXPECT_LT(error / scale, 10.0 * std::pow(0.3, p)) << "p " << p;
    EXPECT_LT(error_child / scale, 10.0 * std::pow(0.35, p)) << "p " << p;
    EXPECT_LT(error / scale, previous);
    previous = error / scale;
  }
}

TEST_P(FmmTranslation, GradientTermsMatchFiniteDifferences) {
  const double k = GetParam(), sigma = 0.7;
  const int p = 10;
  const GauntTable gaunt(p);
  const auto terms = gradient_terms(gaunt, p, k, sigma);
  const Vec3 r{0.21, -0.33, 0.17}, normal = normalized(Vec3{0.3, 0.5, -0.8});
  std::vector<cplx> values((p + 1) * (p + 1)), plus(p * p), minus(p * p), derivative(p * p, 0.0);
  regular_basis(p, k, sigma, r, values.data());
  cplx g[3];
  for (int q = -1; q <= 1; ++q) {
    const HarmonicGradient h = harmonic_gradient(q);
    g[q + 1] = h.x * normal.x + h.y * normal.y + h.z * normal.z;
  }
  for (const GradientTerm& term : terms)
    derivative[term.target] += term.coefficient * g[term.q + 1] * values[term.source];
  const double h = 1e-5;
  regular_basis(p - 1, k, sigma, r + normal * h, plus.data());
  regular_basis(p - 1, k, sigma, r - normal * h, minus.data());
  for (int i = 0; i < p * p; ++i) {
    const cplx fd = (plus[i] - minus[i]) / (2.0 * h);
    EXPECT_NEAR(std::abs(derivative[i] - fd), 0.0, 1e-8 * (1.0 + std::abs(fd))) << "index " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Wavenumbers, FmmTranslation, ::testing::Values(0.0, 0.8, 3.0));

}  // namespace
}  // namespace fmbem::fmm

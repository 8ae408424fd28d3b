// Incident fields and the monopole against closed forms and finite differences.
#include "fmbem/exact/incident.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <functional>
#include <limits>
#include <numbers>

#include "fmbem/core/error.hpp"

namespace fmbem::exact {
namespace {

constexpr double kEps = std::numeric_limits<double>::epsilon();
constexpr double kPi = std::numbers::pi;

// Fourth-order central difference of f along n at x. Error <= h^4 max|f^(5)| / 30 (truncation)
// + (1 + 8 + 8 + 1) eps max|f| / (12 h) (rounding of the four samples).
cplx central_difference(const std::function<cplx(const Vec3&)>& f, const Vec3& x, const Vec3& n,
                        double h) {
  return (-f(x + 2 * h * n) + 8.0 * f(x + h * n) - 8.0 * f(x - h * n) + f(x - 2 * h * n)) /
         (12.0 * h);
}

TEST(Incident, PlaneWaveClosedFormWithUnnormalisedDirection) {
  const double k = 3.0;
  const Incident inc = Incident::plane_wave({1.0, 2.0, 2.0});  // |d| = 3
  const Vec3 x{0.4, -1.1, 2.3};
  const double phase = k * (0.4 - 2.2 + 4.6) / 3.0;
  // Same formula up to the rounding of the normalisation and the dot product (a few ulp of the
  // phase k d.x ~ 3, so |error| <= ~10 eps * 3).
  EXPECT_LT(std::abs(incident_field(k, inc, x) - std::polar(1.0, phase)), 30 * kEps);
  EXPECT_EQ(incident_field(0.0, inc, x), cplx(1.0));
  EXPECT_EQ(incident_normal_derivative(0.0, inc, x, {0, 0, 1}), cplx(0.0));
}

TEST(Incident, PlaneWaveNormalDerivativeMatchesFiniteDifference) {
  const double k = 3.0;
  const Incident inc = Incident::plane_wave({0.3, -0.5, 0.8});
  const Vec3 n = normalized(Vec3{1.0, 1.0, -0.5});
  const double h = 1e-3;
  // |f^(5)| <= k^5 and |f| = 1: tolerance 2 * (h^4 k^5 / 30 + 18 eps / (12 h)) ~ 1.7e-11.
  const double tol = 2.0 * (std::pow(h, 4) * std::pow(k, 5) / 30.0 + 18.0 * kEps / (12.0 * h));
  for (const Vec3& x : {Vec3{0, 0, 0}, Vec3{1.2, -0.7, 0.4}, Vec3{-3.0, 2.0, 5.0}}) {
    const auto f = [&](const Vec3& y) { return incident_field(k, inc, y); };
    EXPECT_LT(std::abs(incident_normal_derivative(k, inc, x, n) - central_difference(f, x, n, h)),
              tol);
  }
}

TEST(Incident, MonopoleClosedForm) {
  // |x - s| = 5 exactly: G = exp(5ik) / (20 pi), dG/dR = G (ik - 1/5).
  const Vec3 s{1.0, -2.0, 0.5};
  const Vec3 x = s + Vec3{3.0, 4.0, 0.0};
  const Vec3 radial{0.6, 0.8, 0.0};
  for (const double k : {0.0, 0.7, 12.0}) {
    const cplx g = std::polar(1.0, 5.0 * k) / (20.0 * kPi);
    // Rounding only: a few ulp relative to |G| (phase 5k <= 60 adds ~60 eps absolute in angle).
    const double tol = 100 * kEps * std::abs(g);
    EXPECT_LT(std::abs(monopole(k, s, x) - g), tol) << "k = " << k;
    EXPECT_LT(std::abs(monopole_normal_derivative(k, s, x, radial) - g * cplx(-0.2, k)),
              tol * std::abs(cplx(-0.2, k)))
        << "k = " << k;
    // A tangential normal sees no derivative; the derivative is linear in n.
    EXPECT_LT(std::abs(monopole_normal_derivative(k, s, x, {-0.8, 0.6, 0.0})), tol);
    EXPECT_EQ(incident_field(k, Incident::point_source(s), x), monopole(k, s, x));
    EXPECT_EQ(incident_normal_derivative(k, Incident::point_source(s), x, radial),
              monopole_normal_derivative(k, s, x, radial));
  }
}

TEST(Incident, MonopoleNormalDerivativeMatchesFiniteDifference) {
  const double k = 2.0, h = 1e-3;
  const Vec3 s{0.1, 0.2, -0.3};
  const Vec3 x = s + Vec3{1.0, -0.5, 1.0};  // R = 1.5
  const Vec3 n = normalized(Vec3{0.2, 1.0, 0.4});
  // Leibniz on exp(ikR)/R with R >= 1.5 - 2h: |f^(5)| <= |G| (k + 5/R)^5 (binomial bound on
  // sum C(5,j) k^(5-j) j!/R^j), |G| = 1/(6 pi); tolerance = 2 x (truncation + rounding) ~ 5e-12.
  const double g = 1.0 / (6.0 * kPi);
  const double tol =
      2.0 * (std::pow(h, 4) * g * std::pow(k + 5.0 / 1.49, 5) / 30.0 + 18.0 * kEps * g / (12 * h));
  const auto f = [&](const Vec3& y) { return monopole(k, s, y); };
  EXPECT_LT(std::abs(monopole_normal_derivative(k, s, x, n) - central_difference(f, x, n, h)), tol);
}

TEST(Incident, InvalidInputThrows) {
  const Vec3 x{1, 2, 3};
  const Incident plane = Incident::plane_wave({0, 0, 1});
  EXPECT_THROW(incident_field(-1.0, plane, x), Error);
  EXPECT_THROW(incident_field(std::nan(""), plane, x), Error);
  EXPECT_THROW(incident_field(std::numeric_limits<double>::infinity(), plane, x), Error);
  EXPECT_THROW(incident_field(1.0, Incident::plane_wave({0, 0, 0}), x), Error);
  EXPECT_THROW(incident_normal_derivative(1.0, Incident::plane_wave({0, 0, 0}), x, x), Error);
  EXPECT_THROW(incident_normal_derivative(-2.0, plane, x, x), Error);
  EXPECT_THROW(monopole(1.0, x, x), Error);
  EXPECT_THROW(monopole(-1.0, {0, 0, 0}, x), Error);
  EXPECT_THROW(monopole_normal_derivative(1.0, x, x, {0, 0, 1}), Error);
  EXPECT_THROW(incident_field(1.0, Incident::point_source(x), x), Error);
}

}  // namespace
}  // namespace fmbem::exact

// SphereCapRadiation against the pulsating sphere's closed form, brute-force summation of the
// plain series (on and off the surface), its boundary condition, the point-source limit of a small
// cap, and rotation/translation invariance.
#include "fmbem/exact/sphere_cap.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numbers>
#include <vector>

#include "fmbem/core/error.hpp"
#include "fmbem/exact/incident.hpp"
#include "fmbem/exact/sphere.hpp"

namespace fmbem::exact {
namespace {

constexpr double kEps = std::numeric_limits<double>::epsilon();
constexpr double kPi = std::numbers::pi;
constexpr cplx kI{0.0, 1.0};

// The point at polar angle theta (azimuth phi) about the axis e of a cap centred at c, radius r.
struct Frame {
  Vec3 c, e, u, v;  // e, u, v orthonormal
  Frame(const Vec3& center, const Vec3& axis) : c(center), e(normalized(axis)) {
    const Vec3 helper = std::abs(e.x) < 0.9 ? Vec3{1, 0, 0} : Vec3{0, 1, 0};
    u = normalized(cross(e, helper));
    v = cross(e, u);
  }
  Vec3 at(double r, double theta, double phi = 0.3) const {
    return c +
           r * (std::cos(theta) * e + std::sin(theta) * (std::cos(phi) * u + std::sin(phi) * v));
  }
};

// q_n = q0 (P_{n-1}(x0) - P_{n+1}(x0))/2 (P_{-1} = 1) for n = 0 .. count - 1.
std::vector<cplx> cap_coefficients(int count, double x0, cplx q0) {
  std::vector<cplx> q(count);
  double p_previous = 1.0, p = 1.0, p_next = x0;
  for (int n = 0; n < count; ++n) {
    q[n] = 0.5 * q0 * (p_previous - p_next);
    p_previous = p;
    p = p_next;
    p_next = ((2.0 * n + 3.0) * x0 * p - (n + 1.0) * p_previous) / (n + 2.0);
  }
  return q;
}

// The plain series sum q_n h_n(kr)/(k h_n'(ka)) P_n(t) to `count` terms and to count/2 terms.
struct PlainSum {
  cplx full, half;
};
PlainSum plain_sum(double k, double a, double r, double x0, cplx q0, double t, int count) {
  const std::vector<cplx> q = cap_coefficients(count, x0, q0);
  const HankelRatios ratio = hankel_ratios(count - 1, k * r, k * a);
  PlainSum out;
  double p_previous = 0.0, p = 1.0;
  cplx sum = 0.0;
  for (int n = 0; n < count; ++n) {
    sum += q[n] * ratio.h_over_dh[n] / k * p;
    if (n == count / 2 - 1) out.half = sum;
    const double p_next = ((2.0 * n + 1.0) * t * p - n * p_previous) / (n + 1.0);
    p_previous = p;
    p = p_next;
  }
  out.full = sum;
  return out;
}

// Half-angle pi: q = q0 everywhere, only n = 0: p = q0 h_0(kr)/(k h_0'(ka)) =
// q0 a^2 e^{ik(r-a)} / (r (ika - 1)) (h_0 = -i e^{ix}/x, h_0' = e^{ix}(x + i)/x^2), the monopole
// A G(x - c) with A = 4 pi a^2 q0 e^{-ika}/(ika - 1). Error budget: the one series term is a few
// ulp; the static part -a q0 rho comes from tanh-sinh, stopped at an estimated 1e-13 relative
// (allow 1e-12: the estimate is a level difference), and cancels against the series term with
// |p0|/|p| = sqrt(1 + (ka)^2) on the surface. Tolerance: (1e-12 sqrt(1 + (ka)^2) + 64 eps) |p|.
TEST(SphereCap, PulsatingSphereIsAMonopole) {
  const Vec3 center{0.4, -1.1, 2.0};
  const Frame frame(center, {1.0, 2.0, -0.5});
  const cplx q0{0.7, -0.3};
  const double a = 1.3;
  for (double k : {0.4, 3.0, 20.0}) {
    const SphereCapRadiation cap(k, a, center, frame.e, kPi, q0);
    EXPECT_EQ(cap.terms(), 1);
    const cplx amplitude = 4.0 * kPi * a * a * q0 * std::exp(-kI * k * a) / (kI * k * a - 1.0);
    for (double r_over_a : {1.0, 1.4, 5.0}) {
      for (double theta : {0.0, 0.7, 2.0, kPi}) {
        const Vec3 x = frame.at(r_over_a * a, theta);
        const cplx want = amplitude * monopole(k, center, x);
        const double tol = (1e-12 * std::sqrt(1.0 + k * a * k * a) + 64.0 * kEps) * std::abs(want);
        EXPECT_LT(std::abs(cap.value(x) - want), tol)
            << "k = " << k << ", r/a = " << r_over_a << ", theta = " << theta;
      }
    }
  }
}

// On the surface against the plain series summed to N = 200,000 terms. Its terms are O(n^{-2})
// (O(n^{-3/2}) at the poles), so its own error is at most |S_N - S_{N/2}| (for a tail C N^{-s},
// s >= 1, S_{N/2} - S_N = C (2^s - 1) N^{-s} >= the tail). Tolerance: value()'s guarantee
// tolerance() plus that. Points: both poles, inside and outside the cap, and on and next to the
// edge (p is continuous there).
TEST(SphereCap, SurfaceMatchesBruteForceSeries) {
  const cplx q0{1.0, 0.5};
  const double a = 1.0, theta0 = 0.9, x0 = std::cos(theta0);
  const int n_ref = 200000;
  for (double k : {0.5, 4.0}) {
    const SphereCapRadiation cap(k, a, {}, {0, 0, 1}, theta0, q0);
    for (double theta : {0.0, 0.4, theta0 - 1e-3, theta0, theta0 + 1e-3, 2.0, kPi}) {
      const PlainSum want = plain_sum(k, a, a, x0, q0, std::cos(theta), n_ref);
      const double tol = cap.tolerance() + std::abs(want.full - want.half);
      const Vec3 x{a * std::sin(theta), 0.0, a * std::cos(theta)};
      EXPECT_LT(std::abs(cap.value(x) - want.full), tol) << "k = " << k << ", theta = " << theta;
      EXPECT_LT(tol, 1e-7 * std::abs(q0));  // the reference is good enough to say something
    }
  }
}

// Off the surface the plain series converges like (a/r)^n: at r = 1.2a, 400 terms leave
// 1.2^-400 ~ 1e-32; at r = 1.0002a, 200,000 terms leave e^-40 ~ 4e-18 (relative to the largest
// term, |q0| a). Tolerance: tolerance() + 1e-13 |q0| a (rounding of the 200,000-term sum, which
// grows like sqrt(N) eps |q0| a ~ 1e-13).
TEST(SphereCap, OffSurfaceMatchesPlainSeries) {
  const cplx q0{-0.4, 1.0};
  const double a = 2.0, theta0 = 1.2, x0 = std::cos(theta0), k = 1.5;
  const SphereCapRadiation cap(k, a, {}, {0, 0, 1}, theta0, q0);
  for (auto [r_over_a, n_ref] : {std::pair{1.2, 400}, std::pair{1.0002, 200000}}) {
    for (double theta : {0.0, 0.5, theta0, 1.25, 2.5}) {
      const PlainSum want = plain_sum(k, a, r_over_a * a, x0, q0, std::cos(theta), n_ref);
      const Vec3 x = r_over_a * a * Vec3{std::sin(theta), 0.0, std::cos(theta)};
      const double tol = cap.tolerance() + 1e-13 * std::abs(q0) * a;
      EXPECT_LT(std::abs(cap.value(x) - want.full), tol)
          << "r/a = " << r_over_a << ", theta = " << theta;
    }
  }
}

// The boundary condition: dp/dr at r = a from value() by the one-sided difference
// (-3 p(a) + 4 p(a + h) - p(a + 2h)) / (2h), h = 1e-3 a, is q0 on the cap and 0 off it. Error:
// truncation h^2 |p'''| / 3 (p''' ~ |q0| (k^2 + 1/a^2 + 1/d^2) at angular distance d >= 0.3 from
// the edge: <= 15 |q0| / a^2 here, so 5e-5 |q0|) plus value()'s error 4 tolerance() / (2h) =
// 2e-6 |q0|. Tolerance 1e-4 |q0|.
TEST(SphereCap, NormalDerivativeIsTheCapsData) {
  const cplx q0{0.3, -0.8};
  const double a = 1.0, k = 2.0, theta0 = 1.0, h = 1e-3 * a;
  const Frame frame({0.5, 0.5, -1.0}, {0.0, 1.0, 1.0});
  const SphereCapRadiation cap(k, a, frame.c, frame.e, theta0, q0);
  for (double theta : {0.0, 0.3, 0.7, 1.3, 2.0, 3.0}) {
    const auto p = [&](double r) { return cap.value(frame.at(r, theta)); };
    const cplx dp_dr = (-3.0 * p(a) + 4.0 * p(a + h) - p(a + 2.0 * h)) / (2.0 * h);
    const cplx want = theta < theta0 ? q0 : cplx(0.0);
    EXPECT_LT(std::abs(dp_dr - want), 1e-4 * std::abs(q0)) << "theta = " << theta;
  }
}

// A small cap is a point source on the rigid sphere: with Q = q0 2 pi a^2 (1 - x0) (its volume
// flux), q_n -> Q (2n+1)/(4 pi a^2), and p(y) = -Q G_N(x_c, y), G_N the rigid sphere's Green's
// function (Green's representation with dG_N/dn = 0), which by reciprocity is SphereScattering's
// rigid surface value at the cap's centre x_c for a point source at y. Both are the same series
// but for q_n, so |p - p_point| <= sum_n |t_n| |q_n / q_n^point - 1| with t_n the point source's
// terms (|P_n| <= 1); the ratio is 1 - n(n+1)(1 - x0)/4 + ..., computed exactly here. Tolerance
// that bound plus tolerance() and 1e-12 |p| for the references.
TEST(SphereCap, SmallCapTendsToAPointSource) {
  const double a = 1.0, k = 2.0, theta0 = 0.01, x0 = std::cos(theta0);
  const cplx q0{1.0, 0.0};
  const cplx flux = q0 * 2.0 * kPi * a * a * (1.0 - x0);
  const Frame frame({0.2, 0.0, 0.1}, {1.0, 1.0, 0.0});
  const SphereCapRadiation cap(k, a, frame.c, frame.e, theta0, q0);
  for (double r_over_a : {1.5, 3.0}) {
    const double r = r_over_a * a;
    const int count = 400;  // (1/1.5)^400: nothing left
    const std::vector<cplx> q = cap_coefficients(count, x0, q0);
    const HankelRatios ratio = hankel_ratios(count - 1, k * r, k * a);
    double bound = 0.0;
    for (int n = 0; n < count; ++n) {
      const cplx q_point = flux * (2.0 * n + 1.0) / (4.0 * kPi * a * a);
      bound += std::abs(q_point * ratio.h_over_dh[n] / k) * std::abs(q[n] / q_point - 1.0);
    }
    for (double theta : {0.0, 0.8, 2.5}) {
      const Vec3 y = frame.at(r, theta);
      const SphereScattering rigid(k, a, frame.c, SphereBoundary::Rigid, Incident::point_source(y));
      const cplx want = -flux * rigid.surface_value(frame.c + a * frame.e);
      const cplx got = cap.value(y);
      EXPECT_LT(std::abs(got - want), bound + cap.tolerance() + 1e-12 * std::abs(want))
          << "r/a = " << r_over_a << ", theta = " << theta;
      // Not vacuous: the bound is below 1% of p (4e-3 at the far side, where p is smallest).
      EXPECT_LT(bound, 1e-2 * std::abs(want));
    }
  }
}

// Rotating and translating the cap with the points leaves p unchanged up to the rounding of the
// angles (|dp/dtheta| eps, far below 1e-13 |q0| a) and the two truncations (each within
// tolerance()): tolerance 2 tolerance() + 1e-13 |q0| a.
TEST(SphereCap, RotationAndTranslationInvariance) {
  const double a = 0.8, k = 3.0, theta0 = 0.6;
  const cplx q0{0.2, 0.9};
  const Frame moved({3.0, -2.0, 1.5}, {-1.0, 0.4, 2.0}), plain({0, 0, 0}, {0, 0, 1});
  const SphereCapRadiation cap_moved(k, a, moved.c, moved.e, theta0, q0);
  const SphereCapRadiation cap_plain(k, a, plain.c, plain.e, theta0, q0);
  const double tol = 2.0 * cap_plain.tolerance() + 1e-13 * std::abs(q0) * a;
  for (double r_over_a : {1.0, 1.3, 4.0}) {
    for (double theta : {0.1, 0.59, 1.0, 2.9}) {
      for (double phi : {0.0, 2.0}) {
        const cplx want = cap_plain.value(plain.at(r_over_a * a, theta, phi));
        EXPECT_LT(std::abs(cap_moved.value(moved.at(r_over_a * a, theta, phi)) - want), tol)
            << "r/a = " << r_over_a << ", theta = " << theta << ", phi = " << phi;
      }
    }
  }
  // surface_value projects radially onto the sphere.
  const Vec3 inside = moved.at(0.97 * a, 1.0);
  EXPECT_LT(std::abs(cap_moved.surface_value(inside) - cap_moved.value(moved.at(a, 1.0))), tol);
}

// The most terms any point needs grows like (ka)^{4/5} at a fixed relative tolerance; a BEM
// test's 10^4 centroids cost O(terms) each. Recorded here: ka = 1, 10.
TEST(SphereCap, TermCountsAndCost) {
  const SphereCapRadiation low(1.0, 1.0, {}, {0, 0, 1}, 0.8, 1.0);
  const SphereCapRadiation high(10.0, 1.0, {}, {0, 0, 1}, 0.8, 1.0);
  ::testing::Test::RecordProperty("terms_ka1", low.terms());
  ::testing::Test::RecordProperty("terms_ka10", high.terms());
  EXPECT_LT(low.terms(), 20000);
  EXPECT_LT(high.terms(), 200000);
}

TEST(SphereCap, InvalidInputThrows) {
  const Vec3 c{}, e{0, 0, 1};
  EXPECT_THROW(SphereCapRadiation(0.0, 1.0, c, e, 1.0, 1.0), Error);
  EXPECT_THROW(SphereCapRadiation(-1.0, 1.0, c, e, 1.0, 1.0), Error);
  EXPECT_THROW(SphereCapRadiation(std::nan(""), 1.0, c, e, 1.0, 1.0), Error);
  EXPECT_THROW(SphereCapRadiation(1.0, 0.0, c, e, 1.0, 1.0), Error);
  EXPECT_THROW(SphereCapRadiation(1.0, 1.0, c, {0, 0, 0}, 1.0, 1.0), Error);
  EXPECT_THROW(SphereCapRadiation(1.0, 1.0, c, e, 0.0, 1.0), Error);
  EXPECT_THROW(SphereCapRadiation(1.0, 1.0, c, e, 3.2, 1.0), Error);
  EXPECT_THROW(SphereCapRadiation(1.0, 1.0, c, e, 1.0, cplx(std::nan(""), 0.0)), Error);
  const SphereCapRadiation cap(1.0, 1.0, c, e, 1.0, 1.0);
  EXPECT_THROW(cap.value({0, 0, 0.9}), Error);  // inside
  EXPECT_THROW(cap.surface_value(c), Error);
  EXPECT_NO_THROW(cap.value({0, 0, 1.0 - 1e-15}));  // rounding of a surface point
  // q0 = 0: nothing radiates.
  EXPECT_EQ(SphereCapRadiation(1.0, 1.0, c, e, 1.0, 0.0).value({0, 0, 1}), cplx(0.0));
}

}  // namespace
}  // namespace fmbem::exact

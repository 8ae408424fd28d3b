// SphereScattering against closed forms (Laplace), an independent Boost evaluation of the Mie
// series (Helmholtz), the k -> 0 limit, and rotation/translation invariance.
#include "fmbem/exact/sphere.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <boost/math/special_functions/bessel.hpp>
#include <boost/math/special_functions/bessel_prime.hpp>
#include <boost/math/special_functions/legendre.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numbers>
#include <string>
#include <vector>

#include "fmbem/core/error.hpp"
#include "fmbem/exact/incident.hpp"

namespace fmbem::exact {
namespace {

constexpr double kEps = std::numeric_limits<double>::epsilon();
constexpr double kPi = std::numbers::pi;
constexpr cplx kI{0.0, 1.0};

// Unit vectors: a Fibonacci spiral plus +-axis (the nearest and farthest points from a source).
std::vector<Vec3> test_directions(const Vec3& axis, int count = 60) {
  std::vector<Vec3> dirs{normalized(axis), -normalized(axis)};
  const double golden = kPi * (3.0 - std::sqrt(5.0));
  for (int i = 0; i < count; ++i) {
    const double z = 1.0 - 2.0 * (i + 0.5) / count;
    const double rho = std::sqrt(1.0 - z * z);
    dirs.push_back({rho * std::cos(golden * i), rho * std::sin(golden * i), z});
  }
  return dirs;
}

// Records error / tolerance in the XML report (--gtest_output=xml) to show the margin.
void record_margin(const std::string& name, double error, double tol) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", error / tol);
  ::testing::Test::RecordProperty(name, text);
}

const Vec3 kCenter{0.3, -0.2, 0.5};
const Vec3 kSourceAxis = normalized(Vec3{1.0, -2.0, 0.5});

// ---------------------------------------------------------------------------------------------
// Laplace (k = 0)

// Soft sphere, point source: Kelvin image u = G(x - s) - (a/r_s) G(x - s*), s* = a^2 s / r_s^2
// (relative to the centre), so q = du/dr = grad u . xhat from the two charges.
cplx kelvin_soft_q(double a, const Vec3& s, const Vec3& xhat) {
  const double r_s = norm(s);
  const Vec3 image = s * (a * a / (r_s * r_s));
  const Vec3 x = xhat * a;
  const auto dgdr = [&](const Vec3& p) {  // d/dr of 1/(4 pi |x - p|)
    const Vec3 d = x - p;
    const double r = norm(d);
    return -dot(d, xhat) / (4.0 * kPi * r * r * r);
  };
  return dgdr(s) - (a / r_s) * dgdr(image);
}

// Rigid sphere, point source: image charge +(a/r_s) at s* plus a line charge of density -1/a from
// the centre to s*; expanding 1/|x - t shat| in Legendre polynomials gives the scattered
// coefficients a^(2n+1)/r_s^(n+1) n/(n+1), which is what du/dr(a) = 0 asks for. With L = |s*|,
// I = int_0^L dt / |x - t shat| = ln((L - rc + R_L) / (r (1 - c))) = ln(r (1 + c) / (R_L - L + rc))
// (the two forms are equal since (R_L + L - rc)(R_L - L + rc) = r^2 (1 - c^2)); the first is free
// of cancellation for c < 0, the second for c >= 0.
cplx line_image_rigid_u(double a, const Vec3& s, const Vec3& xhat) {
  const double r_s = norm(s);
  const Vec3 shat = s * (1.0 / r_s);
  const double L = a * a / r_s, r = a, c = dot(xhat, shat);
  const Vec3 x = xhat * a;
  const double r_l = norm(x - shat * L);
  const double line = c < 0 ? std::log((L - r * c + r_l) / (r * (1.0 - c)))
                            : std::log(r * (1.0 + c) / (r_l - L + r * c));
  return 1.0 / (4.0 * kPi * norm(x - s)) + (a / r_s) / (4.0 * kPi * r_l) - line / (4.0 * kPi * a);
}

// Tolerance for the Laplace point-source series against a closed form, relative to max|value|
// (at the nearest point, where every term is positive and |value| = sum |terms|): each term
// carries a few ulp, the Legendre recurrence loses O(n) ulp at degree n, the tail is < 1e-16, the
// closed form a few ulp; budget (N + 20) eps, tolerance 4 (N + 20) eps.
double laplace_tolerance(int terms) { return 4.0 * (terms + 20) * kEps; }

TEST(SphereLaplace, SoftPointSourceMatchesKelvinImage) {
  const double a = 0.7;
  for (const double ratio : {1.5, 3.0, 1.05}) {
    const Vec3 s = kSourceAxis * (ratio * a);
    const SphereScattering sphere(0.0, a, kCenter, SphereBoundary::Soft,
                                  Incident::point_source(kCenter + s));
    const double scale = std::abs(kelvin_soft_q(a, s, kSourceAxis));
    const double tol = laplace_tolerance(sphere.terms()) * scale;
    double worst = 0.0;
    for (const Vec3& xhat : test_directions(kSourceAxis)) {
      // Off-surface points check the radial projection.
      const cplx got = sphere.surface_value(kCenter + xhat * (1.7 * a));
      worst = std::max(worst, std::abs(got - kelvin_soft_q(a, s, xhat)));
    }
    EXPECT_LT(worst, tol) << "r_s/a = " << ratio << ", terms = " << sphere.terms();
    record_margin("soft r_s/a=" + std::to_string(ratio), worst, tol);
  }
}

TEST(SphereLaplace, RigidPointSourceMatchesLineImage) {
  const double a = 0.7;
  for (const double ratio : {1.5, 3.0, 1.05}) {
    const Vec3 s = kSourceAxis * (ratio * a);
    const SphereScattering sphere(0.0, a, kCenter, SphereBoundary::Rigid,
                                  Incident::point_source(kCenter + s));
    const double scale = std::abs(line_image_rigid_u(a, s, kSourceAxis));
    const double tol = laplace_tolerance(sphere.terms()) * scale;
    double worst = 0.0;
    for (const Vec3& xhat : test_directions(kSourceAxis)) {
      const cplx got = sphere.surface_value(kCenter + xhat * a);
      worst = std::max(worst, std::abs(got - line_image_rigid_u(a, s, xhat)));
    }
    EXPECT_LT(worst, tol) << "r_s/a = " << ratio << ", terms = " << sphere.terms();
    record_margin("rigid r_s/a=" + std::to_string(ratio), worst, tol);
  }
}

TEST(SphereLaplace, PlaneWaveIsConstant) {
  // u_inc = 1: rigid u = 1, soft u = 1 - a/r so q = 1/a, exactly (one term, no arithmetic).
  const double a = 0.7;
  const SphereScattering rigid(0.0, a, kCenter, SphereBoundary::Rigid,
                               Incident::plane_wave({1, 0, 0}));
  const SphereScattering soft(0.0, a, kCenter, SphereBoundary::Soft,
                              Incident::plane_wave({1, 0, 0}));
  EXPECT_EQ(rigid.terms(), 1);
  EXPECT_EQ(soft.terms(), 1);
  for (const Vec3& xhat : test_directions({0, 0, 1}, 10)) {
    EXPECT_EQ(rigid.surface_value(kCenter + xhat * a), cplx(1.0));
    EXPECT_EQ(soft.surface_value(kCenter + xhat * 2.0), cplx(1.0 / a));
  }
}

// ---------------------------------------------------------------------------------------------
// Helmholtz (k > 0): an independent evaluation of the exterior field with Boost's j_n, y_n and
// P_n, written as closed-form incident field + scattered series
//   u(r) = u_inc(x) - sum c_n [J_n(ka) / H_n(ka)] h_n(kr) P_n,  (J, H) = (j_n', h_n') rigid,
//                                                                 (j_n, h_n) soft,
// with c_n = e^{ik d.center} (2n+1) i^n (plane wave) or (ik/(4 pi)) (2n+1) h_n(k r_s) (point
// source), multiplied in an order that stays inside double range up to n = 80 at ka >= 1.

cplx boost_h(int n, double x) {
  return {boost::math::sph_bessel(unsigned(n), x), boost::math::sph_neumann(unsigned(n), x)};
}
cplx boost_dh(int n, double x) {
  return {boost::math::sph_bessel_prime(unsigned(n), x),
          boost::math::sph_neumann_prime(unsigned(n), x)};
}

struct BoostValue {
  cplx value;
  double abs_sum;  // |u_inc| + sum |term_n|: the scale of the rounding error
};

// The exterior total field (radial_derivative = false) or du/dr at the point center + r xhat.
BoostValue boost_exterior(double k, double a, SphereBoundary bc, const Incident& inc,
                          const Vec3& xhat, double r, bool radial_derivative, int n_ref) {
  const Vec3 x = kCenter + xhat * r;
  const bool rigid = bc == SphereBoundary::Rigid;
  const bool plane = inc.kind == Incident::Kind::PlaneWave;
  const double ka = k * a;
  const Vec3 rel_source = inc.source - kCenter;
  const double r_s = norm(rel_source);
  const Vec3 axis = plane ? normalized(inc.direction) : rel_source * (1.0 / r_s);
  const double t = dot(xhat, axis);
  const cplx phase = std::polar(1.0, k * dot(normalized(inc.direction), kCenter));

  BoostValue out;
  out.value =
      radial_derivative ? incident_normal_derivative(k, inc, x, xhat) : incident_field(k, inc, x);
  out.abs_sum = std::abs(out.value);
  for (int n = 0; n < n_ref; ++n) {
    const double j_den = rigid ? boost::math::sph_bessel_prime(unsigned(n), ka)
                               : boost::math::sph_bessel(unsigned(n), ka);
    const cplx h_den = rigid ? boost_dh(n, ka) : boost_h(n, ka);
    const cplx h_r = radial_derivative ? k * boost_dh(n, k * r) : boost_h(n, k * r);
    const double p_n = boost::math::legendre_p(n, t);
    cplx term;
    if (plane) {
      term = -phase * (2.0 * n + 1.0) * std::pow(kI, n) * ((j_den * h_r) / h_den) * p_n;
    } else {
      term = -(kI * k / (4.0 * kPi)) * (2.0 * n + 1.0) * (boost_h(n, k * r_s) / h_den) *
             (j_den * h_r) * p_n;
    }
    out.value += term;
    out.abs_sum += std::abs(term);
  }
  return out;
}

struct HelmholtzCase {
  double k;
  SphereBoundary bc;
  Incident inc;
  const char* name;
};

std::vector<HelmholtzCase> helmholtz_cases() {
  std::vector<HelmholtzCase> cases;
  const Incident plane = Incident::plane_wave({1.0, 1.0, -1.0});
  const Incident point = Incident::point_source(kCenter + kSourceAxis * 2.0);  // r_s = 2a
  for (const double k : {1.0, 8.0}) {
    cases.push_back({k, SphereBoundary::Rigid, plane, "rigid plane"});
    cases.push_back({k, SphereBoundary::Soft, plane, "soft plane"});
    cases.push_back({k, SphereBoundary::Rigid, point, "rigid point"});
    cases.push_back({k, SphereBoundary::Soft, point, "soft point"});
  }
  return cases;
}

// Reference terms: plane wave ka + 40 (|j_n(ka)| < 1e-30 beyond), point source 80 ((a/r_s)^80 <
// 1e-24). Tolerance: each Boost term is good to some tens of ulp, my terms to ~n ulp (eta
// recurrence, Legendre recurrence): budget 4 (n_ref + 50) eps relative to abs_sum.
int reference_terms(const HelmholtzCase& c) {
  return c.inc.kind == Incident::Kind::PlaneWave ? static_cast<int>(c.k) + 40 : 80;
}
double helmholtz_tolerance(int n_ref) { return 4.0 * (n_ref + 50) * kEps; }

TEST(SphereHelmholtz, BoostSeriesSatisfiesBoundaryCondition) {
  // Rigid: du/dr(a) = 0; soft: u(a) = 0. The closed-form incident part must cancel the series,
  // which checks the expansion coefficients c_n (i^n, the centre phase, h_n(k r_s)).
  const double a = 1.0;
  for (const HelmholtzCase& c : helmholtz_cases()) {
    const bool rigid = c.bc == SphereBoundary::Rigid;
    const int n_ref = reference_terms(c);
    double worst = 0.0;
    for (const Vec3& xhat : test_directions(kSourceAxis, 30)) {
      const BoostValue residual = boost_exterior(c.k, a, c.bc, c.inc, xhat, a, rigid, n_ref);
      ASSERT_TRUE(std::isfinite(residual.abs_sum));
      const double tol = helmholtz_tolerance(n_ref) * residual.abs_sum;
      EXPECT_LT(std::abs(residual.value), tol) << c.name << " k = " << c.k;
      worst = std::max(worst, std::abs(residual.value) / tol);
    }
    record_margin(std::string(c.name) + " k=" + std::to_string(c.k), worst, 1.0);
  }
}

TEST(SphereHelmholtz, SurfaceValueMatchesBoostSeries) {
  const double a = 1.0;
  for (const HelmholtzCase& c : helmholtz_cases()) {
    const SphereScattering sphere(c.k, a, kCenter, c.bc, c.inc);
    const bool rigid = c.bc == SphereBoundary::Rigid;
    const int n_ref = reference_terms(c);
    ASSERT_LE(sphere.terms(), n_ref) << c.name << " k = " << c.k;
    double worst = 0.0;
    for (const Vec3& xhat : test_directions(kSourceAxis)) {
      // Rigid: u(a); soft: du/dr(a).
      const BoostValue want = boost_exterior(c.k, a, c.bc, c.inc, xhat, a, !rigid, n_ref);
      const cplx got = sphere.surface_value(kCenter + xhat * 0.5);
      const double error = std::abs(got - want.value);
      const double tol = helmholtz_tolerance(n_ref) * want.abs_sum;
      worst = std::max(worst, error / tol);
      EXPECT_LT(error, tol) << c.name << " k = " << c.k;
    }
    record_margin(std::string(c.name) + " k=" + std::to_string(c.k), worst, 1.0);
  }
}

// ---------------------------------------------------------------------------------------------
// k -> 0. From h_n(x) = -i (2n-1)!!/x^(n+1) [1 + x^2/(2(2n-1)) + ...] + j_n(x) (relative
// x^(2n+1)), only n = 0 has an O(k) term:
//   point source, rigid: u_k - u_0 = ik/(4 pi) (the constant part of G, left unchanged)
//   point source, soft:  q_k - q_0 = ik (r_s - a) / (4 pi a r_s)
//   plane wave, rigid:   u_k = e^{ik d.c} (1 + (3/2) ik a cos(gamma)) + O(k^2)
//   plane wave, soft:    q_k = e^{ik d.c} (1/a - ik + 3 ik cos(gamma)) + O(k^2)
// The O(k^2) remainders: point source, the n = 0 term has e^{ik(r_s-a)}/(1 - ika) (rigid) or
// e^{ik(r_s-a)} (soft) whose second-order part is <= (k r_s)^2 |term_0|, and each n >= 1 term has
// a relative correction <= k^2 r_s^2 / 2; hence <= k^2 r_s^2 S0, S0 = sum|terms| = the value at
// the nearest point; tolerance 2 k^2 r_s^2 S0. Plane wave: rigid n = 0 gives -(ka)^2/2 and n = 2
// gives -(5/9)(ka)^2, so <= 1.06 (ka)^2, tolerance 2 (ka)^2; soft n = 0 gives (ka)^2/(2a) and
// n = 2 gives (5/3) k^2 a, so <= 2.2 k^2 a (a = 1), tolerance 4 k^2 a.
TEST(SphereSmallK, PointSourceApproachesLaplace) {
  const double k = 1e-4, a = 1.0;
  for (const double r_s : {2.0, 1.5}) {
    const Incident inc = Incident::point_source(kCenter + kSourceAxis * r_s);
    for (const SphereBoundary bc : {SphereBoundary::Rigid, SphereBoundary::Soft}) {
      const SphereScattering helmholtz(k, a, kCenter, bc, inc);
      const SphereScattering laplace(0.0, a, kCenter, bc, inc);
      const cplx first_order = bc == SphereBoundary::Rigid
                                   ? kI * k / (4.0 * kPi)
                                   : kI * k * (r_s - a) / (4.0 * kPi * a * r_s);
      const double s0 = std::abs(laplace.surface_value(kCenter + kSourceAxis));
      const double tol = 2.0 * k * k * r_s * r_s * s0;
      double worst = 0.0;
      for (const Vec3& xhat : test_directions(kSourceAxis, 30)) {
        const Vec3 x = kCenter + xhat;
        const cplx difference = helmholtz.surface_value(x) - laplace.surface_value(x);
        EXPECT_LT(std::abs(difference - first_order), tol) << "r_s = " << r_s;
        worst = std::max(worst, std::abs(difference - first_order));
        // Not vacuous: the O(k) term is 74 (soft, r_s = 1.5) to 960 (rigid, r_s = 2) times tol.
        EXPECT_GT(std::abs(difference), 50 * tol);
      }
      record_margin(std::string(bc == SphereBoundary::Rigid ? "rigid" : "soft") +
                        " r_s=" + std::to_string(r_s),
                    worst, tol);
    }
  }
}

TEST(SphereSmallK, PlaneWaveApproachesLaplace) {
  const double k = 1e-4, a = 1.0;
  const Vec3 d = normalized(Vec3{0.2, -0.4, 1.0});
  const cplx phase = std::polar(1.0, k * dot(d, kCenter));
  const SphereScattering rigid(k, a, kCenter, SphereBoundary::Rigid, Incident::plane_wave(d));
  const SphereScattering soft(k, a, kCenter, SphereBoundary::Soft, Incident::plane_wave(d));
  double worst_rigid = 0.0, worst_soft = 0.0;
  for (const Vec3& xhat : test_directions(d, 30)) {
    const double t = dot(xhat, d);
    const Vec3 x = kCenter + xhat * a;
    const double rigid_error =
        std::abs(rigid.surface_value(x) - phase * (1.0 + 1.5 * kI * k * a * t));
    const double soft_error =
        std::abs(soft.surface_value(x) - phase * (1.0 / a - kI * k + 3.0 * kI * k * t));
    EXPECT_LT(rigid_error, 2.0 * k * k * a * a);
    EXPECT_LT(soft_error, 4.0 * k * k * a);
    worst_rigid = std::max(worst_rigid, rigid_error);
    worst_soft = std::max(worst_soft, soft_error);
  }
  record_margin("rigid", worst_rigid, 2.0 * k * k * a * a);
  record_margin("soft", worst_soft, 4.0 * k * k * a);
}

// ---------------------------------------------------------------------------------------------
// Invariance. The values depend on the geometry only through t = cos(gamma); rounding moves t by
// at most ~8 eps. The truncated series is a polynomial of degree N - 1 in t, so by Markov's
// inequality |du/dt| <= N^2 max|u| on [-1, 1]; with the rounding of the sum itself (also within
// this bound for these cases) the tolerance is 16 N^2 eps max|u|.

Vec3 rotate(const Vec3& v, const Vec3& axis, double angle) {  // Rodrigues
  const Vec3 u = normalized(axis);
  return v * std::cos(angle) + cross(u, v) * std::sin(angle) +
         u * (dot(u, v) * (1.0 - std::cos(angle)));
}

TEST(SphereSymmetry, RotatingEverythingLeavesValuesUnchanged) {
  const double k = 8.0, a = 1.0;
  const Vec3 axis{0.3, 1.0, -0.6};
  const double angle = 1.234;
  const auto rot = [&](const Vec3& v) { return rotate(v, axis, angle); };
  const Incident plane = Incident::plane_wave({0.0, 0.6, 0.8});
  const Incident point = Incident::point_source(kCenter + kSourceAxis * 1.3);
  for (const Incident& inc : {plane, point}) {
    Incident rotated = inc;
    rotated.direction = rot(inc.direction);
    rotated.source = rot(inc.source);
    for (const SphereBoundary bc : {SphereBoundary::Rigid, SphereBoundary::Soft}) {
      const SphereScattering original(k, a, kCenter, bc, inc);
      const SphereScattering turned(k, a, rot(kCenter), bc, rotated);
      std::vector<cplx> before, after;
      double max_abs = 0.0;
      for (const Vec3& xhat : test_directions(kSourceAxis)) {
        const Vec3 x = kCenter + xhat * a;
        before.push_back(original.surface_value(x));
        after.push_back(turned.surface_value(rot(x)));
        max_abs = std::max(max_abs, std::abs(before.back()));
      }
      const double n = original.terms();
      const double tol = 16.0 * n * n * kEps * max_abs;
      double worst = 0.0;
      for (std::size_t i = 0; i < before.size(); ++i) {
        EXPECT_LT(std::abs(before[i] - after[i]), tol) << "point " << i;
        worst = std::max(worst, std::abs(before[i] - after[i]));
      }
      record_margin(std::string(inc.kind == Incident::Kind::PlaneWave ? "plane" : "point") +
                        (bc == SphereBoundary::Rigid ? " rigid" : " soft"),
                    worst, tol);
    }
  }
}

TEST(SphereSymmetry, TranslationMultipliesPlaneWaveByPhase) {
  // exp(ik d.x) = exp(ik d.c) exp(ik d.(x - c)); same t bit for bit, so only the product with the
  // phase differs: rounding of a few ulp per term, inside 16 N^2 eps max|u| as above.
  const double k = 8.0, a = 1.0;
  const Incident plane = Incident::plane_wave({0.0, 0.6, 0.8});
  const cplx phase = std::polar(1.0, k * dot(Vec3{0.0, 0.6, 0.8}, kCenter));
  for (const SphereBoundary bc : {SphereBoundary::Rigid, SphereBoundary::Soft}) {
    const SphereScattering shifted(k, a, kCenter, bc, plane);
    const SphereScattering at_origin(k, a, Vec3{}, bc, plane);
    const double n = shifted.terms();
    for (const Vec3& xhat : test_directions({0, 0, 1})) {
      const cplx want = phase * at_origin.surface_value(xhat * a);
      EXPECT_LT(std::abs(shifted.surface_value(kCenter + xhat * a) - want),
                16.0 * n * n * kEps * std::max(1.0, std::abs(want)) * 2.0);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Term counts, cost, invalid input.

TEST(SphereSeries, TermCountsAreModest) {
  // Plane wave: past n ~ ka the terms fall like exp(-c (n - ka)^(3/2) / (ka)^(1/2)), so the count
  // for a fixed tolerance is ka + C (ka)^(1/3). For a 1e-16 tail C is about 11 (33, 92, 264 terms
  // at ka = 8, 50, 200); the familiar ka + 15 + 4 (ka)^(1/3) leaves terms of 1e-11 (relative to
  // the largest) at ka = 200. Bound: ka + 15 + 12 (ka)^(1/3).
  for (const double ka : {0.01, 1.0, 8.0, 50.0, 200.0}) {
    const SphereScattering sphere(ka, 1.0, {}, SphereBoundary::Rigid,
                                  Incident::plane_wave({0, 0, 1}));
    EXPECT_LE(sphere.terms(), ka + 15.0 + 12.0 * std::cbrt(ka)) << "ka = " << ka;
    EXPECT_GE(sphere.terms(), ka) << "ka = " << ka;
  }
  // Point source at r_s = 2a: past ka the terms fall like 2^-n, ~55 more for 1e-16.
  const SphereScattering point(8.0, 1.0, {}, SphereBoundary::Soft,
                               Incident::point_source({0, 0, 2}));
  EXPECT_LE(point.terms(), 8 + 70);
  // Close source (r_s = 1.05a) works; 1.005a would need ~9000 terms and is refused.
  const SphereScattering close(0.0, 1.0, {}, SphereBoundary::Soft,
                               Incident::point_source({0, 0, 1.05}));
  EXPECT_LT(close.terms(), 1000);
  EXPECT_THROW(
      SphereScattering(0.0, 1.0, {}, SphereBoundary::Soft, Incident::point_source({0, 0, 1.005})),
      Error);
  EXPECT_THROW(
      SphereScattering(3.0, 1.0, {}, SphereBoundary::Rigid, Incident::point_source({0, 0, 1.005})),
      Error);
}

TEST(SphereSeries, SurfaceValueIsCheap) {
  // Not timed (machines differ): evaluates 2e5 points and reports the cost per point.
  const SphereScattering sphere(8.0, 1.0, kCenter, SphereBoundary::Rigid,
                                Incident::point_source(kCenter + kSourceAxis * 1.2));
  const int count = 200000;
  cplx sum = 0.0;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < count; ++i) {
    const double z = 1.0 - 2.0 * (i + 0.5) / count, phi = 2.39996 * i;
    const double rho = std::sqrt(1.0 - z * z);
    sum += sphere.surface_value(kCenter + Vec3{rho * std::cos(phi), rho * std::sin(phi), z});
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_TRUE(std::isfinite(std::abs(sum)));
  RecordProperty("terms", sphere.terms());
  RecordProperty("ns_per_point", std::to_string(1e9 * seconds / count));
  std::printf("[ info ] %d terms, %.1f ns per surface_value\n", sphere.terms(),
              1e9 * seconds / count);
}

TEST(SphereSeries, InvalidInputThrows) {
  const Incident plane = Incident::plane_wave({0, 0, 1});
  const auto make = [](double k, double a, const Incident& inc) {
    return SphereScattering(k, a, {}, SphereBoundary::Rigid, inc);
  };
  EXPECT_THROW(make(-1.0, 1.0, plane), Error);
  EXPECT_THROW(make(std::nan(""), 1.0, plane), Error);
  EXPECT_THROW(make(1.0, 0.0, plane), Error);
  EXPECT_THROW(make(1.0, -2.0, plane), Error);
  EXPECT_THROW(make(1.0, 1.0, Incident::plane_wave({0, 0, 0})), Error);
  EXPECT_THROW(make(0.0, 1.0, Incident::plane_wave({0, 0, 0})), Error);
  EXPECT_THROW(make(1.0, 1.0, Incident::point_source({0, 0, 0.5})), Error);  // inside
  EXPECT_THROW(make(1.0, 1.0, Incident::point_source({0, 1.0, 0})), Error);  // on the surface
  EXPECT_THROW(make(0.0, 1.0, Incident::point_source({0, 0, 1.0})), Error);
  EXPECT_THROW(make(1.0, 1.0, plane).surface_value({0, 0, 0}), Error);  // centre: no projection
}

}  // namespace
}  // namespace fmbem::exact

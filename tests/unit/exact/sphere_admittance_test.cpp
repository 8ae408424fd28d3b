// The admittance sphere (du/dn = -i k B u): its rigid (B = 0) and soft (B -> infinity) limits, an
// independent Boost evaluation of the per-degree formulas, and power balance (optical theorem).
#include <gtest/gtest.h>

#include <boost/math/quadrature/gauss.hpp>
#include <boost/math/special_functions/bessel.hpp>
#include <boost/math/special_functions/bessel_prime.hpp>
#include <boost/math/special_functions/legendre.hpp>
#include <cmath>
#include <limits>
#include <numbers>
#include <vector>

#include "fmbem/core/error.hpp"
#include "fmbem/exact/incident.hpp"
#include "fmbem/exact/sphere.hpp"
#include "fmbem/exact/sphere_field.hpp"

namespace fmbem::exact {
namespace {

constexpr double kEps = std::numeric_limits<double>::epsilon();
constexpr double kPi = std::numbers::pi;
constexpr cplx kI{0.0, 1.0};

const Vec3 kCenter{0.3, -0.2, 0.5};
const Vec3 kDirection = normalized(Vec3{1.0, -2.0, 0.5});

// Points on the sphere of radius r about kCenter at polar angles to kDirection.
Vec3 point(double r, double theta) {
  const Vec3 u = normalized(cross(kDirection, Vec3{0, 0, 1}));
  return kCenter + r * (std::cos(theta) * kDirection + std::sin(theta) * u);
}
const std::vector<double> kAngles{0.0, 0.4, 1.3, 2.2, kPi};

// B = 0 takes the rigid formulas (the code shares them): equal to a few ulp, 1e-14 relative.
TEST(SphereAdmittance, ZeroAdmittanceIsRigid) {
  for (const Incident& inc :
       {Incident::plane_wave(kDirection), Incident::point_source(kCenter + 2.5 * kDirection)}) {
    for (double k : {0.0, 0.7, 6.0}) {
      const SphereScattering rigid(k, 1.2, kCenter, SphereBoundary::Rigid, inc);
      const SphereScattering zero(k, 1.2, kCenter, SphereBoundary::Admittance, inc, 0.0);
      const SphereScatteredField rigid_field(k, 1.2, kCenter, SphereBoundary::Rigid, inc);
      const SphereScatteredField zero_field(k, 1.2, kCenter, SphereBoundary::Admittance, inc);
      for (double theta : kAngles) {
        const cplx want = rigid.surface_value(point(1.2, theta));
        EXPECT_LE(std::abs(zero.surface_value(point(1.2, theta)) - want), 1e-14 * std::abs(want));
        const cplx want_field = rigid_field.scattered(point(2.0, theta));
        EXPECT_LE(std::abs(zero_field.scattered(point(2.0, theta)) - want_field),
                  1e-14 * std::abs(want_field));
      }
    }
  }
}

// q = -i k B u tends to the soft sphere's q: per degree q_n^B / q_n^soft = 1 / (1 + L_n / (i B))
// with L_n = h_n'/h_n at ka, |L_n| <= (n + 1)/(ka) + 1, so |q^B - q^soft| <= sum |c_n^soft|
// |L_n| / (|B| - |L_n|) <= rel sum |c_n^soft|, rel = L_max / (|B| - L_max), L_max at n = terms.
// sum |c_n| is not exposed; for these smooth fields (ka = 2) it is a few max|q| (the measured
// error is 0.05-0.12 rel max|q|): budget 10 rel max|q|, plus 1e-12 max|q| for rounding.
// At B = 1e8, ka = 2, rel is 1e-7 to 3e-7.
TEST(SphereAdmittance, LargeAdmittanceTendsToSoft) {
  const double k = 2.0, a = 1.0;
  const cplx admittance{1e8, 3e7};
  for (const Incident& inc :
       {Incident::plane_wave(kDirection), Incident::point_source(kCenter + 1.8 * kDirection)}) {
    const SphereScattering soft(k, a, kCenter, SphereBoundary::Soft, inc);
    const SphereScattering large(k, a, kCenter, SphereBoundary::Admittance, inc, admittance);
    const double l_max = (soft.terms() + 1.0) / (k * a) + 1.0;
    const double relative = l_max / (std::abs(admittance) - l_max);
    double scale = 0.0;
    for (double theta : kAngles)
      scale = std::max(scale, std::abs(soft.surface_value(point(a, theta))));
    for (double theta : kAngles) {
      const cplx want = soft.surface_value(point(a, theta));
      const cplx got = -kI * k * admittance * large.surface_value(point(a, theta));
      EXPECT_LT(std::abs(got - want), (10.0 * relative + 1e-12) * scale) << "theta = " << theta;
    }
  }
}

// Independent per-degree evaluation with Boost at small ka (j_n, y_n accurate there to n = 40):
//   u_n(a) = a_n i / (x^2 (h_n' + i B h_n)),  s_n = -a_n (j_n' + i B j_n) / (h_n' + i B h_n).
struct Reference {
  cplx value = 0.0;
  double abs_sum = 0.0;
};
cplx hankel(int n, double x) {
  return {boost::math::sph_bessel(unsigned(n), x), boost::math::sph_neumann(unsigned(n), x)};
}
cplx hankel_prime(int n, double x) {
  return {boost::math::sph_bessel_prime(unsigned(n), x),
          boost::math::sph_neumann_prime(unsigned(n), x)};
}
Reference boost_admittance(double k, double a, cplx admittance, double r, double t, bool surface) {
  const double x = k * a;
  const cplx phase = std::polar(1.0, k * dot(kDirection, kCenter));
  Reference out;
  for (int n = 0; n <= 40; ++n) {
    const cplx a_n = phase * (2.0 * n + 1.0) * std::pow(kI, n);
    const cplx den = hankel_prime(n, x) + kI * admittance * hankel(n, x);
    const cplx term = surface ? a_n * kI / (x * x * den)
                              : -a_n *
                                    (boost::math::sph_bessel_prime(unsigned(n), x) +
                                     kI * admittance * boost::math::sph_bessel(unsigned(n), x)) /
                                    den * hankel(n, k * r);
    const cplx with_p = term * boost::math::legendre_p(n, t);
    out.value += with_p;
    out.abs_sum += std::abs(with_p);
  }
  return out;
}

// Tolerance as the rigid/soft Boost comparison: 4 (n_ref + 50) eps sum |terms| (Boost's few tens
// of ulp per function, the recurrences' linear growth); 41 terms at ka = 1.5 leave a tail below
// (1.5/2)^41 / 41!! ~ 1e-30.
TEST(SphereAdmittance, MatchesBoostPerDegreeFormula) {
  const double k = 1.5, a = 1.0;
  for (cplx admittance : {cplx(1.0, 0.0), cplx(0.5, 2.0), cplx(0.0, -0.7)}) {
    const Incident inc = Incident::plane_wave(kDirection);
    const SphereScattering sphere(k, a, kCenter, SphereBoundary::Admittance, inc, admittance);
    const SphereScatteredField field(k, a, kCenter, SphereBoundary::Admittance, inc, admittance);
    for (double theta : kAngles) {
      const double t = std::cos(theta);
      const Reference surface = boost_admittance(k, a, admittance, a, t, true);
      const double tol = 4.0 * (40 + 50) * kEps * surface.abs_sum;
      EXPECT_LT(std::abs(sphere.surface_value(point(a, theta)) - surface.value), tol)
          << "B = " << admittance << ", theta = " << theta;
      const Reference scattered = boost_admittance(k, a, admittance, 1.7 * a, t, false);
      EXPECT_LT(std::abs(field.scattered(point(1.7 * a, theta)) - scattered.value),
                4.0 * (40 + 50) * kEps * scattered.abs_sum)
          << "B = " << admittance << ", theta = " << theta;
    }
  }
}

// Power balance for a unit plane wave. The time-averaged outward flux of a field u through a
// closed surface is proportional to int Im(conj(u) du/dn) dS (intensity ~ Re(p conj(v)),
// v = grad p / (i omega rho)); on the sphere du/dn = -i k B u gives
//   absorbed = -int Im(conj(u) du/dn) dS = k Re(B) int |u|^2 dS >= 0,
// and for the total field far away the optical theorem gives
//   absorbed = 4 pi Im F(d) - k int |F|^2 dOmega
// (extinction minus scattering; incident flux density k). The integrands are polynomials in
// t = cos(angle to d) of degree 2(N - 1) (azimuthally symmetric), so a 64-point Gauss-Legendre
// rule is exact for N <= 64 terms: the two sides differ by rounding, a few hundred eps of
// 4 pi |F(d)| + k int |F|^2: tolerance 1e-12 of that. B purely imaginary: nothing absorbed.
TEST(SphereAdmittance, AbsorbedPowerBalancesTheOpticalTheorem) {
  const double k = 2.0, a = 1.0;
  using Rule = boost::math::quadrature::gauss<double, 64>;
  const Vec3 u = normalized(cross(kDirection, Vec3{0, 0, 1}));
  for (cplx admittance : {cplx(0.7, 0.4), cplx(3.0, -1.0), cplx(0.0, 2.0)}) {
    const Incident inc = Incident::plane_wave(kDirection);
    const SphereScattering sphere(k, a, kCenter, SphereBoundary::Admittance, inc, admittance);
    const SphereScatteredField field(k, a, kCenter, SphereBoundary::Admittance, inc, admittance);
    ASSERT_LE(field.terms(), 64);
    const auto on_axis = [&](double t) {
      return kDirection * t + u * std::sqrt(std::max(0.0, 1.0 - t * t));
    };
    const double surface_integral =
        2.0 * kPi * a * a *
        Rule::integrate(
            [&](double t) { return std::norm(sphere.surface_value(kCenter + a * on_axis(t))); },
            -1.0, 1.0);
    const double scattered_power =
        k * 2.0 * kPi *
        Rule::integrate([&](double t) { return std::norm(field.far_field(on_axis(t))); }, -1.0,
                        1.0);
    const double extinction = 4.0 * kPi * field.far_field(kDirection).imag();
    const double absorbed = k * admittance.real() * surface_integral;
    const double tol =
        1e-12 * (4.0 * kPi * std::abs(field.far_field(kDirection)) + scattered_power);
    EXPECT_NEAR(absorbed, extinction - scattered_power, tol) << "B = " << admittance;
    if (admittance.real() > 0.0) EXPECT_GT(absorbed, 1e3 * tol);  // not vacuous
  }
}

TEST(SphereAdmittance, InvalidAdmittanceThrows) {
  const Incident inc = Incident::plane_wave({0, 0, 1});
  const auto make = [&](SphereBoundary bc, cplx admittance) {
    return SphereScattering(1.0, 1.0, {}, bc, inc, admittance);
  };
  EXPECT_THROW(make(SphereBoundary::Admittance, cplx(-0.1, 0.0)), Error);  // active
  EXPECT_THROW(make(SphereBoundary::Admittance, cplx(std::nan(""), 0.0)), Error);
  EXPECT_THROW(make(SphereBoundary::Rigid, cplx(1.0, 0.0)), Error);  // B for a rigid sphere
  EXPECT_THROW(SphereScatteredField(1.0, 1.0, {}, SphereBoundary::Soft, inc, 2.0), Error);
  EXPECT_NO_THROW(make(SphereBoundary::Admittance, cplx(0.0, -5.0)));
}

}  // namespace
}  // namespace fmbem::exact

// SphereScatteredField against the surface series (an independent sum: total field or its
// cancellation at r = a), the Kelvin image (Laplace, soft), and its own far-field limit.
#include "fmbem/exact/sphere_field.hpp"

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
const Vec3 kCenter{0.3, -0.2, 0.5};
constexpr double kRadius = 1.3;

std::vector<Vec3> fibonacci(int count) {
  std::vector<Vec3> dirs{{0, 0, 1}, {0, 0, -1}};
  const double golden = kPi * (3.0 - std::sqrt(5.0));
  for (int i = 0; i < count; ++i) {
    const double z = 1.0 - 2.0 * (i + 0.5) / count;
    const double rho = std::sqrt(1.0 - z * z);
    dirs.push_back({rho * std::cos(golden * i), rho * std::sin(golden * i), z});
  }
  return dirs;
}

// Rounding bound of a series of `terms` terms for a value of size `scale`: each term is within a
// few eps of its exact value relative to the value (the recurrences are stable; their errors
// grow at most linearly in n, but the terms of large n are small), and the sum adds one eps per
// term: 10 terms eps scale, the 10 for the terms of size up to a few times the value that cancel
// (measured: 1e-14 relative at k a = 39, 3.4e-15 with 822 terms, within 1/14 of this).
double rounding_bound(int terms, double scale) { return 10.0 * terms * kEps * scale; }

struct Case {
  double k;
  SphereBoundary bc;
  Incident incident;
};

std::vector<Case> cases() {
  std::vector<Case> out;
  const Incident plane = Incident::plane_wave({1.0, -2.0, 0.5});
  const Incident far_source = Incident::point_source(kCenter + Vec3{0.0, 3.0 * kRadius, 0.0});
  // r_s / a = 1.05: hundreds of terms, where h_n(k r_s) overflows unless kept in ratios.
  const Incident near_source =
      Incident::point_source(kCenter + normalized(Vec3{1, 1, -1}) * (1.05 * kRadius));
  for (double k : {0.5, 4.0, 8.0, 30.0})
    for (SphereBoundary bc : {SphereBoundary::Rigid, SphereBoundary::Soft})
      for (const Incident& inc : {plane, far_source, near_source}) out.push_back({k, bc, inc});
  return out;
}

// On r = a: rigid, u_inc + u_s is the surface series' total field; soft, u_s = -u_inc.
TEST(SphereScatteredField, MeetsTheBoundaryConditionOnTheSphere) {
  for (const Case& c : cases()) {
    const SphereScatteredField field(c.k, kRadius, kCenter, c.bc, c.incident);
    const SphereScattering surface(c.k, kRadius, kCenter, c.bc, c.incident);
    double largest = 0.0, worst = 0.0;
    for (const Vec3& d : fibonacci(40)) {
      const Vec3 x = kCenter + d * kRadius;
      const cplx u_inc = incident_field(c.k, c.incident, x);
      const cplx expected = c.bc == SphereBoundary::Rigid ? surface.surface_value(x) : -u_inc;
      const cplx got =
          c.bc == SphereBoundary::Rigid ? u_inc + field.scattered(x) : field.scattered(x);
      largest = std::max(largest, std::abs(expected));
      worst = std::max(worst, std::abs(got - expected));
    }
    const double tol = rounding_bound(field.terms(), largest);
    EXPECT_LE(worst, tol) << "k = " << c.k << ", rigid " << (c.bc == SphereBoundary::Rigid)
                          << ", point source " << (c.incident.kind == Incident::Kind::PointSource)
                          << ", terms " << field.terms() << ", largest " << largest;
  }
}

// Laplace, soft sphere, point source: the Kelvin image u_s = -(a / r_s) G(x - s*),
// s* = c + (a / r_s)^2 (s - c), at points outside and on the sphere.
TEST(SphereScatteredField, LaplaceSoftIsTheKelvinImage) {
  for (double r_s : {1.2, 3.0}) {
    const Vec3 s = kCenter + normalized(Vec3{0.2, -1.0, 0.4}) * (r_s * kRadius);
    const SphereScatteredField field(0.0, kRadius, kCenter, SphereBoundary::Soft,
                                     Incident::point_source(s));
    const Vec3 image = kCenter + (s - kCenter) * (1.0 / (r_s * r_s));
    for (double r : {1.0, 1.1, 2.0, 10.0})
      for (const Vec3& d : fibonacci(20)) {
        const Vec3 x = kCenter + d * (r * kRadius);
        const cplx expected = -(1.0 / r_s) / (4.0 * kPi * norm(x - image));
        // The series converges like (a^2 / (r_s r))^n: terms() is the surface series' count
        // for (a / r_s)^n plus 10; rounding as above.
        EXPECT_NEAR(std::abs(field.scattered(x) - expected), 0.0,
                    rounding_bound(field.terms(), std::abs(expected)))
            << "r_s/a = " << r_s << ", r/a = " << r;
      }
  }
}

// Laplace: the rigid point-source series on r = a against the surface series; the "plane wave"
// u_inc = 1 gives u_s = 0 (rigid) and -a/r (soft).
TEST(SphereScatteredField, LaplaceRigidAndUniformIncidence) {
  const Vec3 s = kCenter + Vec3{0.0, 0.0, 2.0 * kRadius};
  const SphereScatteredField rigid(0.0, kRadius, kCenter, SphereBoundary::Rigid,
                                   Incident::point_source(s));
  const SphereScattering surface(0.0, kRadius, kCenter, SphereBoundary::Rigid,
                                 Incident::point_source(s));
  for (const Vec3& d : fibonacci(30)) {
    const Vec3 x = kCenter + d * kRadius;
    const cplx expected = surface.surface_value(x);
    EXPECT_NEAR(
        std::abs(incident_field(0.0, Incident::point_source(s), x) + rigid.scattered(x) - expected),
        0.0, rounding_bound(rigid.terms(), std::abs(expected)));
  }
  const Incident uniform = Incident::plane_wave({0, 0, 1});
  const SphereScatteredField hard(0.0, kRadius, kCenter, SphereBoundary::Rigid, uniform);
  const SphereScatteredField soft(0.0, kRadius, kCenter, SphereBoundary::Soft, uniform);
  const Vec3 x = kCenter + Vec3{0.4, 2.0, -1.0};
  EXPECT_EQ(hard.scattered(x), cplx(0.0));
  EXPECT_NEAR(std::abs(soft.scattered(x) + kRadius / norm(x - kCenter)), 0.0, 4 * kEps);
}

// F(d) against |x| e^{-ik|x|} u_s(x) at |x| = R: h_n(z) = (-i)^{n+1} e^{iz} / z (1 + i n(n+1) /
// (2z) + O(n^4 / z^2)), and e^{ik|x - c|} / |x - c| = e^{ikR} / R e^{-ik d.c} (1 + O(k |c|^2 / R)),
// so the two differ by at most terms^2 / (k R) + k |c|^2 / R relative (R = 1e6 a: large enough
// for that bound, small enough that k R rounds to below 1e-8 in the phase). The point source at
// 1.05 a is left out: its hundreds of terms make the bound void (they decay as 0.95^n).
TEST(SphereScatteredField, FarFieldIsTheLimitOfTheField) {
  const double big = 1e6 * kRadius;
  for (const Case& c : cases()) {
    if (c.incident.kind == Incident::Kind::PointSource &&
        norm(c.incident.source - kCenter) < 2 * kRadius)
      continue;
    const SphereScatteredField field(c.k, kRadius, kCenter, c.bc, c.incident);
    const double n = field.terms();
    const double tol = n * n / (c.k * big) + c.k * dot(kCenter, kCenter) / big;
    for (const Vec3& d : fibonacci(12)) {
      const cplx far = field.far_field(d);
      const cplx limit = big * std::polar(1.0, -c.k * big) * field.scattered(d * big);
      EXPECT_LE(std::abs(far - limit), tol * std::abs(far) + 1e-14)
          << "k = " << c.k << ", terms " << field.terms();
    }
  }
}

TEST(SphereScatteredField, RefusesWhatItCannotGive) {
  const SphereScatteredField laplace(0.0, 1.0, {}, SphereBoundary::Rigid,
                                     Incident::point_source({0, 0, 2}));
  EXPECT_THROW(laplace.far_field({1, 0, 0}), Error);
  EXPECT_THROW(laplace.scattered({0, 0, 0}), Error);
  EXPECT_THROW(
      SphereScatteredField(1.0, 1.0, {}, SphereBoundary::Soft, Incident::point_source({0, 0, 0.5})),
      Error);
  const SphereScatteredField helmholtz(2.0, 1.0, {}, SphereBoundary::Soft,
                                       Incident::plane_wave({0, 0, 1}));
  EXPECT_THROW(helmholtz.far_field({0, 0, 0}), Error);
}

// Every field is linear in the incident wave's amplitude A: the incident field and its normal
// derivative, the surface series and the scattered and far fields are A times the unit wave's,
// for plane waves and point sources, Helmholtz and Laplace, every boundary.
TEST(IncidentAmplitude, EveryFieldIsLinearInIt) {
  const cplx a(0.5, -0.25);
  const Vec3 centre{0.1, -0.2, 0.3}, x{1.0, 1.5, -0.5}, n{0.6, 0.0, 0.8};
  for (const double k : {0.0, 2.5}) {
    for (const Incident unit :
         {Incident::plane_wave({0.3, 0.4, -0.5}), Incident::point_source({2.0, -1.0, 1.5})}) {
      Incident scaled = unit;
      scaled.amplitude = a;
      EXPECT_NEAR(std::abs(incident_field(k, scaled, x) - a * incident_field(k, unit, x)), 0.0,
                  1e-15);
      EXPECT_NEAR(std::abs(incident_normal_derivative(k, scaled, x, n) -
                           a * incident_normal_derivative(k, unit, x, n)),
                  0.0, 1e-15);
      for (const SphereBoundary bc :
           {SphereBoundary::Rigid, SphereBoundary::Soft, SphereBoundary::Admittance}) {
        const cplx admittance = bc == SphereBoundary::Admittance ? cplx(0.4, 0.2) : cplx(0.0);
        const SphereScattering s1(k, 0.8, centre, bc, unit, admittance),
            sa(k, 0.8, centre, bc, scaled, admittance);
        const Vec3 on = centre + Vec3{0.0, 0.8, 0.0};
        const cplx v1 = s1.surface_value(on);
        EXPECT_NEAR(std::abs(sa.surface_value(on) - a * v1), 0.0, 1e-14 * std::abs(v1));
        const SphereScatteredField f1(k, 0.8, centre, bc, unit, admittance),
            fa(k, 0.8, centre, bc, scaled, admittance);
        const cplx u1 = f1.scattered(x);
        EXPECT_NEAR(std::abs(fa.scattered(x) - a * u1), 0.0, 1e-14 * std::abs(u1) + 1e-300);
        if (k > 0) {
          const cplx g1 = f1.far_field(n);
          EXPECT_NEAR(std::abs(fa.far_field(n) - a * g1), 0.0, 1e-14 * std::abs(g1));
        }
      }
    }
  }
}

}  // namespace
}  // namespace fmbem::exact

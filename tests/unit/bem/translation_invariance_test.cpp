// The accurate integrals of a flat triangle depend on its shape and on where x lies relative to
// it, not on where the pair sits in space nor (but for the kernel's own scaling) on its size:
// a body far from the origin (CAD and scanned meshes in world coordinates or millimetres) must
// get the answers of the same body at the origin.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "fmbem/bem/hypersingular_integrals.hpp"
#include "fmbem/bem/moment_integrals.hpp"
#include "fmbem/bem/panel_integrals.hpp"

namespace fmbem {
namespace {

constexpr double eps = std::numeric_limits<double>::epsilon();

// A tilted scalene triangle of size ~1 and targets relative to it: its own centroid (the self
// term: in its plane up to the coordinates' rounding), a coplanar neighbour's centroid (flat
// faces: also in the plane), a close point off the plane, a far one.
struct Pair {
  Vec3 a{0.1, -0.2, 0.05}, b{0.9, 0.1, -0.1}, c{0.3, 0.7, 0.2};
  Vec3 n() const { return normalized(cross(b - a, c - a)); }
  Vec3 centroid() const { return (a + b + c) * (1.0 / 3.0); }
};

struct Target {
  const char* name;
  Vec3 x;
};

std::vector<Target> targets(const Pair& t) {
  const Vec3 mid_ab = (t.a + t.b) * 0.5;
  return {{"self", t.centroid()},
          {"coplanar neighbour", mid_ab - (t.c - mid_ab) * (1.0 / 3.0)},
          {"close, off the plane", mid_ab - (t.c - mid_ab) * 0.3 + t.n() * 0.03},
          {"far", t.centroid() + t.n() * 2.0 + Vec3{1, 1, 0}}};
}

Pair moved(const Pair& t, double scale, const Vec3& offset) {
  return {t.a * scale + offset, t.b * scale + offset, t.c * scale + offset};
}

// The targets of the pair at the origin, moved with it (the self term's is the moved triangle's
// own centroid, formed from its rounded corners as a mesh forms it).
std::vector<Target> moved_targets(const Pair& at_origin, double scale, const Vec3& offset) {
  std::vector<Target> xs = targets(at_origin);
  for (Target& x : xs) x.x = x.x * scale + offset;
  xs[0].x = moved(at_origin, scale, offset).centroid();
  return xs;
}

// The relative change a translation may cause: the corners and targets are rounded to
// eps |offset| in absolute coordinates, a relative perturbation of delta = eps |offset| / L of a
// triangle of size L ~ 1; these integrals are smooth in the corners with relative derivatives of
// order one on this well-shaped triangle (N, the most sensitive, varies like 1 / L), so a few
// delta; 64 delta leaves room for the sums of several such terms. The floor: rounding at the
// origin itself.
double translation_tolerance(double offset) { return 64.0 * eps * offset + 64.0 * eps; }

double relative(cplx got, cplx want, double scale) { return std::abs(got - want) / scale; }

TEST(TranslationInvariance, PanelAndHypersingularIntegralsAwayFromTheOrigin) {
  const Pair at_origin;
  const GaussLegendre angular(16);
  const Vec3 direction = normalized(Vec3{1.0, 0.5, -0.25});
  const std::vector<Target> reference_targets = targets(at_origin);
  for (const double distance : {1e-3, 1.0, 1e2, 1e4, 1e6}) {
    const Pair t = moved(at_origin, 1.0, direction * distance);
    const std::vector<Target> xs = moved_targets(at_origin, 1.0, direction * distance);
    const double tol = translation_tolerance(distance);
    for (std::size_t i = 0; i < xs.size(); ++i) {
      const std::string where = std::string(xs[i].name) + " at " + std::to_string(distance);
      for (const double k : {0.0, 3.0}) {
        const PanelIntegrals want = panel_integrals(k, at_origin.a, at_origin.b, at_origin.c,
                                                    reference_targets[i].x, angular);
        const PanelIntegrals got = panel_integrals(k, t.a, t.b, t.c, xs[i].x, angular);
        const double s_scale = std::abs(want.single_layer);
        // The double layer is a solid angle over 4 pi, at most 1/2: measured against 1.
        EXPECT_LE(relative(got.single_layer, want.single_layer, s_scale), tol) << where;
        EXPECT_LE(relative(got.double_layer, want.double_layer, 1.0), tol) << where;
        const HypersingularIntegrals hw =
            hypersingular_integrals(k, at_origin.a, at_origin.b, at_origin.c,
                                    reference_targets[i].x, at_origin.n(), angular);
        const HypersingularIntegrals hg =
            hypersingular_integrals(k, t.a, t.b, t.c, xs[i].x, t.n(), angular);
        EXPECT_LE(relative(hg.hypersingular, hw.hypersingular, std::abs(hw.hypersingular)), tol)
            << where;
        EXPECT_LE(relative(hg.adjoint_double_layer, hw.adjoint_double_layer, 1.0), tol) << where;
        EXPECT_LE(relative(hg.double_layer, hw.double_layer, 1.0), tol) << where;
      }
    }
    // In the plane, the principal values of a flat element: exactly zero, never the +-1/2 of a
    // limit from one side (what rounding made of the self term once the body was 1e4 away).
    const PanelIntegrals self = panel_integrals(3.0, t.a, t.b, t.c, t.centroid(), angular);
    EXPECT_EQ(self.double_layer, cplx(0.0)) << distance;
    const HypersingularIntegrals hself =
        hypersingular_integrals(3.0, t.a, t.b, t.c, t.centroid(), t.n(), angular);
    EXPECT_EQ(hself.double_layer, cplx(0.0)) << distance;
    // D' is n_x . grad S, whose in-plane part cancels to rounding on a flat element.
    EXPECT_LE(std::abs(hself.adjoint_double_layer), 64.0 * eps) << distance;
  }
}

TEST(TranslationInvariance, IntegralsScaleWithTheTriangle) {
  // Scaling the pair by s (and k by 1 / s) scales S by s, N by 1 / s and leaves D and D'
  // unchanged; powers of two scale exactly in binary, so any other s shows the rounding of the
  // scaled corners alone (relative eps): the same few-ulp results.
  const Pair unit;
  const GaussLegendre angular(16);
  const std::vector<Target> reference_targets = targets(unit);
  for (const double scale : {1e-6, 1e-3, 1e3, 1e6}) {
    const Pair t = moved(unit, scale, Vec3{});
    const std::vector<Target> xs = moved_targets(unit, scale, Vec3{});
    for (std::size_t i = 0; i < xs.size(); ++i) {
      const std::string where = std::string(xs[i].name) + " at scale " + std::to_string(scale);
      const double k = 3.0;
      const HypersingularIntegrals want = hypersingular_integrals(
          k, unit.a, unit.b, unit.c, reference_targets[i].x, unit.n(), angular);
      const HypersingularIntegrals got =
          hypersingular_integrals(k / scale, t.a, t.b, t.c, xs[i].x, t.n(), angular);
      const double tol = 1e3 * eps;
      EXPECT_LE(relative(got.single_layer / scale, want.single_layer, std::abs(want.single_layer)),
                tol)
          << where;
      EXPECT_LE(
          relative(got.hypersingular * scale, want.hypersingular, std::abs(want.hypersingular)),
          tol)
          << where;
      EXPECT_LE(relative(got.double_layer, want.double_layer, 1.0), tol) << where;
      EXPECT_LE(relative(got.adjoint_double_layer, want.adjoint_double_layer, 1.0), tol) << where;
    }
  }
}

TEST(TranslationInvariance, MonomialMomentsAwayFromTheOrigin) {
  // The moments of the density's quadratic read (monomials in the element's own frame, origin at
  // its centroid) at the self and neighbour targets.
  const Pair at_origin;
  const GaussLegendre angular(16), radial(6);
  const Vec3 direction = normalized(Vec3{-0.3, 1.0, 0.7});
  const std::vector<Target> reference_targets = targets(at_origin);
  const auto moments = [&](const Pair& t, const Vec3& x) {
    const Vec3 axis1 = normalized(t.b - t.a), axis2 = cross(t.n(), axis1);
    const HypersingularIntegrals constant =
        hypersingular_integrals(2.0, t.a, t.b, t.c, x, t.n(), angular);
    return monomial_moments(2.0, t.a, t.b, t.c, t.centroid(), axis1, axis2, x, t.n(), constant,
                            angular, radial);
  };
  for (const double distance : {1e-3, 1e2, 1e4, 1e6}) {
    const Pair t = moved(at_origin, 1.0, direction * distance);
    const std::vector<Target> xs = moved_targets(at_origin, 1.0, direction * distance);
    for (std::size_t i = 0; i < xs.size(); ++i) {
      const MonomialMoments want = moments(at_origin, reference_targets[i].x);
      const MonomialMoments got = moments(t, xs[i].x);
      double scale_d = 0.0, scale_n = 0.0, error_d = 0.0, error_n = 0.0;
      for (int m = 0; m < 5; ++m) {
        scale_d = std::max(scale_d, std::abs(want.double_layer[m]));
        scale_n = std::max(scale_n, std::abs(want.hypersingular[m]));
        error_d = std::max(error_d, std::abs(got.double_layer[m] - want.double_layer[m]));
        error_n = std::max(error_n, std::abs(got.hypersingular[m] - want.hypersingular[m]));
      }
      // The quadratic monomials' moments seen from afar are small differences of the
      // element's larger ones (a cancellation of about (r / L)^2 ~ 10 at the far target), and
      // the moments sum about a hundred such terms: a floor of 1e3 eps rather than 64.
      const double tol = translation_tolerance(distance) + 1e3 * eps;
      EXPECT_LE(error_d / std::max(scale_d, 1.0), tol) << xs[i].name << " at " << distance;
      EXPECT_LE(error_n / scale_n, tol) << xs[i].name << " at " << distance;
    }
  }
}

}  // namespace
}  // namespace fmbem

#include "fmbem/bem/moment_integrals.hpp"

#include "fmbem/quadrature/triangle_rule.hpp"
#include "host_device/moment_integrals.hpp"
#include "host_device/regular_integrals.hpp"

// Derivation. T flat with unit normal n; x = p + h n, p in T's plane; y = p + rho e (e a unit
// vector in the plane at angle theta), r^2 = rho^2 + h^2. With f(r) = G'(r) / r the kernels are
//   dG/dn_y = -h f(r),
//   d^2G/dn_x dn_y = -(n_x . n) (f + h^2 f'(r) / r) + h rho (e . n_x) f'(r) / r,
// and a monomial of (xi, eta) about `origin` is, with (xi_p, eta_p) the coordinates of p and
// (e1, e2) those of e, beta0 + beta1(theta) rho + beta2(theta) rho^2 (xi = xi_p + rho e1, ...).
// beta0 multiplies the unit density's integrals (`constant`); the rest is, per sector,
//   integral d theta of beta_j(theta) times the radial integral of the kernel times rho^(j+1).
// Laplace (f0 = -1 / (4 pi r^3), f0' / r = 3 / (4 pi r^5)), with R = sqrt(rho^2 + h^2) at the
// sector's edge and L = log(rho + R) (times 4 pi):
//   integral rho^2 / r^3 = L - rho / R,          integral rho^3 / r^3 = R + h^2 / R - 2 |h|,
//   3 h^2 integral rho^2 / r^5 = rho^3 / R^3,   3 h integral rho^3 / r^5 = 2 sgn(h) - 3h/R +
//   h^3/R^3, 3 h integral rho^4 / r^5 = 3 h (L - (4 rho^3 + 3 h^2 rho) / (3 R^3)).
// The exact forms have asinh(rho / |h|) = L - log |h| where we write L: the log |h| terms multiply
// functions of theta alone that are odd in e (beta1, or beta2 (e . n_x)), whose sum over the signed
// sectors is zero (p inside T: the whole circle; outside: every direction is entered and left), so
// they are left out and nothing diverges as h -> 0. The 2 sgn(h) term is even in e: it is the jump
// of N across T's plane where n_x is not n (integrated with the rest; it cancels for p outside T).
// Helmholtz: f - f0 = (k^2 / 4 pi) (-1 / (2r) + k chi(kr)) and
// (f - f0)' / r = (k^2 / 4 pi) (1 / (2 r^3) + k^2 / (8 r) + k^3 omega(kr)), with chi and omega
// bounded, smooth functions (remainder_factors); the 1/r and 1/r^3 terms have closed-form radial
// integrals (Q_a = integral rho^a / r, P3_4 = integral rho^4 / r^3, the same log |h| rule), the
// chi and omega terms are integrated with Gauss-Legendre in rho (their non-smooth part near
// rho ~ |h| is of order k^2 |h|^3 and weighted by rho^2: below the rule's error).
namespace fmbem {

MonomialMoments monomial_moments(double k, const Vec3& a, const Vec3& b, const Vec3& c,
                                 const Vec3& origin, const Vec3& axis1, const Vec3& axis2,
                                 const Vec3& x, const Vec3& n_x,
                                 const HypersingularIntegrals& constant,
                                 const GaussLegendre& angular, const GaussLegendre& radial) {
  static const host_device::RemainderSeries series;
  return host_device::monomial_moments<cplx>(k, a, b, c, origin, axis1, axis2, x, n_x, constant,
                                             angular.view(), radial.view(), series);
}

RefinedIntegrals refined_rule_integrals(double k, const Vec3& a, const Vec3& b, const Vec3& c,
                                        const Vec3& origin, const Vec3& axis1, const Vec3& axis2,
                                        const Vec3& x, const Vec3& n_x) {
  const TriangleRule& rule = triangle_rule(7);
  return host_device::refined_rule_integrals<cplx>(k, a, b, c, origin, axis1, axis2, x, n_x,
                                                   rule.barycentric.data(), rule.weights.data(),
                                                   int(rule.size()));
}

MonomialMoments regular_monomial_moments(const Discretization& disc,
                                         const DensityReconstruction& reconstruction, double k,
                                         std::size_t element, const Vec3& x, const Vec3& n_x) {
  return host_device::regular_sums<cplx, host_device::kMoments>(
             k, host_device::regular_rule(disc, element), x, n_x,
             host_device::monomial_frame(reconstruction, element))
      .moments;
}

}  // namespace fmbem

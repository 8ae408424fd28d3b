#pragma once
// Radiation from a vibrating cap on a rigid sphere: the exterior Neumann problem with
// q = dp/dn = q0 on the cap (angle to the axis < theta0), 0 elsewhere. Conventions as in
// sphere.hpp (h_n = h_n^(1), exp(-i omega t), outward normal, q = dp/dr); non-dimensional (in
// physical units q0 = i k rho c V for the normal velocity V).
//
// Series. With q = sum q_n P_n(cos theta), x0 = cos theta0 and P_{-1} = 1,
//   q_n = q0 (2n+1)/2 int_{x0}^1 P_n = q0 (P_{n-1}(x0) - P_{n+1}(x0)) / 2,   q_0 = q0 (1 - x0)/2
// ((2n+1) P_n = (P_{n+1} - P_{n-1})' and P_n(1) = 1), and p_n(r) = h_n(kr) / (k h_n'(ka)) so that
// dp_n/dr = 1 at r = a:  p(r, theta) = sum q_n M_n(r) P_n(cos theta),  M_n = h_n(kr)/(k h_n'(ka)).
//
// Convergence. A jump in q makes q_n = O(n^{-1/2}) (Bernstein: sqrt(sin t)|P_n(cos t)| <
// sqrt(2/(pi (n + 1/2)))), and on the surface M_n -> -a/(n+1), so the surface terms are O(n^{-2})
// (n^{-3/2} at the poles): p is continuous everywhere, also across the cap's edge (only the
// series of q shows Gibbs and gives the mean q0/2 on the edge), but plain summation to 1e-9 would
// take ~1e8 terms. Hence Kummer's transformation: subtract the static (Laplace) multipliers
// M0_n = -(a/(n+1)) rho^{n+1}, rho = a/r, whose sum is an integral over the cap,
//   p = sum q_n (M_n - M0_n) P_n  +  p0,   p0 = -a sum q_n rho^{n+1} P_n / (n+1)
//                                               = -(a q0 / (4 pi)) int_cap K(gamma) dOmega,
//   K(gamma) = sum (2n+1)/(n+1) rho^{n+1} P_n(cos gamma) = 2 rho/R - ln((rho - c + R)/(1 - c)),
// c = cos gamma, R^2 = 1 - 2 rho c + rho^2 (the generating function sum s^n P_n = 1/R(s) and its
// integral over s in [0, rho]; addition theorem). In polar coordinates about x the cap integral
// is int_0^pi K sin(gamma) Phi(gamma) dgamma, Phi the angle of the circle at distance gamma from
// x inside the cap: bounded, smooth but at gamma = |theta - theta0|, theta + theta0,
// 2 pi - theta - theta0 (square-root kinks), computed by tanh-sinh quadrature between them.
// For n >> kr, M_n - M0_n = M0_n ((ka)^2 / (2n^2) + k^2 (r^2 - a^2)/(4n) + ...), so the remainder
// terms are O(n^{-3.5}) on the surface and O(n^{-2.5} rho^n) off it. Far off (r >= 2a) the plain
// series is summed instead: past n ~ ka, |M_{n+1}/M_n| ~ max(a/r, ka/(2n)) <= 1/2.
//
// Truncation, per point. Term n is at most B_n = |q0| Q_n D_n P_n with D_n = |M_n - M0_n| (or
// |M_n|, plain), Q_n = min((2n+1)(1 - x0)/2, sqrt(2/(pi (n - 1/2) sin theta0))) (|P_n| <= 1 and
// Bernstein) and P_n = min(1, sqrt(2/(pi (n + 1/2) sin theta))). From n0 = 2kr + 16 (plain:
// 2ka + 16) on, and once Q_n is on its decreasing branch, B_m <= B_n (n/m)^beta for m > n with
// beta = 3.5 on the surface and 2.5 off it (tail <= B_n n/(beta - 1)), or B_m <= B_n 2^{n-m}
// (plain: tail <= B_n). The sum stops once twice that tail (the 2 covers the asymptotic forms;
// D_n is the largest of the last 8, against a chance cancellation) is below
// tolerance() = 1e-9 |q0| min(a, 1/k), |p| of the pulsating sphere being |q0| a/sqrt(1 + (ka)^2).
// The quadrature asks for 1e-13 relative. So the error is below tolerance() everywhere on and off
// the surface, the cap's edge and the poles included: about 1e-9 relative on caps wider than
// about 1/(ka), less on small caps, whose p is ~ q0 a theta0^2. terms() is the count the poles of
// the surface need (P_n = 1, beta = 2.5, a quarter of the tolerance), which covers every point.
// BEM tests compare at element centroids, never on the edge circle, but the edge is no special
// case here: p is continuous there and value() gives it.
#include <vector>

#include "fmbem/core/vec3.hpp"
#include "fmbem/exact/legendre.hpp"

namespace fmbem::exact {

class SphereCapRadiation {
 public:
  // Throws fmbem::Error for k <= 0 or non-finite, radius <= 0 or non-finite, a zero or
  // non-finite centre/axis, half_angle outside (0, pi], a non-finite normal derivative, or a
  // series of more than 2,000,000 terms (ka above about 200).
  SphereCapRadiation(double k, double radius, const Vec3& center, const Vec3& axis,
                     double half_angle, cplx normal_derivative);

  // Pressure p at x with |x - center| >= radius (points within 64 ulp of the sphere count as on
  // it; further inside: fmbem::Error). Thread-safe; O(terms) and a quadrature per point.
  cplx value(const Vec3& x) const;
  // p at the radial projection of x onto the sphere (Error at the centre): for BEM centroids.
  cplx surface_value(const Vec3& x) const;

  // The most series terms any point uses (the poles of the surface need the most).
  int terms() const { return static_cast<int>(q_.size()); }
  // The absolute error bound described above, 1e-9 |q0| min(a, 1/k).
  double tolerance() const { return tolerance_; }

 private:
  cplx evaluate(double rho, double cos_theta, double sin_theta) const;
  // int_0^pi K(gamma) sin(gamma) Phi(gamma) dgamma (see above).
  double static_integral(double rho, double cos_theta, double sin_theta) const;
  double q_bound(int n) const;      // Q_n (n >= 0)
  double bernstein_q(int n) const;  // its second branch (n >= 1)

  double k_, radius_;
  Vec3 center_, axis_;
  double x0_, sin0_, half_angle_;
  cplx q0_;
  double tolerance_ = 0.0;
  std::vector<cplx> q_;          // q_n
  std::vector<cplx> d_surface_;  // M_n(a) - M0_n(a)
  int crossover_ = 0;            // from here on Q_n is its decreasing (Bernstein) branch
  LegendreSum legendre_;
};

}  // namespace fmbem::exact

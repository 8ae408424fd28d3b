#include "fmbem/bem/hypersingular_integrals.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "fmbem/bem/panel_integrals.hpp"
#include "fmbem/core/coordinate_rounding.hpp"
#include "fmbem/kernel/kernel.hpp"

// Derivation (details and the jump relations in docs/burton-miller.md). Let S(x), D(x) be the
// single and double layer of the flat triangle T (unit normal n, edges e counter-clockwise about
// n, outward in-plane edge normal m_e = s_e x n, s_e the unit edge tangent), h = (x - a) . n,
// p = x - h n, d_e = (y - p) . m_e for y on edge e (> 0 when p is on T's side of the edge).
// For x off T, S is smooth and satisfies (Delta + k^2) S = 0.
//  * grad S: the normal part is dS/dh = -D; the tangential part is -integral over T of the
//    tangential grad_y G, by the divergence theorem in T's plane -sum_e m_e E0_e with
//    E0_e = integral over e of G dl. So grad S = -D n - sum_e m_e E0_e.
//  * grad D = -grad (dS/dh): the normal part is -d^2S/dh^2 = k^2 S + Delta_t S, and
//    Delta_t S = div_t(-sum_e m_e E0_e) = sum_e d_e E1_e with E1_e = integral over e of
//    G'(R)/R dl; the tangential part is d/dh (sum_e m_e E0_e) = h sum_e m_e E1_e. So
//    grad D = n (k^2 S + sum_e d_e E1_e) + h sum_e m_e E1_e.
// Both are continuous up to T's interior from either side except the -D n term, whose jump is
// D's. At x in T's plane (the self term) the values are the principal value of D' (0, as D = 0
// there) and the limit of N, which is its Hadamard finite part: no surface integral is
// (near-)singular any more, only the edge integrals are when x nears an edge. For Laplace the
// self term is N = -(1/4 pi) sum_e (1/d_e) [t/R] over the edge, e.g. -9/(2 pi s) at the
// centroid of an equilateral triangle of side s. This is Maue's integration by parts (Maue
// 1949) for a constant density on a flat element; the same reduction to edge line integrals of
// the regularised piecewise-constant collocation is used e.g. in K. Yoshida's thesis (Kyoto,
// 2001, ch. 3.5, "Discretising the regularised integral equation ... with piecewise constant
// shape functions": static part of the line integrals analytic, the rest by Gauss quadrature).
namespace fmbem {
namespace {

struct EdgeFrame {
  Vec3 m;           // outward in-plane edge normal
  double d = 0.0;   // signed in-plane distance from p to the edge's line
  double t1 = 0.0;  // edge ends along the tangent, from the foot of x
  double t2 = 0.0;
  double delta = 0;  // distance from x to the edge's line, sqrt(d^2 + h^2)
};

EdgeFrame edge_frame(const Vec3& v1, const Vec3& v2, const Vec3& n, const Vec3& p, double h) {
  const Vec3 s = normalized(v2 - v1);
  EdgeFrame f;
  f.m = cross(s, n);
  f.d = dot(v1 - p, f.m);
  f.t1 = dot(v1 - p, s);
  f.t2 = dot(v2 - p, s);
  f.delta = std::hypot(f.d, h);
  // x on the edge's line (outside the edge, else N is infinite): the line integrals below
  // switch to t = +-exp(s); 1e-15 of the edge keeps asinh(t / delta) finite.
  if (f.delta <= 1e-15 * (f.t2 - f.t1) + coordinate_rounding(largest_coordinate(v1, p)))
    f.delta = 0.0;
  return f;
}

// Integral over [t1, t2] of 1 / R, R = sqrt(t^2 + delta^2), without cancellation.
double line_inverse_r(const EdgeFrame& f) {
  const double r1 = std::hypot(f.t1, f.delta), r2 = std::hypot(f.t2, f.delta);
  if (f.t1 >= 0.0) return std::log((f.t2 + r2) / (f.t1 + r1));
  if (f.t2 <= 0.0) return std::log((r1 - f.t1) / (r2 - f.t2));
  return std::asinh(f.t2 / f.delta) - std::asinh(f.t1 / f.delta);
}

// Integral over [t1, t2] of 1 / R^3 = [t / (delta^2 R)]; when the edge does not straddle the
// foot, t2/R2 - t1/R1 = delta^2 (t2^2 - t1^2) / (R1 R2 (t2 R1 + t1 R2)) avoids cancelling.
double line_inverse_r3(const EdgeFrame& f) {
  const double r1 = std::hypot(f.t1, f.delta), r2 = std::hypot(f.t2, f.delta);
  if (f.t1 >= 0.0 || f.t2 <= 0.0)
    return (f.t2 - f.t1) * (f.t2 + f.t1) / (r1 * r2 * (f.t2 * r1 + f.t1 * r2));
  return (f.t2 / r2 - f.t1 / r1) / (f.delta * f.delta);
}

// exp(iz) - 1 without cancellation.
cplx expm1_i(double z) {
  const double half_sin = std::sin(0.5 * z);
  return {-2.0 * half_sin * half_sin, std::sin(z)};
}

// f(z) = (exp(iz)(iz - 1) + 1) / z^2 = sum over m >= 2 of (iz)^m (m - 1) / m! / z^2
// = -1/2 - iz/3 + z^2/8 + ..., by its series where the closed form cancels.
cplx remainder_ratio(double z) {
  if (std::abs(z) < 0.5) {
    cplx sum{}, power(1.0, 0.0);  // (iz)^(m-2)
    double factorial = 2.0;       // m!
    for (int m = 2; m < 22; ++m) {
      sum += power * (double(m - 1) * (-1.0) / factorial);  // i^2 = -1 taken out
      power *= cplx(0.0, z);
      factorial *= double(m + 1);
    }
    return sum;
  }
  const cplx phase(std::cos(z), std::sin(z));
  return (phase * cplx(-1.0, z) + 1.0) / (z * z);
}

// The Helmholtz remainders along one edge: integrals of (exp(ikR) - 1) / R dt and of
// (exp(ikR)(ikR - 1) + 1) / R^3 dt = k^2 f(kR) / R dt. With t = delta sinh(u) (or t = +-exp(u)
// on the edge's line) dt / R = du and both integrands are smooth, bounded functions of
// R = delta cosh(u) (or exp(u)); Gauss-Legendre on pieces of at most unit width in u and at most
// 2 radians of phase change in kR.
struct EdgeRemainders {
  cplx single;
  cplx double_;
};

EdgeRemainders edge_remainders(double k, const EdgeFrame& f, const GaussLegendre& angular) {
  double u1, u2;
  if (f.delta > 0.0) {
    u1 = std::asinh(f.t1 / f.delta);
    u2 = std::asinh(f.t2 / f.delta);
  } else if (f.t1 > 0.0) {
    u1 = std::log(f.t1);
    u2 = std::log(f.t2);
  } else {  // t1 < t2 < 0: t = -exp(u), u from log(-t2) to log(-t1)
    u1 = std::log(-f.t2);
    u2 = std::log(-f.t1);
  }
  const auto radius = [&](double u) {
    return f.delta > 0.0 ? f.delta * std::cosh(u) : std::exp(u);
  };
  const double r_max = std::max(radius(u1), radius(u2));
  const double span = u2 - u1;
  const int pieces = std::max(1, int(std::ceil(std::max(span, span * k * r_max / 2.0))));
  const double width = span / pieces;
  EdgeRemainders sum{};
  for (int piece = 0; piece < pieces; ++piece) {
    const double mid = u1 + (piece + 0.5) * width, half = 0.5 * width;
    for (std::size_t q = 0; q < angular.size(); ++q) {
      const double r = radius(mid + half * angular.nodes[q]);
      const double w = half * angular.weights[q];
      sum.single += w * expm1_i(k * r);
      sum.double_ += w * (k * k) * remainder_ratio(k * r);
    }
  }
  return sum;
}

// Laplace single layer (times 4 pi) of the triangle at any x: Wilton et al. (1984), Graglia
// (1993): sum over edges of d_e L0_e - |h| [atan(d_e t / (delta^2 + |h| R))] over the edge.
double laplace_single_times_4pi(const std::array<EdgeFrame, 3>& edges, double h) {
  double sum = 0.0;
  for (const EdgeFrame& f : edges) {
    if (f.d != 0.0) sum += f.d * line_inverse_r(f);
    if (h != 0.0 && f.d != 0.0) {
      const double a = std::abs(h), d2 = f.delta * f.delta;
      const double r1 = std::hypot(f.t1, f.delta), r2 = std::hypot(f.t2, f.delta);
      sum -= a * (std::atan(f.d * f.t2 / (d2 + a * r2)) - std::atan(f.d * f.t1 / (d2 + a * r1)));
    }
  }
  return sum;
}

// Laplace double layer = -solid angle / (4 pi) (Van Oosterom & Strackee 1983); 0 in the plane.
double laplace_double(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& x) {
  const Vec3 ra = a - x, rb = b - x, rc = c - x;
  const double la = norm(ra), lb = norm(rb), lc = norm(rc);
  const double numerator = dot(ra, cross(rb, rc));
  const double denominator = la * lb * lc + dot(ra, rb) * lc + dot(ra, rc) * lb + dot(rb, rc) * la;
  return -2.0 * std::atan2(numerator, denominator) * inv_4pi;
}

}  // namespace

namespace {

// S, D and their gradients (real and imaginary parts as two vectors).
struct Gradients {
  cplx single, dbl;
  Vec3 grad_s_re, grad_s_im, grad_d_re, grad_d_im;
};

Gradients gradients(double k, const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& x,
                    const GaussLegendre& angular) {
  const Vec3 n = normalized(cross(b - a, c - a));
  const double longest = std::max({norm(b - a), norm(c - b), norm(a - c)});
  double h = dot(x - a, n);
  // The same in-plane test as panel_integrals: x on the plane gets D = 0, not +-1/2.
  const bool in_plane =
      std::abs(h) <= 1e-12 * longest + coordinate_rounding(largest_coordinate(a, x));
  if (in_plane) h = 0.0;
  const Vec3 p = x - n * h;
  const std::array<Vec3, 3> v{a, b, c};
  std::array<EdgeFrame, 3> edges;
  for (int e = 0; e < 3; ++e) edges[e] = edge_frame(v[e], v[(e + 1) % 3], n, p, h);

  // S and D: closed-form Laplace parts plus the Helmholtz remainder of the polar method (its
  // Laplace parts cancel in the difference, so only the bounded remainder's quadrature is used).
  Gradients g;
  g.single = inv_4pi * laplace_single_times_4pi(edges, h);
  g.dbl = in_plane ? 0.0 : laplace_double(a, b, c, x);
  if (k != 0.0) {
    const PanelIntegrals helmholtz = panel_integrals(k, a, b, c, x, angular);
    const PanelIntegrals laplace = panel_integrals(0.0, a, b, c, x, angular);
    g.single += helmholtz.single_layer - laplace.single_layer;
    g.dbl += helmholtz.double_layer - laplace.double_layer;
  }

  // grad S = -D n - sum m_e E0_e; grad D = n (k^2 S + sum d_e E1_e) + h sum m_e E1_e, with
  // E0 = integral of G dl, E1 = integral of G'(R)/R dl along each edge.
  g.grad_s_re = n * (-g.dbl.real());
  g.grad_s_im = n * (-g.dbl.imag());
  cplx normal_d = k * k * g.single;
  for (const EdgeFrame& f : edges) {
    cplx e0 = line_inverse_r(f);
    cplx e1 = -line_inverse_r3(f);
    if (k != 0.0) {
      const EdgeRemainders rest = edge_remainders(k, f, angular);
      e0 += rest.single;
      e1 += rest.double_;
    }
    e0 *= inv_4pi;
    e1 *= inv_4pi;
    g.grad_s_re -= f.m * e0.real();
    g.grad_s_im -= f.m * e0.imag();
    normal_d += f.d * e1;
    g.grad_d_re += f.m * (h * e1.real());
    g.grad_d_im += f.m * (h * e1.imag());
  }
  g.grad_d_re += n * normal_d.real();
  g.grad_d_im += n * normal_d.imag();
  return g;
}

}  // namespace

HypersingularIntegrals hypersingular_integrals(double k, const Vec3& a, const Vec3& b,
                                               const Vec3& c, const Vec3& x, const Vec3& n_x,
                                               const GaussLegendre& angular) {
  const Gradients g = gradients(k, a, b, c, x, angular);
  return {g.single, g.dbl, cplx(dot(n_x, g.grad_s_re), dot(n_x, g.grad_s_im)),
          cplx(dot(n_x, g.grad_d_re), dot(n_x, g.grad_d_im))};
}

PanelGradients panel_gradients(double k, const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& x,
                               const GaussLegendre& angular) {
  const Gradients g = gradients(k, a, b, c, x, angular);
  return {{{g.grad_s_re.x, g.grad_s_im.x},
           {g.grad_s_re.y, g.grad_s_im.y},
           {g.grad_s_re.z, g.grad_s_im.z}},
          {{g.grad_d_re.x, g.grad_d_im.x},
           {g.grad_d_re.y, g.grad_d_im.y},
           {g.grad_d_re.z, g.grad_d_im.z}}};
}

cplx adjoint_double_layer(double k, const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& x,
                          const Vec3& n_x, const GaussLegendre& angular) {
  return hypersingular_integrals(k, a, b, c, x, n_x, angular).adjoint_double_layer;
}

cplx hypersingular(double k, const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& x,
                   const Vec3& n_x, const GaussLegendre& angular) {
  return hypersingular_integrals(k, a, b, c, x, n_x, angular).hypersingular;
}

RegularBurtonMiller regular_burton_miller_integrals(const Discretization& disc, double k,
                                                    std::size_t element, const Vec3& x,
                                                    const Vec3& n_x) {
  const std::size_t m = disc.points_per_element();
  const Vec3& n_y = disc.mesh().normals()[element];
  const double coincident = disc.coincidence_radius();
  RegularBurtonMiller sum{};
  for (std::size_t q = element * m; q < (element + 1) * m; ++q) {
    const Vec3& y = disc.quadrature_points()[q];
    if (norm(y - x) <= coincident) continue;
    const double w = disc.quadrature_weights()[q];
    sum.adjoint_double_layer += w * green_target_normal_derivative(k, x, y, n_x);
    sum.hypersingular += w * green_double_normal_derivative(k, x, y, n_x, n_y);
  }
  return sum;
}

}  // namespace fmbem

#pragma once
// hypersingular_integrals (hypersingular_integrals.cpp, which derives them) written once for the
// CPU and the GPU (bem/cuda): FMBEM_HOST_DEVICE templates over the complex type, as
// panel_integrals.hpp here. Not a public header.
#include <cmath>

#include "fmbem/bem/hypersingular_integrals.hpp"
#include "fmbem/core/coordinate_rounding.hpp"
#include "fmbem/core/host_device.hpp"
#include "fmbem/core/vec3.hpp"
#include "fmbem/kernel/kernel.hpp"
#include "fmbem/quadrature/gauss_legendre.hpp"
#include "panel_integrals.hpp"

namespace fmbem::host_device {

struct EdgeFrame {
  Vec3 m;           // outward in-plane edge normal
  double d = 0.0;   // signed in-plane distance from p to the edge's line
  double t1 = 0.0;  // edge ends along the tangent, from the foot of x
  double t2 = 0.0;
  double delta = 0;  // distance from x to the edge's line, sqrt(d^2 + h^2)
};

FMBEM_HOST_DEVICE inline EdgeFrame edge_frame(const Vec3& v1, const Vec3& v2, const Vec3& n,
                                              const Vec3& p, double h) {
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
FMBEM_HOST_DEVICE inline double line_inverse_r(const EdgeFrame& f) {
  const double r1 = std::hypot(f.t1, f.delta), r2 = std::hypot(f.t2, f.delta);
  if (f.t1 >= 0.0) return std::log((f.t2 + r2) / (f.t1 + r1));
  if (f.t2 <= 0.0) return std::log((r1 - f.t1) / (r2 - f.t2));
  return std::asinh(f.t2 / f.delta) - std::asinh(f.t1 / f.delta);
}

// Integral over [t1, t2] of 1 / R^3 = [t / (delta^2 R)]; when the edge does not straddle the
// foot, t2/R2 - t1/R1 = delta^2 (t2^2 - t1^2) / (R1 R2 (t2 R1 + t1 R2)) avoids cancelling.
FMBEM_HOST_DEVICE inline double line_inverse_r3(const EdgeFrame& f) {
  const double r1 = std::hypot(f.t1, f.delta), r2 = std::hypot(f.t2, f.delta);
  if (f.t1 >= 0.0 || f.t2 <= 0.0)
    return (f.t2 - f.t1) * (f.t2 + f.t1) / (r1 * r2 * (f.t2 * r1 + f.t1 * r2));
  return (f.t2 / r2 - f.t1 / r1) / (f.delta * f.delta);
}

// f(z) = (exp(iz)(iz - 1) + 1) / z^2 = -sum over j >= 0 of (iz)^j (j + 1) / (j + 2)!
// = -1/2 - iz/3 + z^2/8 + ..., by its series where the closed form cancels: below |z| = 0.5 the
// terms to j = 15 (the next is below 1e-18 of the first), real (even j) and imaginary (odd j) parts
// by Horner in z^2.
template <class C>
FMBEM_HOST_DEVICE C remainder_ratio(double z) {
  if (std::abs(z) < 0.5) {
    // -(-1)^l (2l + 1) / (2l + 2)! and -(-1)^l (2l + 2) / (2l + 3)!, l = 0..7.
    constexpr double even[8] = {-0.5,
                                0.125,
                                -0.0069444444444444441,
                                0.00017361111111111112,
                                -2.4801587301587302e-06,
                                2.296443268665491e-08,
                                -1.4911969277048643e-10,
                                7.1692159985810778e-13};
    constexpr double odd[8] = {-0.33333333333333331,    0.033333333333333333,
                               -0.0011904761904761906,  2.2045855379188714e-05,
                               -2.5052108385441718e-07, 1.9270852604185937e-09,
                               -1.0706029224547743e-11, 4.498331606952833e-14};
    const double z2 = z * z;
    double re = even[7], im = odd[7];
    for (int l = 6; l >= 0; --l) {
      re = re * z2 + even[l];
      im = im * z2 + odd[l];
    }
    return C(re, im * z);
  }
  const C phase(std::cos(z), std::sin(z));
  return (phase * C(-1.0, z) + 1.0) / (z * z);
}

// The Helmholtz remainders along one edge: integrals of (exp(ikR) - 1) / R dt and of
// (exp(ikR)(ikR - 1) + 1) / R^3 dt = k^2 f(kR) / R dt. With t = delta sinh(u) (or t = +-exp(u)
// on the edge's line) dt / R = du and both integrands are smooth, bounded functions of
// R = delta cosh(u) (or exp(u)); Gauss-Legendre on pieces of at most unit width in u and at most
// 2 radians of phase change in kR.
template <class C>
struct EdgeRemainders {
  C single;
  C double_;
};

FMBEM_HOST_DEVICE inline double edge_radius(const EdgeFrame& f, double u) {
  return f.delta > 0.0 ? f.delta * cosh_sinh(u).cosh : std::exp(u);
}

template <class C>
FMBEM_HOST_DEVICE EdgeRemainders<C> edge_remainders(double k, const EdgeFrame& f,
                                                    const GaussLegendreView& angular) {
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
  const double r_max = larger(edge_radius(f, u1), edge_radius(f, u2));
  const double span = u2 - u1;
  const int pieces = larger(1, int(std::ceil(larger(span, span * k * r_max / 2.0))));
  const double width = span / pieces;
  EdgeRemainders<C> sum{};
  for (int piece = 0; piece < pieces; ++piece) {
    const double mid = u1 + (piece + 0.5) * width, half = 0.5 * width;
    for (int q = 0; q < angular.size; ++q) {
      const double r = edge_radius(f, mid + half * angular.nodes[q]);
      const double w = half * angular.weights[q];
      sum.single += w * expm1_i<C>(k * r);
      sum.double_ += w * (k * k) * remainder_ratio<C>(k * r);
    }
  }
  return sum;
}

// Laplace single layer (times 4 pi) of the triangle at any x: Wilton et al. (1984), Graglia
// (1993): sum over edges of d_e L0_e - |h| [atan(d_e t / (delta^2 + |h| R))] over the edge.
FMBEM_HOST_DEVICE inline double laplace_single_times_4pi(const EdgeFrame (&edges)[3], double h) {
  double sum = 0.0;
  FMBEM_UNROLL
  for (int e = 0; e < 3; ++e) {
    const EdgeFrame& f = edges[e];
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
FMBEM_HOST_DEVICE inline double laplace_double(const Vec3& a, const Vec3& b, const Vec3& c,
                                               const Vec3& x) {
  const Vec3 ra = a - x, rb = b - x, rc = c - x;
  const double la = norm(ra), lb = norm(rb), lc = norm(rc);
  const double numerator = dot(ra, cross(rb, rc));
  const double denominator = la * lb * lc + dot(ra, rb) * lc + dot(ra, rc) * lb + dot(rb, rc) * la;
  return -2.0 * std::atan2(numerator, denominator) * inv_4pi;
}

// S, D and their gradients (real and imaginary parts as two vectors).
template <class C>
struct Gradients {
  C single, dbl;
  Vec3 grad_s_re, grad_s_im, grad_d_re, grad_d_im;
};

template <class C>
FMBEM_HOST_DEVICE Gradients<C> gradients(double k, const Vec3& a, const Vec3& b, const Vec3& c,
                                         const Vec3& x, const GaussLegendreView& angular) {
  // The same in-plane test as panel_integrals: x on the plane gets D = 0, not +-1/2.
  const PlaneFoot foot = plane_foot(a, b, c, x);
  const Vec3 n = foot.n, p = foot.p;
  const double h = foot.h;
  const Vec3 v[3] = {a, b, c};
  EdgeFrame edges[3];
  FMBEM_UNROLL
  for (int e = 0; e < 3; ++e) edges[e] = edge_frame(v[e], v[(e + 1) % 3], n, p, h);

  // S and D: closed-form Laplace parts plus the Helmholtz remainder of the polar method (its
  // Laplace parts cancel in the difference, so only the bounded remainder's quadrature is used).
  Gradients<C> g;
  g.single = inv_4pi * laplace_single_times_4pi(edges, h);
  g.dbl = foot.in_plane ? 0.0 : laplace_double(a, b, c, x);
  if (k != 0.0) {
    const BasicPanelIntegrals<C> remainder =
        panel_integrals<C, PanelKernel::remainder>(k, a, b, c, x, angular);
    g.single += remainder.single_layer;
    g.dbl += remainder.double_layer;
  }

  // grad S = -D n - sum m_e E0_e; grad D = n (k^2 S + sum d_e E1_e) + h sum m_e E1_e, with
  // E0 = integral of G dl, E1 = integral of G'(R)/R dl along each edge.
  g.grad_s_re = n * (-g.dbl.real());
  g.grad_s_im = n * (-g.dbl.imag());
  C normal_d = k * k * g.single;
  FMBEM_UNROLL
  for (int e = 0; e < 3; ++e) {
    const EdgeFrame& f = edges[e];
    C e0 = line_inverse_r(f);
    C e1 = -line_inverse_r3(f);
    if (k != 0.0) {
      const EdgeRemainders<C> rest = edge_remainders<C>(k, f, angular);
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

template <class C>
FMBEM_HOST_DEVICE BasicHypersingularIntegrals<C> hypersingular_integrals(
    double k, const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& x, const Vec3& n_x,
    const GaussLegendreView& angular) {
  const Gradients<C> g = gradients<C>(k, a, b, c, x, angular);
  return {g.single, g.dbl, C(dot(n_x, g.grad_s_re), dot(n_x, g.grad_s_im)),
          C(dot(n_x, g.grad_d_re), dot(n_x, g.grad_d_im))};
}

}  // namespace fmbem::host_device

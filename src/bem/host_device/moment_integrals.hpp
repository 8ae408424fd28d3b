#pragma once
// monomial_moments and refined_rule_integrals (moment_integrals.cpp, which derives them) written
// once for the CPU and the GPU (bem/cuda): FMBEM_HOST_DEVICE templates over the complex type, as
// panel_integrals.hpp here. Not a public header.
#include <array>
#include <cmath>
#include <numbers>

#include "fmbem/bem/density_reconstruction.hpp"
#include "fmbem/bem/moment_integrals.hpp"
#include "fmbem/core/coordinate_rounding.hpp"
#include "fmbem/core/host_device.hpp"
#include "fmbem/core/vec3.hpp"
#include "fmbem/kernel/kernel.hpp"
#include "fmbem/quadrature/gauss_legendre.hpp"
#include "panel_integrals.hpp"

namespace fmbem::host_device {

// The longest piece of the radius, in k rho, that one `radial` rule integrates.
constexpr double kRadialPiece = 1.0;

// chi(z) = (rr(z) + 1/2) / z and omega(z) = chi'(z) / z - 1 / (8z), rr(z) = (exp(iz)(iz - 1) + 1)
// / z^2 (the ratio of hypersingular_integrals.cpp). Series: rr = sum over m >= 2 of c_m z^(m-2),
// c_m = (m - 1) i^m / m!, so chi = sum over m >= 3 of c_m z^(m-3) and
// omega = sum over m >= 5 of (m - 3) c_m z^(m-5); below |z| = 1 the series (no cancellation),
// above the closed forms with rr' = -exp(iz) / z - 2 rr / z.
template <class C>
struct RemainderFactors {
  C chi, omega;
};

// The series' coefficients, formed on the host (the device gets a copy of these). The functions
// below read them through chi(j) and omega(j): these on the host, the device's copy there.
struct RemainderSeries {
  static constexpr int kTerms = 22;
  std::array<cplx, kTerms> chi_terms{}, omega_terms{};
  const cplx& chi(int j) const { return chi_terms[std::size_t(j)]; }
  const cplx& omega(int j) const { return omega_terms[std::size_t(j)]; }
  RemainderSeries() {
    const auto c = [](int m) {
      double factorial = 1.0;
      for (int i = 2; i <= m; ++i) factorial *= i;
      const cplx i_power[4] = {1.0, cplx(0.0, 1.0), -1.0, cplx(0.0, -1.0)};
      return i_power[m % 4] * (double(m - 1) / factorial);
    };
    for (int j = 0; j < kTerms; ++j) {
      chi_terms[std::size_t(j)] = c(j + 3);
      omega_terms[std::size_t(j)] = double(j + 2) * c(j + 5);
    }
  }
};

template <class C, class Series>
FMBEM_HOST_DEVICE RemainderFactors<C> remainder_factors(double z, const Series& series) {
  if (z < 1.0) {
    // Terms until z^j / j! is below 1e-17 of the first: 9 below 0.1, 13 below 0.4, 22 below 1.
    const int terms = z < 0.1 ? 9 : z < 0.4 ? 13 : RemainderSeries::kTerms;
    C chi = series.chi(terms - 1), omega = series.omega(terms - 1);
    for (int j = terms - 2; j >= 0; --j) {
      chi = chi * z + series.chi(j);
      omega = omega * z + series.omega(j);
    }
    return {chi, omega};
  }
  const C phase(std::cos(z), std::sin(z));
  const C rr = (phase * C(-1.0, z) + 1.0) / (z * z);
  const C rr_prime = -phase / z - 2.0 * rr / z;
  const C chi = (rr + 0.5) / z;
  const C chi_prime = rr_prime / z - (rr + 0.5) / (z * z);
  return {chi, chi_prime / z - 1.0 / (8.0 * z)};
}

// The radial integrals of one direction (times 4 pi), for beta1 (index 0) and beta2 (index 1).
template <class C>
struct Radial {
  C dbl[2], hyper[2];
};

// The reach in k r (r the farthest corner's distance from x) within which the bounded rest of
// the remainder is integrated over the whole triangle at once (remainder_over_triangle) instead
// of along every direction: the rest is a series in r there, which the conical product of the
// radial rule (6 points: 36, degree 10) integrates within 1e-10 of subdivision (3e-11 on the
// close pairs of icosphere:4 up to k r = 2.5; 1e-9 at k r = 1.7 for a target 0.3 above an edge,
// the odd powers' branch point |h| from the foot: 1.5 keeps that case on the directions' rule).
// Meshes of about 9 elements a wavelength and finer are within it.
constexpr double kTriangleRuleReach = 1.5;

// The terms odd in r of k chi (chi_r r + chi_r3 r^3) and of k^3 omega (omega_r r + omega_r3 r^3):
// radial_integrals integrates them in closed form, and the bounded rest is chi and omega less
// them (remainder_rest).
struct OddRemainderTerms {
  double chi_r, chi_r3, omega_r, omega_r3;
};
FMBEM_HOST_DEVICE inline OddRemainderTerms odd_remainder_terms(double k) {
  const double k2 = k * k;
  return {k2 / 8.0, -k2 * k2 / 144.0, -k2 * k2 / 48.0, k2 * k2 * k2 / 1152.0};
}

// radial_integrals' bounded rest of the remainder, the terms it integrates with `rule` along one
// direction: chi and omega less their terms odd in r up to r^3.
template <class C>
struct RemainderRest {
  C chi, omega;
};
template <class C, class Series>
FMBEM_HOST_DEVICE RemainderRest<C> remainder_rest(double k, const OddRemainderTerms& odd, double r,
                                                  const Series& series) {
  const double r3 = r * r * r;
  const RemainderFactors<C> f = remainder_factors<C>(k * r, series);
  return {k * f.chi - odd.chi_r * r - odd.chi_r3 * r3,
          k * k * k * f.omega - odd.omega_r * r - odd.omega_r3 * r3};
}

// The radial integrals of one direction; with_rest false: without the bounded rest (added over
// the whole triangle by remainder_over_triangle).
template <class C, class Series>
FMBEM_HOST_DEVICE Radial<C> radial_integrals(double k, double rho, double h, double n_dot,
                                             double e_dot, const GaussLegendreView& rule,
                                             const Series& series, bool with_rest = true) {
  const double a = std::abs(h), sgn = h > 0.0 ? 1.0 : h < 0.0 ? -1.0 : 0.0;
  // sqrt for hypot (several times its cost, per direction): a mesh's lengths square safely.
  const double big_r = std::sqrt(rho * rho + h * h), l = std::log(rho + big_r);
  const double ratio = rho / big_r, h2 = h * h;
  const double p3_2 = l - ratio;
  const double p3_3 = big_r + h2 / big_r - 2.0 * a;
  const double t5_2 = ratio * ratio * ratio;
  const double t5_3 = 2.0 * sgn - 3.0 * h / big_r + h * h2 / (big_r * big_r * big_r);
  const double t5_4 =
      3.0 * h * (l - (4.0 * rho * rho * rho + 3.0 * h2 * rho) / (3.0 * big_r * big_r * big_r));
  Radial<C> out;
  out.dbl[0] = h * p3_2;
  out.dbl[1] = h * p3_3;
  out.hyper[0] = -n_dot * (-p3_2 + t5_2) + e_dot * t5_3;
  out.hyper[1] = -n_dot * (-p3_3 + h * t5_3) + e_dot * t5_4;
  if (k == 0.0) return out;

  const double k2 = k * k;
  // Q_n = integral rho^n / r, U_n = integral rho^n r = Q_(n+2) + h^2 Q_n, P3_4 = integral
  // rho^4 / r^3 (recurrence Q_n = rho^(n-1) R / n - (n-1) h^2 Q_(n-2) / n; L for asinh).
  const double rho2 = rho * rho;
  const double q2 = 0.5 * (rho * big_r - h2 * l);
  const double q3 = rho2 * big_r / 3.0 - (2.0 / 3.0) * h2 * (big_r - a);
  const double q4 = rho2 * rho * big_r / 4.0 - 0.75 * h2 * q2;
  const double q5 = rho2 * rho2 * big_r / 5.0 - 0.8 * h2 * q3;
  const double q6 = rho2 * rho2 * rho * big_r / 6.0 - (5.0 / 6.0) * h2 * q4;
  const double q7 = rho2 * rho2 * rho2 * big_r / 7.0 - (6.0 / 7.0) * h2 * q5;
  const double q8 = rho2 * rho2 * rho2 * rho * big_r / 8.0 - (7.0 / 8.0) * h2 * q6;
  const double u2 = q4 + h2 * q2, u3 = q5 + h2 * q3, u4 = q6 + h2 * q4;
  const double u5 = q7 + h2 * q5, u6 = q8 + h2 * q6;
  // W_n = integral rho^n r^3 = U_(n+2) + h^2 U_n.
  const double w2 = u4 + h2 * u2, w3 = u5 + h2 * u3, w4 = u6 + h2 * u4;
  const double p3_4 = 0.5 * rho * big_r - 1.5 * h2 * l + h2 * ratio;
  // The closed-form parts: -1 / (2r) of f - f0, 1 / (2 r^3) + k^2 / (8 r) of (f - f0)' / r, and
  // the terms odd in r of k chi (k^2 r / 8 - k^4 r^3 / 144) and of k^3 omega
  // (-k^4 r / 48 + k^6 r^3 / 1152): what is left is smooth in rho up to (k |h|)^5.
  const OddRemainderTerms odd = odd_remainder_terms(k);
  const double c_chi = odd.chi_r, c_omega = odd.omega_r;
  const double c_chi3 = odd.chi_r3, c_omega3 = odd.omega_r3;
  C d1 = 0.5 * h * q2 - h * (c_chi * u2 + c_chi3 * w2);
  C d2 = 0.5 * h * q3 - h * (c_chi * u3 + c_chi3 * w3);
  C n1 = -n_dot * (-0.5 * q2 + c_chi * u2 + c_chi3 * w2 +
                   h2 * (0.5 * p3_2 + 0.125 * k2 * q2 + c_omega * u2 + c_omega3 * w2)) +
         e_dot * h * (0.5 * p3_3 + 0.125 * k2 * q3 + c_omega * u3 + c_omega3 * w3);
  C n2 = -n_dot * (-0.5 * q3 + c_chi * u3 + c_chi3 * w3 +
                   h2 * (0.5 * p3_3 + 0.125 * k2 * q3 + c_omega * u3 + c_omega3 * w3)) +
         e_dot * h * (0.5 * p3_4 + 0.125 * k2 * q4 + c_omega * u4 + c_omega3 * w4);
  // The bounded rest, Gauss-Legendre on pieces of at most kRadialPiece in k rho.
  const int pieces = with_rest ? larger(1, int(std::ceil(k * rho / kRadialPiece))) : 0;
  const double width = rho / pieces;
  for (int piece = 0; piece < pieces; ++piece)
    for (int q = 0; q < rule.size; ++q) {
      const double s = width * (piece + 0.5 * (1.0 + rule.nodes[q]));
      const double w = 0.5 * width * rule.weights[q];
      const double r = std::sqrt(s * s + h2);
      const RemainderRest<C> rest = remainder_rest<C>(k, odd, r, series);
      const C chi = rest.chi, omega = rest.omega;
      const double s2 = s * s, s3 = s2 * s;
      d1 -= w * h * chi * s2;
      d2 -= w * h * chi * s3;
      const C even = -n_dot * (chi + h2 * omega);
      n1 += w * (even * s2 + e_dot * h * omega * s3);
      n2 += w * (even * s3 + e_dot * h * omega * s3 * s);
    }
  out.dbl[0] += k2 * d1;
  out.dbl[1] += k2 * d2;
  out.hyper[0] += k2 * n1;
  out.hyper[1] += k2 * n2;
  return out;
}

// The bounded rest of the remainder of all five monomials over the triangle at once: the sum
// over directions and radii that radial_integrals' Gauss loop forms is the area integral
//   k^2 integral over T of K(y) (m(y) - m(p)) dS, with r = |y - x|, d = y - p and
//   K = -h chi(r) (double layer), -n_dot (chi + h^2 omega) + h omega (d . n_x) (hypersingular),
// a smooth integrand where k r stays below kTriangleRuleReach. By the conical product of `rule`
// (Gauss-Legendre, mapped to [0, 1]) with itself: y = a + u (b - a) + (1 - u) v (c - a),
// dS = 2 area (1 - u) du dv. Adds to dbl and hyper (without 1 / (4 pi)).
template <class C, class Series>
FMBEM_HOST_DEVICE void remainder_over_triangle(double k, const Vec3& a, const Vec3& b,
                                               const Vec3& c, const Vec3& origin, const Vec3& axis1,
                                               const Vec3& axis2, const Vec3& p, double h,
                                               double n_dot, const Vec3& n_x,
                                               const double (&monomials_at_p)[5],
                                               const GaussLegendreView& rule, const Series& series,
                                               C (&dbl)[5], C (&hyper)[5]) {
  const double twice_area = norm(cross(b - a, c - a)), k2 = k * k, h2 = h * h;
  const OddRemainderTerms odd = odd_remainder_terms(k);
  const Vec3 ab = b - a, ac = c - a;
  for (int i = 0; i < rule.size; ++i) {
    const double u = 0.5 * (1.0 + rule.nodes[i]);
    const double wu = 0.5 * rule.weights[i] * (1.0 - u) * twice_area;
    for (int j = 0; j < rule.size; ++j) {
      const double v = 0.5 * (1.0 + rule.nodes[j]);
      const double w = wu * 0.5 * rule.weights[j] * k2;
      const Vec3 y = a + ab * u + ac * ((1.0 - u) * v);
      const Vec3 d = y - p;
      const double r = std::sqrt(dot(d, d) + h2);
      const RemainderRest<C> rest = remainder_rest<C>(k, odd, r, series);
      const C kernel_double = -h * rest.chi;
      const C kernel_hyper = -n_dot * (rest.chi + h2 * rest.omega) + h * dot(d, n_x) * rest.omega;
      double monomial[5];
      frame_monomials(y, origin, axis1, axis2, monomial);
      FMBEM_UNROLL
      for (int m = 0; m < 5; ++m) {
        const double difference = w * (monomial[m] - monomials_at_p[m]);
        dbl[m] += difference * kernel_double;
        hyper[m] += difference * kernel_hyper;
      }
    }
  }
}

template <class C, class Series>
FMBEM_HOST_DEVICE BasicMonomialMoments<C> monomial_moments(
    double k, const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& origin, const Vec3& axis1,
    const Vec3& axis2, const Vec3& x, const Vec3& n_x,
    const BasicHypersingularIntegrals<C>& constant, const GaussLegendreView& angular,
    const GaussLegendreView& radial, const Series& series) {
  // The in-plane test of panel_integrals and hypersingular_integrals.
  const PlaneFoot foot = plane_foot(a, b, c, x);
  const Vec3 n = foot.n, p = foot.p;
  const double h = foot.h;
  const double n_dot = dot(n, n_x);
  const double xi = dot(p - origin, axis1), eta = dot(p - origin, axis2);
  const double beta0[5] = {xi, eta, xi * xi, xi * eta, eta * eta};

  BasicMonomialMoments<C> out;
  FMBEM_UNROLL
  for (int m = 0; m < 5; ++m) {
    out.double_layer[m] = beta0[m] * constant.double_layer;
    out.hypersingular[m] = beta0[m] * constant.hypersingular;
  }
  C dbl[5]{}, hyper[5]{};
  // Near enough for one rule over the triangle: the bounded rest of the remainder there, the
  // directions' radial integrals without it.
  const double farthest = larger(larger(norm(a - x), norm(b - x)), norm(c - x));
  const bool rest_over_triangle = k != 0.0 && k * farthest <= kTriangleRuleReach;
  if (rest_over_triangle)
    remainder_over_triangle<C>(k, a, b, c, origin, axis1, axis2, p, h, n_dot, n_x, beta0, radial,
                               series, dbl, hyper);
  // One angular point of weight w: the monomials' rho and rho^2 parts along `direction`, their
  // radial integrals from rho on.
  const auto add_direction = [&](double w, const Vec3& direction, double rho) {
    const double e1 = dot(direction, axis1), e2 = dot(direction, axis2);
    const Radial<C> r = radial_integrals<C>(k, rho, h, n_dot, dot(direction, n_x), radial, series,
                                            !rest_over_triangle);
    const double beta1[5] = {e1, e2, 2.0 * xi * e1, xi * e2 + eta * e1, 2.0 * eta * e2};
    const double beta2[5] = {0.0, 0.0, e1 * e1, e1 * e2, e2 * e2};
    FMBEM_UNROLL
    for (int m = 0; m < 5; ++m) {
      dbl[m] += w * (beta1[m] * r.dbl[0] + beta2[m] * r.dbl[1]);
      hyper[m] += w * (beta1[m] * r.hyper[0] + beta2[m] * r.hyper[1]);
    }
  };
  const Vec3 v[3] = {a, b, c};
  FMBEM_UNROLL
  for (int edge = 0; edge < 3; ++edge) {
    const Vec3 &v1 = v[edge], &v2 = v[(edge + 1) % 3];
    const double length = norm(v2 - v1);
    const Vec3 unit = (v2 - v1) * (1.0 / length);
    const double t1 = dot(v1 - p, unit), t2 = dot(v2 - p, unit);
    const Vec3 foot_of_p = (v1 - p) - unit * t1;  // from p to the edge's line
    const double dist = norm(foot_of_p);
    if (dist <= 1e-14 * length + coordinate_rounding(largest_coordinate(v1, p))) {
      // p on the edge's line: the sector has no area. Beside the segment it also subtends no
      // angle. On the segment itself (x across a sharp edge from T, e.g. on the neighbouring
      // face of a cube) T subtends the half circle on its side, and at a vertex (x across the
      // edge from the vertex, as a structured mesh puts it) the vertex's angle; there the
      // log |h| terms left out above no longer cancel over the other sectors. The limit of thin
      // sectors as p reaches the edge or the vertex from inside restores them: over the
      // directions T does not cover, from the one back along the boundary (v1's on the
      // segment, the previous vertex's at v1) positively about n to the one forward (v2's),
      // the radial integrals at rho = 0, which are those log |h| terms. A vertex is done by the
      // edge leaving it (the edge arriving there skips).
      if (h == 0.0) continue;
      const double at_vertex = 1e-12 * length + coordinate_rounding(largest_coordinate(v1, p));
      const bool on_segment = t1 < -at_vertex && t2 > at_vertex;
      if (!on_segment && !(std::abs(t1) <= at_vertex)) continue;
      const Vec3 back = on_segment ? (v1 - p) : (v[(edge + 2) % 3] - v1);
      const Vec3 d1 = back * (1.0 / norm(back)), outward = cross(n, d1);
      // The angle T leaves uncovered: pi on the segment, 2 pi less the vertex's angle there.
      const double cosine = dot(d1, unit);
      const double covered = on_segment ? std::numbers::pi
                                        : std::acos(cosine > 1.0    ? 1.0
                                                    : cosine < -1.0 ? -1.0
                                                                    : cosine);
      const double missing = 2.0 * std::numbers::pi - covered;
      const int pieces = missing > std::numbers::pi ? 4 : 2;  // pieces of at most pi / 2
      const double half = 0.5 * missing / pieces;
      for (int piece = 0; piece < pieces; ++piece)
        for (int q = 0; q < angular.size; ++q) {
          const double theta = (2 * piece + 1) * half + half * angular.nodes[q];
          const double w = half * angular.weights[q];
          const Vec3 direction = d1 * std::cos(theta) + outward * std::sin(theta);
          add_direction(w, direction, 0.0);
        }
      continue;
    }
    const double sign = dot(cross(v1 - p, v2 - p), n) > 0.0 ? 1.0 : -1.0;
    const double u1 = std::asinh(t1 / dist), u2 = std::asinh(t2 / dist);
    // Pieces of at most kSectorPiece in u: a sector seen from near its edge's line is long in u.
    const int pieces = larger(1, int(std::ceil((u2 - u1) / kSectorPiece)));
    const double half = 0.5 * (u2 - u1) / pieces;
    for (int piece = 0; piece < pieces; ++piece)
      for (int q = 0; q < angular.size; ++q) {
        const double u = u1 + (2 * piece + 1) * half + half * angular.nodes[q];
        const CoshSinh hyperbolic = cosh_sinh(u);
        const double w = sign * half * angular.weights[q] / hyperbolic.cosh;
        const double rho = dist * hyperbolic.cosh;
        const Vec3 direction = (foot_of_p + unit * (dist * hyperbolic.sinh)) * (1.0 / rho);
        add_direction(w, direction, rho);
      }
  }
  FMBEM_UNROLL
  for (int m = 0; m < 5; ++m) {
    out.double_layer[m] += inv_4pi * dbl[m];
    out.hypersingular[m] += inv_4pi * hyper[m];
  }
  return out;
}

// refined_rule_integrals with the 7-point rule (barycentric: 3 a point; Barycentric is the
// side's array of 3 doubles).
template <class C, class Barycentric>
FMBEM_HOST_DEVICE BasicRefinedIntegrals<C> refined_rule_integrals(
    double k, const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& origin, const Vec3& axis1,
    const Vec3& axis2, const Vec3& x, const Vec3& n_x, const Barycentric* barycentric,
    const double* weights, int points) {
  const Vec3 n_y = normalized(cross(b - a, c - a));
  const Vec3 ab = (a + b) * 0.5, bc = (b + c) * 0.5, ca = (c + a) * 0.5;
  const Vec3 pieces[4][3] = {{a, ab, ca}, {ab, b, bc}, {ca, bc, c}, {ab, bc, ca}};
  const double area = 0.125 * norm(cross(b - a, c - a));  // of each piece
  BasicRefinedIntegrals<C> sum{};
  FMBEM_UNROLL
  for (int piece = 0; piece < 4; ++piece)
    for (int q = 0; q < points; ++q) {
      const auto& l = barycentric[q];
      const Vec3 y = pieces[piece][0] * l[0] + pieces[piece][1] * l[1] + pieces[piece][2] * l[2];
      const double w = area * weights[q];
      const KernelPair<C> pair = kernel_pair<C>(k, x, y);
      const C single = w * green_of(pair);
      const C dbl = w * green_normal_derivative_of(pair, n_y);
      const C adjoint = w * green_target_normal_derivative_of(pair, n_x);
      const C hyper = w * green_double_normal_derivative_of(pair, n_x, n_y);
      sum.constant.single_layer += single;
      sum.constant.double_layer += dbl;
      sum.constant.adjoint_double_layer += adjoint;
      sum.constant.hypersingular += hyper;
      double monomial[5];
      frame_monomials(y, origin, axis1, axis2, monomial);
      FMBEM_UNROLL
      for (int t = 0; t < 5; ++t) {
        sum.monomials.double_layer[t] += dbl * monomial[t];
        sum.monomials.hypersingular[t] += hyper * monomial[t];
      }
    }
  return sum;
}

}  // namespace fmbem::host_device

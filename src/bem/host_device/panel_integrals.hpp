#pragma once
// panel_integrals (panel_integrals.cpp) written once for the CPU and the GPU (bem/cuda):
// FMBEM_HOST_DEVICE templates over the complex type (std::complex<double> on the host,
// DeviceComplex on the device), so that both sides compute the same operations in the same
// order. Not a public header.
#include <cmath>

#include "fmbem/bem/panel_integrals.hpp"
#include "fmbem/core/coordinate_rounding.hpp"
#include "fmbem/core/host_device.hpp"
#include "fmbem/core/vec3.hpp"
#include "fmbem/kernel/kernel.hpp"
#include "fmbem/quadrature/gauss_legendre.hpp"

namespace fmbem::host_device {

// x seen from the plane of the triangle (a, b, c): its unit normal n by the right-hand rule, the
// height h of x above the plane, and p = x - h n.
struct PlaneFoot {
  Vec3 n;
  double h;
  // x on the plane (the self term): h is then 0, so that rounding does not turn the zero
  // double layer into the +-1/2 jump of the limit from either side.
  bool in_plane;
  Vec3 p;
};

FMBEM_HOST_DEVICE inline PlaneFoot plane_foot(const Vec3& a, const Vec3& b, const Vec3& c,
                                              const Vec3& x) {
  const Vec3 n = normalized(cross(b - a, c - a));
  const double longest = larger(larger(norm(b - a), norm(c - b)), norm(a - c));
  double h = dot(x - a, n);
  const bool in_plane =
      std::abs(h) <= 1e-12 * longest + coordinate_rounding(largest_coordinate(a, x));
  if (in_plane) h = 0.0;
  return {n, h, in_plane, x - n * h};
}

// One edge's sector seen from p, the projection of x on the plane: the
// signed angle it subtends is phi in [phi1, phi2], measured from the foot of
// the perpendicular from p at distance `dist`, so rho(phi) = dist / cos(phi).
struct Sector {
  double sign = 0.0;  // +1 when p is on the inner side of the edge, 0 if degenerate
  double dist = 0.0;
  double t1 = 0.0, t2 = 0.0;  // edge ends along the edge, from the foot
};

FMBEM_HOST_DEVICE inline Sector edge_sector(const Vec3& p, const Vec3& v1, const Vec3& v2,
                                            const Vec3& n) {
  const Vec3 e = v2 - v1;
  const double length = norm(e);
  const Vec3 unit = e * (1.0 / length);
  Sector s;
  s.t1 = dot(v1 - p, unit);
  s.t2 = dot(v2 - p, unit);
  s.dist = norm((v1 - p) - unit * s.t1);
  // p on the edge's line: the sector has no area.
  if (s.dist <= 1e-14 * length + coordinate_rounding(largest_coordinate(v1, p))) return s;
  s.sign = dot(cross(v1 - p, v2 - p), n) > 0.0 ? 1.0 : -1.0;
  return s;
}

// cosh u and sinh u from one exponential (the angular rules' substitution rho = dist cosh u; the
// library's cosh costs several times exp). sinh's cancellation for small u is absolute, 1e-16.
struct CoshSinh {
  double cosh, sinh;
};
FMBEM_HOST_DEVICE inline CoshSinh cosh_sinh(double u) {
  const double e = std::exp(u), inverse = 1.0 / e;
  return {0.5 * (e + inverse), 0.5 * (e - inverse)};
}

// exp(iz) - 1 without cancellation, from one sine and cosine of z / 2.
template <class C>
FMBEM_HOST_DEVICE C expm1_i(double z) {
  const double half_sin = std::sin(0.5 * z), half_cos = std::cos(0.5 * z);
  return C(-2.0 * half_sin * half_sin, 2.0 * half_sin * half_cos);
}

// (exp(iz) - 1) / (iz), without cancellation for small z.
template <class C>
FMBEM_HOST_DEVICE C expm1_ratio(double z) {
  if (std::abs(z) < 1e-4) return C(1.0 - z * z / 6.0, z / 2.0 - z * z * z / 24.0);
  // sin z and 1 - cos z from one sine and cosine of z / 2.
  const double half_sin = std::sin(0.5 * z), half_cos = std::cos(0.5 * z);
  return C(2.0 * half_sin * half_cos / z, 2.0 * half_sin * half_sin / z);
}

// exp(ikR) at R, or exp(-kappa R) for the screened kernel (kScreened: k holds kappa).
template <class C, bool kScreened>
FMBEM_HOST_DEVICE C panel_phase(double k, double r) {
  if constexpr (kScreened)
    return C(std::exp(-k * r), 0.0);
  else
    return C(std::cos(k * r), std::sin(k * r));
}

// (1 - exp(-z)) / z, without cancellation for small z: the screened kernel's expm1_ratio.
template <class C>
FMBEM_HOST_DEVICE C screened_expm1_ratio(double z) {
  if (z < 1e-4) return C(1.0 - 0.5 * z + z * z / 6.0, 0.0);
  return C(-std::expm1(-z) / z, 0.0);
}

// The longest piece of a sector in u = asinh(t / dist) that one angular rule integrates: the
// integrands are analytic in u within pi/2 of the real axis (rho^2 + h^2 vanishes there), so a
// piece of 2 gives the rule's error a fixed rate, about 100 times less per two more points;
// unsplit, a sector seen from near its edge's line is long in u and the rule converges slowly.
constexpr double kSectorPiece = 2.0;

// What panel_integrals forms: the integrals of G, or (kRemainder) those of G less the Laplace
// kernel 1 / (4 pi r), the Helmholtz remainder in one pass (gradients adds the Laplace parts in
// closed form).
enum class PanelKernel { helmholtz, screened, remainder };

// S and D of a flat triangle at x (panel_integrals.hpp of bem/): the radial integral in closed
// form, the angle by `angular` per edge sector, on pieces of at most kSectorPiece in u.
// PanelKernel::screened: of the screened kernel exp(-kappa r) / (4 pi r), k holding kappa.
template <class C, PanelKernel kKernel = PanelKernel::helmholtz>
FMBEM_HOST_DEVICE BasicPanelIntegrals<C> panel_integrals(double k, const Vec3& a, const Vec3& b,
                                                         const Vec3& c, const Vec3& x,
                                                         const GaussLegendreView& angular) {
  constexpr bool kScreened = kKernel == PanelKernel::screened;
  constexpr bool kRemainder = kKernel == PanelKernel::remainder;
  const PlaneFoot foot = plane_foot(a, b, c, x);
  const Vec3 n = foot.n, p = foot.p;
  const double h = foot.h, abs_h = std::abs(h);
  const bool in_plane = foot.in_plane;
  const C phase_h = panel_phase<C, kScreened>(k, abs_h);
  const C phase_h_less_one = kRemainder ? expm1_i<C>(k * abs_h) : C{};

  C single{}, dbl{};
  double laplace_single = 0.0;
  const Vec3 v[3] = {a, b, c};
  FMBEM_UNROLL
  for (int e = 0; e < 3; ++e) {
    const Sector s = edge_sector(p, v[e], v[(e + 1) % 3], n);
    if (s.sign == 0.0) continue;
    // Integrate in u = asinh(tan phi): rho = dist cosh(u), dphi = du / cosh(u).
    // The Laplace integrand becomes constant and sectors seen almost edge-on
    // (p near an edge's line, the close-neighbour case) stay smooth.
    const double u1 = std::asinh(s.t1 / s.dist), u2 = std::asinh(s.t2 / s.dist);
    const int pieces = larger(1, int(std::ceil((u2 - u1) / kSectorPiece)));
    const double half = 0.5 * (u2 - u1) / pieces;
    C sector_single{}, sector_double{};
    for (int piece = 0; piece < pieces; ++piece)
      for (int q = 0; q < angular.size; ++q) {
        const double u = u1 + (2 * piece + 1) * half + half * angular.nodes[q];
        const double cosh_u = cosh_sinh(u).cosh;
        const double w = half * angular.weights[q] / cosh_u;
        const double rho = s.dist * cosh_u;
        const double r_max = std::sqrt(rho * rho + h * h);  // (hypot's care not needed)
        const double delta = rho * rho / (r_max + abs_h);   // r_max - |h|, stably
        // Radial integral of exp(ikR)/R rho drho = integral of exp(ikR) dR
        // from |h| to r_max; its Laplace part is delta.
        C radial{};
        if constexpr (kScreened)
          radial = phase_h * delta * screened_expm1_ratio<C>(k * delta);
        else
          radial = phase_h * delta * expm1_ratio<C>(k * delta);
        if (in_plane || kRemainder) {
          sector_single += w * (radial - delta);  // the 1/r part is added analytically
        } else {
          sector_single += w * radial;
        }
        if (!in_plane) {
          // -h * integral of G'(R) dR = -h (G(r_max) - G(|h|)); the remainder's Laplace part
          // -h (1 / r_max - 1 / |h|) taken out.
          if constexpr (kRemainder) {
            sector_double +=
                w * (-h * expm1_i<C>(k * r_max) / r_max + (h > 0 ? 1.0 : -1.0) * phase_h_less_one);
          } else {
            const C phase_max = panel_phase<C, kScreened>(k, r_max);
            sector_double += w * (-h * phase_max / r_max + (h > 0 ? 1.0 : -1.0) * phase_h);
          }
        }
      }
    single += s.sign * sector_single;
    dbl += s.sign * sector_double;
    if (in_plane && !kRemainder) laplace_single += s.sign * s.dist * (u2 - u1);
  }
  return {inv_4pi * (single + laplace_single), inv_4pi * dbl};
}

}  // namespace fmbem::host_device

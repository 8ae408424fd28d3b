#include "fmbem/bem/panel_integrals.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "fmbem/core/coordinate_rounding.hpp"
#include "fmbem/kernel/kernel.hpp"

namespace fmbem {
namespace {

// One edge's sector seen from p, the projection of x on the plane: the
// signed angle it subtends is phi in [phi1, phi2], measured from the foot of
// the perpendicular from p at distance `dist`, so rho(phi) = dist / cos(phi).
struct Sector {
  double sign = 0.0;  // +1 when p is on the inner side of the edge, 0 if degenerate
  double dist = 0.0;
  double t1 = 0.0, t2 = 0.0;  // edge ends along the edge, from the foot
};

Sector edge_sector(const Vec3& p, const Vec3& v1, const Vec3& v2, const Vec3& n) {
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

// (exp(iz) - 1) / (iz), without cancellation for small z.
cplx expm1_ratio(double z) {
  if (std::abs(z) < 1e-4) return cplx(1.0 - z * z / 6.0, z / 2.0 - z * z * z / 24.0);
  const double half_sin = std::sin(0.5 * z);
  return cplx(std::sin(z) / z, 2.0 * half_sin * half_sin / z);
}

}  // namespace

double laplace_single_layer_in_plane(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& x) {
  const Vec3 n = normalized(cross(b - a, c - a));
  const Vec3 p = x - n * dot(x - a, n);
  const std::array<Vec3, 3> v{a, b, c};
  double sum = 0.0;
  for (int e = 0; e < 3; ++e) {
    const Sector s = edge_sector(p, v[e], v[(e + 1) % 3], n);
    // integral of rho(phi) dphi = dist * [asinh(tan phi)].
    if (s.sign != 0.0)
      sum += s.sign * s.dist * (std::asinh(s.t2 / s.dist) - std::asinh(s.t1 / s.dist));
  }
  return inv_4pi * sum;
}

PanelIntegrals panel_integrals(double k, const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& x,
                               const GaussLegendre& angular) {
  const Vec3 n = normalized(cross(b - a, c - a));
  const double longest = std::max({norm(b - a), norm(c - b), norm(a - c)});
  double h = dot(x - a, n);
  // x on the plane (the self term): rounding must not turn the zero double
  // layer into the +-1/2 jump of the limit from either side.
  const bool in_plane =
      std::abs(h) <= 1e-12 * longest + coordinate_rounding(largest_coordinate(a, x));
  if (in_plane) h = 0.0;
  const double abs_h = std::abs(h);
  const Vec3 p = x - n * h;
  const cplx phase_h(std::cos(k * abs_h), std::sin(k * abs_h));

  cplx single{}, dbl{};
  double laplace_single = 0.0;
  const std::array<Vec3, 3> v{a, b, c};
  for (int e = 0; e < 3; ++e) {
    const Sector s = edge_sector(p, v[e], v[(e + 1) % 3], n);
    if (s.sign == 0.0) continue;
    // Integrate in u = asinh(tan phi): rho = dist cosh(u), dphi = du / cosh(u).
    // The Laplace integrand becomes constant and sectors seen almost edge-on
    // (p near an edge's line, the close-neighbour case) stay smooth.
    const double u1 = std::asinh(s.t1 / s.dist), u2 = std::asinh(s.t2 / s.dist);
    const double half = 0.5 * (u2 - u1), mid = 0.5 * (u2 + u1);
    cplx sector_single{}, sector_double{};
    double sector_laplace = 0.0;
    for (std::size_t q = 0; q < angular.size(); ++q) {
      const double u = mid + half * angular.nodes[q];
      const double cosh_u = std::cosh(u);
      const double w = half * angular.weights[q] / cosh_u;
      const double rho = s.dist * cosh_u;
      const double r_max = std::hypot(rho, h);
      const double delta = rho * rho / (r_max + abs_h);  // r_max - |h|, stably
      // Radial integral of exp(ikR)/R rho drho = integral of exp(ikR) dR
      // from |h| to r_max; its Laplace part is delta.
      const cplx radial = phase_h * delta * expm1_ratio(k * delta);
      if (in_plane) {
        sector_single += w * (radial - delta);  // the 1/r part is added analytically
      } else {
        sector_single += w * radial;
        // -h * integral of G'(R) dR = -h (G(r_max) - G(|h|)).
        const cplx phase_max(std::cos(k * r_max), std::sin(k * r_max));
        sector_double += w * (-h * phase_max / r_max + (h > 0 ? 1.0 : -1.0) * phase_h);
      }
    }
    if (in_plane) sector_laplace = s.dist * (u2 - u1);
    single += s.sign * sector_single;
    dbl += s.sign * sector_double;
    laplace_single += s.sign * sector_laplace;
  }
  return {inv_4pi * (single + laplace_single), inv_4pi * dbl};
}

}  // namespace fmbem

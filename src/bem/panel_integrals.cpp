#include "fmbem/bem/panel_integrals.hpp"

#include <cmath>

#include "fmbem/kernel/kernel.hpp"
#include "host_device/panel_integrals.hpp"

namespace fmbem {

double laplace_single_layer_in_plane(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& x) {
  const Vec3 n = normalized(cross(b - a, c - a));
  const Vec3 p = x - n * dot(x - a, n);
  const Vec3 v[3] = {a, b, c};
  double sum = 0.0;
  for (int e = 0; e < 3; ++e) {
    const host_device::Sector s = host_device::edge_sector(p, v[e], v[(e + 1) % 3], n);
    // integral of rho(phi) dphi = dist * [asinh(tan phi)].
    if (s.sign != 0.0)
      sum += s.sign * s.dist * (std::asinh(s.t2 / s.dist) - std::asinh(s.t1 / s.dist));
  }
  return inv_4pi * sum;
}

PanelIntegrals panel_integrals(double k, const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& x,
                               const GaussLegendre& angular) {
  return host_device::panel_integrals<cplx>(k, a, b, c, x, angular.view());
}

PanelIntegrals screened_panel_integrals(double kappa, const Vec3& a, const Vec3& b, const Vec3& c,
                                        const Vec3& x, const GaussLegendre& angular) {
  return host_device::panel_integrals<cplx, host_device::PanelKernel::screened>(kappa, a, b, c, x,
                                                                                angular.view());
}

}  // namespace fmbem

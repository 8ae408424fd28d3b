#pragma once
#include <cmath>
#include <numbers>

#include "fmbem/core/vec3.hpp"

#if defined(__CUDACC__)
#define FMBEM_HOST_DEVICE __host__ __device__
#else
#define FMBEM_HOST_DEVICE
#endif

namespace fmbem {

inline constexpr double inv_4pi = 0.25 / std::numbers::pi;

// G(r) = exp(ikr) / (4 pi r), the Laplace kernel 1/(4 pi r) at k = 0.
FMBEM_HOST_DEVICE inline cplx green(double k, double r) {
  return cplx(std::cos(k * r), std::sin(k * r)) * (inv_4pi / r);
}

// dG/dn_y (x, y) = grad_y G . n_y = G'(r) (y - x) . n_y / r,
// G'(r) = exp(ikr) (ikr - 1) / (4 pi r^2).
FMBEM_HOST_DEVICE inline cplx green_normal_derivative(double k, const Vec3& x, const Vec3& y,
                                                      const Vec3& normal_y) {
  const Vec3 d = y - x;
  const double r = norm(d);
  const double kr = k * r;
  const cplx phase(std::cos(kr), std::sin(kr));
  return phase * cplx(-1.0, kr) * (inv_4pi * dot(d, normal_y) / (r * r * r));
}

}  // namespace fmbem

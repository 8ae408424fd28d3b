#pragma once
#include <cmath>
#include <numbers>

#include "fmbem/core/host_device.hpp"
#include "fmbem/core/vec3.hpp"

namespace fmbem {

inline constexpr double inv_4pi = 0.25 / std::numbers::pi;

// Each kernel is a template over the complex type C: std::complex<double> on the host (the
// default), the device's complex type in the GPU's kernels (bem/cuda).

// G(r) = exp(ikr) / (4 pi r), the Laplace kernel 1/(4 pi r) at k = 0.
template <class C = cplx>
FMBEM_HOST_DEVICE C green(double k, double r) {
  return C(std::cos(k * r), std::sin(k * r)) * (inv_4pi / r);
}

// The kernels below at one pair with its phase exp(ikr) given (kernel_pair): the callers that
// need several of them (the regular rule's sums) form the sine and cosine once, and each kernel
// is the same operations as its function alone.
template <class C = cplx>
struct KernelPair {
  Vec3 d;     // y - x
  double r2;  // |y - x|^2
  double r;   // |y - x|
  double kr;  // k r
  C phase;    // exp(ikr)
};
template <class C = cplx>
FMBEM_HOST_DEVICE KernelPair<C> kernel_pair(double k, const Vec3& x, const Vec3& y) {
  const Vec3 d = y - x;
  const double r2 = dot(d, d), r = std::sqrt(r2), kr = k * r;
  return {d, r2, r, kr, C(std::cos(kr), std::sin(kr))};
}
template <class C = cplx>
FMBEM_HOST_DEVICE C green_of(const KernelPair<C>& p) {
  return p.phase * (inv_4pi / p.r);
}
template <class C = cplx>
FMBEM_HOST_DEVICE C green_normal_derivative_of(const KernelPair<C>& p, const Vec3& normal_y) {
  return p.phase * C(-1.0, p.kr) * (inv_4pi * dot(p.d, normal_y) / (p.r * p.r * p.r));
}
// (x - y) . n_x is -(y - x) . n_x exactly.
template <class C = cplx>
FMBEM_HOST_DEVICE C green_target_normal_derivative_of(const KernelPair<C>& p,
                                                      const Vec3& normal_x) {
  return p.phase * C(-1.0, p.kr) * (inv_4pi * -dot(p.d, normal_x) / (p.r * p.r * p.r));
}
template <class C = cplx>
FMBEM_HOST_DEVICE C green_double_normal_derivative_of(const KernelPair<C>& p, const Vec3& normal_x,
                                                      const Vec3& normal_y) {
  const C f = C(-1.0, p.kr) / (p.r2 * p.r);
  const C f_prime = C(3.0 - p.kr * p.kr, -3.0 * p.kr) / (p.r2 * p.r2 * p.r);
  return p.phase * inv_4pi *
         (-f * dot(normal_x, normal_y) - f_prime * (dot(p.d, normal_x) * dot(p.d, normal_y)));
}

// The screened (Yukawa) kernel exp(-kappa r) / (4 pi r), G at k = i kappa: the regularised
// Burton-Miller formulation's S~.
template <class C = cplx>
FMBEM_HOST_DEVICE C screened_green(double kappa, double r) {
  return C(std::exp(-kappa * r) * (inv_4pi / r), 0.0);
}

// Its dG/dn_y: G'(r) = -exp(-kappa r) (kappa r + 1) / (4 pi r^2).
template <class C = cplx>
FMBEM_HOST_DEVICE C screened_green_normal_derivative(double kappa, const Vec3& x, const Vec3& y,
                                                     const Vec3& normal_y) {
  const Vec3 d = y - x;
  const double r = norm(d), kr = kappa * r;
  return C(-std::exp(-kr) * (kr + 1.0) * (inv_4pi * dot(d, normal_y) / (r * r * r)), 0.0);
}

// dG/dn_y (x, y) = grad_y G . n_y = G'(r) (y - x) . n_y / r,
// G'(r) = exp(ikr) (ikr - 1) / (4 pi r^2).
template <class C = cplx>
FMBEM_HOST_DEVICE C green_normal_derivative(double k, const Vec3& x, const Vec3& y,
                                            const Vec3& normal_y) {
  return green_normal_derivative_of(kernel_pair<C>(k, x, y), normal_y);
}

// dG/dn_x (x, y) = grad_x G . n_x = G'(r) (x - y) . n_x / r: the adjoint double layer's kernel.
template <class C = cplx>
FMBEM_HOST_DEVICE C green_target_normal_derivative(double k, const Vec3& x, const Vec3& y,
                                                   const Vec3& normal_x) {
  return green_target_normal_derivative_of(kernel_pair<C>(k, x, y), normal_x);
}

// d^2 G / dn_x dn_y (x, y), the hypersingular kernel: with d = y - x, F(r) = G'(r) / r,
//   -F(r) n_x . n_y - F'(r) (d . n_x)(d . n_y) / r,
//   F = exp(ikr)(ikr - 1) / (4 pi r^3), F'(r) / r = exp(ikr)(3 - 3ikr - k^2 r^2) / (4 pi r^5).
template <class C = cplx>
FMBEM_HOST_DEVICE C green_double_normal_derivative(double k, const Vec3& x, const Vec3& y,
                                                   const Vec3& normal_x, const Vec3& normal_y) {
  return green_double_normal_derivative_of(kernel_pair<C>(k, x, y), normal_x, normal_y);
}

}  // namespace fmbem

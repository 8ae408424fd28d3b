#include "fmbem/fmm/direct_sum.hpp"

#include <cmath>

#include "fmbem/core/error.hpp"
#include "fmbem/kernel/kernel.hpp"

namespace fmbem::fmm {

PointSources::PointSources(std::span<const Vec3> points, std::span<const Vec3> normals,
                           std::span<const std::size_t> order, std::span<const cplx> charges,
                           std::span<const cplx> dipoles) {
  if ((!charges.empty() && charges.size() != points.size()) ||
      (!dipoles.empty() && (dipoles.size() != points.size() || normals.size() != points.size())))
    throw Error("point sources: charges, dipoles or normals of the wrong size");
  fill(points, normals, order, charges, dipoles, false);
}

PointSources::PointSources(PointsInOrder, std::span<const Vec3> points,
                           std::span<const Vec3> normals, std::span<const std::size_t> order,
                           std::span<const cplx> charges, std::span<const cplx> dipoles) {
  if (points.size() != order.size() || (!dipoles.empty() && normals.size() != points.size()))
    throw Error("point sources: points or normals of the wrong size");
  fill(points, normals, order, charges, dipoles, true);
}

void PointSources::fill(std::span<const Vec3> points, std::span<const Vec3> normals,
                        std::span<const std::size_t> order, std::span<const cplx> charges,
                        std::span<const cplx> dipoles, bool points_in_order) {
  const std::size_t n = order.size();
  for (auto* v :
       {&x_, &y_, &z_, &q_re_, &q_im_, &d_re_x_, &d_re_y_, &d_re_z_, &d_im_x_, &d_im_y_, &d_im_z_})
    v->assign(n, 0.0);
#pragma omp parallel for schedule(static)
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t j = order[i];
    const std::size_t at = points_in_order ? i : j;  // the point's index; j the strengths'
    x_[i] = points[at].x;
    y_[i] = points[at].y;
    z_[i] = points[at].z;
    if (!charges.empty()) {
      q_re_[i] = charges[j].real();
      q_im_[i] = charges[j].imag();
    }
    if (!dipoles.empty()) {
      const Vec3& nu = normals[at];
      const double re = dipoles[j].real(), im = dipoles[j].imag();
      d_re_x_[i] = re * nu.x;
      d_re_y_[i] = re * nu.y;
      d_re_z_[i] = re * nu.z;
      d_im_x_[i] = im * nu.x;
      d_im_y_[i] = im * nu.y;
      d_im_z_[i] = im * nu.z;
    }
  }
}

// The kernel's phase exp(ikr) = c + i s and z = ikr at one distance: for a real k z = i kr, for
// the screened kernel (k = i kappa) z = -kappa r and exp(z) real. Compile-time, so that the real-k
// loops keep their cost.
template <bool Screened>
[[gnu::always_inline]] inline void kernel_phase(double k, double r, double& c, double& s,
                                                double& z_re, double& z_im) {
  if constexpr (Screened) {
    z_re = -k * r;
    z_im = 0.0;
    c = std::exp(z_re);
    s = 0.0;
  } else {
    z_re = 0.0;
    z_im = k * r;
    c = std::cos(z_im);
    s = std::sin(z_im);
  }
}

template <bool Screened>
[[gnu::always_inline]] inline cplx PointSources::potential_loop(std::size_t begin, std::size_t end,
                                                                double k, const Vec3& x,
                                                                double skip_radius2) const {
  const double* __restrict px = x_.data();
  const double* __restrict py = y_.data();
  const double* __restrict pz = z_.data();
  const double* __restrict qr = q_re_.data();
  const double* __restrict qi = q_im_.data();
  const double* __restrict drx = d_re_x_.data();
  const double* __restrict dry = d_re_y_.data();
  const double* __restrict drz = d_re_z_.data();
  const double* __restrict dix = d_im_x_.data();
  const double* __restrict diy = d_im_y_.data();
  const double* __restrict diz = d_im_z_.data();
  double acc_re = 0.0, acc_im = 0.0;
#pragma omp simd reduction(+ : acc_re, acc_im)
  for (std::size_t q = begin; q < end; ++q) {
    const double dx = px[q] - x.x, dy = py[q] - x.y, dz = pz[q] - x.z;  // y - x
    const double r2 = dx * dx + dy * dy + dz * dz;
    const double r = std::sqrt(r2);
    // 1 / r, or 0 for a skipped pair, without a branch (a branch stops the
    // vectoriser): keep is 1 or 0, and 1 only where r >= 1e-150. (Not keep / (r + (1 - keep)):
    // -ffast-math reassociates that into ((r + 1) - keep), losing all digits of r below 1e-16.)
    const double keep = std::fmin(1.0, std::fmax(0.0, (r2 - skip_radius2) * 1e300));
    const double inv_r = keep / std::fmax(r, 1e-300);
    double c, s, z_re, z_im;
    kernel_phase<Screened>(k, r, c, s, z_re, z_im);
    // Charge: exp(ikr) / r q.
    const double g_re = c * inv_r, g_im = s * inv_r;
    acc_re += g_re * qr[q] - g_im * qi[q];
    acc_im += g_re * qi[q] + g_im * qr[q];
    // Dipole: exp(ikr) (ikr - 1) / r^3 (y - x) . (d n).
    const double inv_r3 = inv_r * inv_r * inv_r;
    const double f_re = (c * (z_re - 1.0) - s * z_im) * inv_r3,
                 f_im = (s * (z_re - 1.0) + c * z_im) * inv_r3;
    const double p_re = dx * drx[q] + dy * dry[q] + dz * drz[q];
    const double p_im = dx * dix[q] + dy * diy[q] + dz * diz[q];
    acc_re += f_re * p_re - f_im * p_im;
    acc_im += f_re * p_im + f_im * p_re;
  }
  return cplx(acc_re, acc_im) * inv_4pi;
}

// Built for x86-64-v3 (AVX2 + FMA) and for the baseline; the loader picks the one the
// CPU runs (4-wide libmvec sin/cos on AVX2 machines).
__attribute__((target_clones("arch=x86-64-v3", "default"))) cplx PointSources::potential(
    std::size_t begin, std::size_t end, Wavenumber k, const Vec3& x, double skip_radius2) const {
  return k.imaginary ? potential_loop<true>(begin, end, k.magnitude, x, skip_radius2)
                     : potential_loop<false>(begin, end, k.magnitude, x, skip_radius2);
}

// With d = y - x, t = d . n_x, D = d n_y (the dipole vector), z = ikr, f = exp(z)(z - 1) / r^3
// and g = exp(z)(3 + z^2 - 3z) / r^5 (4 pi G'(r) / r and 4 pi F'(r) / r of kernel.hpp):
//   4 pi value             = exp(ikr) / r q + f (d . D),
//   4 pi normal derivative = -(f (t q + n_x . D) + g t (d . D)).
template <bool Screened>
[[gnu::always_inline]] inline PointSources::ValueAndNormalDerivative
PointSources::potential_and_normal_derivative_loop(std::size_t begin, std::size_t end, double k,
                                                   const Vec3& x, const Vec3& n_x,
                                                   double skip_radius2) const {
  const double* __restrict px = x_.data();
  const double* __restrict py = y_.data();
  const double* __restrict pz = z_.data();
  const double* __restrict qr = q_re_.data();
  const double* __restrict qi = q_im_.data();
  const double* __restrict drx = d_re_x_.data();
  const double* __restrict dry = d_re_y_.data();
  const double* __restrict drz = d_re_z_.data();
  const double* __restrict dix = d_im_x_.data();
  const double* __restrict diy = d_im_y_.data();
  const double* __restrict diz = d_im_z_.data();
  const double nx = n_x.x, ny = n_x.y, nz = n_x.z;
  double v_re = 0.0, v_im = 0.0, b_re = 0.0, b_im = 0.0;
#pragma omp simd reduction(+ : v_re, v_im, b_re, b_im)
  for (std::size_t q = begin; q < end; ++q) {
    const double dx = px[q] - x.x, dy = py[q] - x.y, dz = pz[q] - x.z;  // y - x
    const double r2 = dx * dx + dy * dy + dz * dz;
    const double r = std::sqrt(r2);
    // Skipped pairs: see potential_loop().
    const double keep = std::fmin(1.0, std::fmax(0.0, (r2 - skip_radius2) * 1e300));
    const double inv_r = keep / std::fmax(r, 1e-300);
    double c, s, z_re, z_im;
    kernel_phase<Screened>(k, r, c, s, z_re, z_im);
    const double inv_r2 = inv_r * inv_r, inv_r3 = inv_r2 * inv_r;
    const double f_re = (c * (z_re - 1.0) - s * z_im) * inv_r3,
                 f_im = (s * (z_re - 1.0) + c * z_im) * inv_r3;
    const double a = 3.0 + z_re * z_re - z_im * z_im - 3.0 * z_re,
                 b = 2.0 * z_re * z_im - 3.0 * z_im, inv_r5 = inv_r3 * inv_r2;
    const double g_re = (c * a - s * b) * inv_r5, g_im = (c * b + s * a) * inv_r5;
    const double p_re = dx * drx[q] + dy * dry[q] + dz * drz[q];  // d . D
    const double p_im = dx * dix[q] + dy * diy[q] + dz * diz[q];
    const double m_re = nx * drx[q] + ny * dry[q] + nz * drz[q];  // n_x . D
    const double m_im = nx * dix[q] + ny * diy[q] + nz * diz[q];
    const double t = dx * nx + dy * ny + dz * nz;
    v_re += (c * qr[q] - s * qi[q]) * inv_r + f_re * p_re - f_im * p_im;
    v_im += (c * qi[q] + s * qr[q]) * inv_r + f_re * p_im + f_im * p_re;
    const double u_re = t * qr[q] + m_re, u_im = t * qi[q] + m_im;  // t q + n_x . D
    b_re += f_re * u_re - f_im * u_im + t * (g_re * p_re - g_im * p_im);
    b_im += f_re * u_im + f_im * u_re + t * (g_re * p_im + g_im * p_re);
  }
  return {cplx(v_re, v_im) * inv_4pi, -cplx(b_re, b_im) * inv_4pi};
}

__attribute__((target_clones("arch=x86-64-v3", "default"))) PointSources::ValueAndNormalDerivative
PointSources::potential_and_normal_derivative(std::size_t begin, std::size_t end, Wavenumber k,
                                              const Vec3& x, const Vec3& n_x,
                                              double skip_radius2) const {
  return k.imaginary ? potential_and_normal_derivative_loop<true>(begin, end, k.magnitude, x, n_x,
                                                                  skip_radius2)
                     : potential_and_normal_derivative_loop<false>(begin, end, k.magnitude, x, n_x,
                                                                   skip_radius2);
}

}  // namespace fmbem::fmm

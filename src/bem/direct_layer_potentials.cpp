#include "fmbem/bem/direct_layer_potentials.hpp"

#include <cmath>

#include "fmbem/core/error.hpp"
#include "fmbem/kernel/kernel.hpp"

namespace fmbem {

DirectLayerPotentials::DirectLayerPotentials(const Discretization& disc, double k, RowRange rows,
                                             const NearFieldOptions& near_options)
    : disc_(&disc), k_(k), rows_(rows), near_(disc, k, rows, near_options) {}

void DirectLayerPotentials::apply(std::span<const cplx> double_density,
                                  std::span<const cplx> single_density, std::span<cplx> y) const {
  const std::size_t n = disc_->size(), m = disc_->points_per_element();
  if ((!double_density.empty() && double_density.size() != n) ||
      (!single_density.empty() && single_density.size() != n) || y.size() != rows_.size())
    throw Error("layer potentials: density or result of the wrong size");
  const bool with_double = !double_density.empty(), with_single = !single_density.empty();

  // Per quadrature point, structure of arrays: position, weight x single
  // density, weight x double density x normal (real and imaginary parts),
  // so the inner loop is plain real arithmetic that vectorises.
  const std::size_t num_points = n * m;
  std::vector<double> px(num_points), py(num_points), pz(num_points), s_re(num_points, 0.0),
      s_im(num_points, 0.0), d_re_x(num_points, 0.0), d_re_y(num_points, 0.0),
      d_re_z(num_points, 0.0), d_im_x(num_points, 0.0), d_im_y(num_points, 0.0),
      d_im_z(num_points, 0.0);
#pragma omp parallel for schedule(static)
  for (std::size_t e = 0; e < n; ++e) {
    const Vec3& normal = disc_->mesh().normals()[e];
    for (std::size_t q = e * m; q < (e + 1) * m; ++q) {
      const Vec3& p = disc_->quadrature_points()[q];
      const double w = disc_->quadrature_weights()[q];
      px[q] = p.x;
      py[q] = p.y;
      pz[q] = p.z;
      if (with_single) {
        s_re[q] = w * single_density[e].real();
        s_im[q] = w * single_density[e].imag();
      }
      if (with_double) {
        const double re = w * double_density[e].real(), im = w * double_density[e].imag();
        d_re_x[q] = re * normal.x;
        d_re_y[q] = re * normal.y;
        d_re_z[q] = re * normal.z;
        d_im_x[q] = im * normal.x;
        d_im_y[q] = im * normal.y;
        d_im_z[q] = im * normal.z;
      }
    }
  }

  const double k = k_;
  const double coincident2 = disc_->coincidence_radius() * disc_->coincidence_radius();
#pragma omp parallel for schedule(dynamic, 16)
  for (std::size_t i = rows_.begin; i < rows_.end; ++i) {
    const Vec3 x = disc_->collocation_points()[i];
    double acc_re = 0.0, acc_im = 0.0;
#pragma omp simd reduction(+ : acc_re, acc_im)
    for (std::size_t q = 0; q < num_points; ++q) {
      const double dx = px[q] - x.x, dy = py[q] - x.y, dz = pz[q] - x.z;  // y - x
      const double r2 = dx * dx + dy * dy + dz * dz;
      const double r = std::sqrt(r2);
      const double inv_r = r2 > coincident2 ? 1.0 / r : 0.0;
      const double kr = k * r;
      const double c = std::cos(kr), s = std::sin(kr);
      // S part: exp(ikr)/r * (s_re + i s_im).
      const double g_re = c * inv_r, g_im = s * inv_r;
      acc_re += g_re * s_re[q] - g_im * s_im[q];
      acc_im += g_re * s_im[q] + g_im * s_re[q];
      // D part: exp(ikr) (ikr - 1) / r^3 * (y - x).(n w dd).
      const double inv_r3 = inv_r * inv_r * inv_r;
      const double f_re = (-c - s * kr) * inv_r3, f_im = (c * kr - s) * inv_r3;
      const double p_re = dx * d_re_x[q] + dy * d_re_y[q] + dz * d_re_z[q];
      const double p_im = dx * d_im_x[q] + dy * d_im_y[q] + dz * d_im_z[q];
      acc_re += f_re * p_re - f_im * p_im;
      acc_im += f_re * p_im + f_im * p_re;
    }
    y[i - rows_.begin] = cplx(acc_re, acc_im) * inv_4pi;
  }
  near_.add_to(double_density, single_density, y);
}

}  // namespace fmbem

#include "fmbem/bem/direct_layer_potentials.hpp"

#include <numeric>

#include "fmbem/bem/point_strengths.hpp"
#include "fmbem/fmm/direct_sum.hpp"

namespace fmbem {

DirectLayerPotentials::DirectLayerPotentials(const Discretization& disc, fmm::Wavenumber k,
                                             RowRange rows, const NearFieldOptions& near_options,
                                             LayerCoupling coupling, DensityModel double_density)
    : CorrectedLayerPotentials(disc, k, rows, near_options, coupling, double_density),
      k_(k),
      normals_(quadrature_point_normals(disc)),
      order_(disc.quadrature_points().size()) {
  std::iota(order_.begin(), order_.end(), std::size_t{0});
}

void DirectLayerPotentials::regular_sum(std::span<const cplx> double_density,
                                        std::span<const cplx> single_density,
                                        std::span<cplx> y) const {
  const Discretization& disc = discretization();
  const fmm::PointSources sources(disc.quadrature_points(), normals_, order_,
                                  point_strengths(disc, single_density),
                                  double_layer_strengths(double_density));
  const double skip2 = disc.coincidence_radius() * disc.coincidence_radius();
  const RowRange r = rows();
  const LayerCoupling& coupling = layer_coupling();
  const auto& collocation_normals = disc.mesh().normals();
  // With image planes each row sums its collocation point's images too, signed.
  const ImagePlanes& planes = disc.mesh().image_planes();
#pragma omp parallel for schedule(dynamic, 16)
  for (std::size_t i = r.begin; i < r.end; ++i) {
    cplx value{}, derivative{};
    for (std::size_t g = 0; g < planes.images(); ++g) {
      const Vec3 x = planes.reflect(g, disc.collocation_points()[i]);
      const double sign = image_weight(g);
      if (!coupling.normal_derivatives()) {
        value += sign * sources.potential(0, sources.size(), k_, x, skip2);
      } else {
        const auto both = sources.potential_and_normal_derivative(
            0, sources.size(), k_, x, planes.reflect_direction(g, collocation_normals[i]), skip2);
        value += sign * both.value;
        derivative += sign * both.normal_derivative;
      }
    }
    if (coupling.apart) {
      y[i - r.begin] = value;
      y[r.size() + i - r.begin] = derivative;
    } else {
      y[i - r.begin] = value + coupling.alpha * derivative;
    }
  }
}

}  // namespace fmbem

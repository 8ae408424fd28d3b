#include "fmbem/bem/direct_layer_potentials.hpp"

#include <numeric>

#include "fmbem/bem/point_strengths.hpp"
#include "fmbem/fmm/direct_sum.hpp"

namespace fmbem {

DirectLayerPotentials::DirectLayerPotentials(const Discretization& disc, double k, RowRange rows,
                                             const NearFieldOptions& near_options)
    : disc_(&disc),
      k_(k),
      rows_(rows),
      near_(disc, k, rows, near_options),
      normals_(quadrature_point_normals(disc)) {}

void DirectLayerPotentials::apply(std::span<const cplx> double_density,
                                  std::span<const cplx> single_density, std::span<cplx> y) const {
  check_layer_sizes(*disc_, rows_, double_density, single_density, y);
  // Every quadrature point of every element, in element order.
  std::vector<std::size_t> order(disc_->quadrature_points().size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  const fmm::PointSources sources(disc_->quadrature_points(), normals_, order,
                                  point_strengths(*disc_, single_density),
                                  point_strengths(*disc_, double_density));
  const double skip2 = disc_->coincidence_radius() * disc_->coincidence_radius();
#pragma omp parallel for schedule(dynamic, 16)
  for (std::size_t i = rows_.begin; i < rows_.end; ++i)
    y[i - rows_.begin] =
        sources.potential(0, sources.size(), k_, disc_->collocation_points()[i], skip2);
  near_.add_to(double_density, single_density, y);
}

}  // namespace fmbem

#include "fmbem/bem/corrected_layer_potentials.hpp"

#include "fmbem/core/error.hpp"

namespace fmbem {

CorrectedLayerPotentials::CorrectedLayerPotentials(const Discretization& disc, double k,
                                                   RowRange rows,
                                                   const NearFieldOptions& near_options)
    : disc_(&disc), rows_(rows), near_(disc, k, rows, near_options) {}

void CorrectedLayerPotentials::apply(std::span<const cplx> double_density,
                                     std::span<const cplx> single_density,
                                     std::span<cplx> y) const {
  const std::size_t n = disc_->size();
  if ((!double_density.empty() && double_density.size() != n) ||
      (!single_density.empty() && single_density.size() != n) || y.size() != rows_.size())
    throw Error("layer potentials: density or result of the wrong size");
  regular_sum(double_density, single_density, y);
  near_.add_to(double_density, single_density, y);
}

}  // namespace fmbem

#include "fmbem/bem/fmm_layer_potentials.hpp"

#include "fmbem/bem/point_strengths.hpp"

namespace fmbem {

FmmLayerPotentials::FmmLayerPotentials(const Discretization& disc, double k, RowRange rows,
                                       const NearFieldOptions& near_options,
                                       const fmm::FmmOptions& fmm_options,
                                       fmm::FmmObserver* observer)
    : CorrectedLayerPotentials(disc, k, rows, near_options), observer_(observer) {
  const std::span<const Vec3> collocation_points = disc.collocation_points();
  const std::span<const Vec3> targets = collocation_points.subspan(rows.begin, rows.size());
  fmm::FmmOptions options = fmm_options;
  options.skip_radius = disc.coincidence_radius();
  // All collocation points split the tree, so that every row block (MPI rank) builds the same
  // one and a leaf holds at most max_leaf elements whatever the number of ranks.
  fmm_ = std::make_unique<fmm::Fmm>(k, disc.quadrature_points(), quadrature_point_normals(disc),
                                    targets, collocation_points, options, observer);
}

void FmmLayerPotentials::regular_sum(std::span<const cplx> double_density,
                                     std::span<const cplx> single_density,
                                     std::span<cplx> y) const {
  const Discretization& disc = discretization();
  fmm_->apply(point_strengths(disc, single_density), point_strengths(disc, double_density), y,
              observer_);
}

}  // namespace fmbem

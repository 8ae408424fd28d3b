#pragma once
#include "fmbem/bem/discretization.hpp"
#include "fmbem/bem/layer_potentials.hpp"
#include "fmbem/bem/near_field.hpp"

namespace fmbem {

// Layer potentials as the regular Gauss-rule sum over all elements plus the
// sparse near-field correction (accurate minus regular for close pairs). The
// backends (direct, FMM) differ only in how they form the regular sum.
class CorrectedLayerPotentials : public LayerPotentials {
 public:
  void apply(std::span<const cplx> double_density, std::span<const cplx> single_density,
             std::span<cplx> y) const final;
  const std::vector<cplx>& single_layer_diagonal() const final {
    return near_.single_layer_diagonal();
  }
  const std::vector<cplx>& double_layer_diagonal() const final {
    return near_.double_layer_diagonal();
  }
  RowRange rows() const final { return rows_; }
  std::size_t columns() const final { return disc_->size(); }
  const NearFieldCorrection& near_field() const { return near_; }

 protected:
  CorrectedLayerPotentials(const Discretization& disc, double k, RowRange rows,
                           const NearFieldOptions& near_options);
  const Discretization& discretization() const { return *disc_; }

 private:
  // y[i - rows().begin] = the regular rule's sum for row i; densities have
  // the right sizes (checked by apply).
  virtual void regular_sum(std::span<const cplx> double_density,
                           std::span<const cplx> single_density, std::span<cplx> y) const = 0;

  const Discretization* disc_;
  RowRange rows_;
  NearFieldCorrection near_;
};

}  // namespace fmbem

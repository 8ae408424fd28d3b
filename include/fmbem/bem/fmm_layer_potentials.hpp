#pragma once
#include <memory>

#include "fmbem/bem/discretization.hpp"
#include "fmbem/bem/layer_potentials.hpp"
#include "fmbem/bem/near_field.hpp"
#include "fmbem/fmm/fmm.hpp"

namespace fmbem {

// Layer potentials with the FMM: the regular Gauss rule over all elements,
// summed by the fast multipole method (far field by expansions, neighbouring
// leaves directly at every MatMult), plus the sparse near-field correction
// for the pairs that need the accurate integrals. O(N) time and memory.
class FmmLayerPotentials final : public LayerPotentials {
 public:
  // observer (may be null) is told of every FMM phase, at set-up and at
  // each apply.
  FmmLayerPotentials(const Discretization& disc, double k, RowRange rows,
                     const NearFieldOptions& near_options, const fmm::FmmOptions& fmm_options,
                     fmm::FmmObserver* observer = nullptr);

  void apply(std::span<const cplx> double_density, std::span<const cplx> single_density,
             std::span<cplx> y) const override;
  const std::vector<cplx>& single_layer_diagonal() const override {
    return near_.single_layer_diagonal();
  }
  const std::vector<cplx>& double_layer_diagonal() const override {
    return near_.double_layer_diagonal();
  }
  RowRange rows() const override { return rows_; }
  std::size_t columns() const override { return disc_->size(); }
  const NearFieldCorrection& near_field() const { return near_; }
  const fmm::Fmm& fmm() const { return *fmm_; }

 private:
  const Discretization* disc_;
  RowRange rows_;
  NearFieldCorrection near_;
  std::unique_ptr<fmm::Fmm> fmm_;
  fmm::FmmObserver* observer_;
};

}  // namespace fmbem

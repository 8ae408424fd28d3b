#pragma once
#include "fmbem/bem/discretization.hpp"
#include "fmbem/bem/layer_potentials.hpp"
#include "fmbem/bem/near_field.hpp"

namespace fmbem {

// Matrix-free O(N^2) layer potentials: the regular Gauss rule summed over
// every quadrature point at every MatMult, plus the near-field correction.
// The reference for the FMM and the backend for small problems.
class DirectLayerPotentials final : public LayerPotentials {
 public:
  DirectLayerPotentials(const Discretization& disc, double k, RowRange rows,
                        const NearFieldOptions& near_options);

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

 private:
  const Discretization* disc_;
  double k_;
  RowRange rows_;
  NearFieldCorrection near_;
  std::vector<Vec3> normals_;  // of the quadrature points
};

}  // namespace fmbem

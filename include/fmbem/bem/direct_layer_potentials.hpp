#pragma once
#include "fmbem/bem/corrected_layer_potentials.hpp"

namespace fmbem {

// Matrix-free O(N^2) layer potentials: the regular Gauss rule summed over
// every quadrature point at every MatMult, plus the near-field correction.
// The reference for the FMM and the backend for small problems.
class DirectLayerPotentials final : public CorrectedLayerPotentials {
 public:
  // An imaginary k: the screened kernel (FmmLayerPotentials).
  DirectLayerPotentials(const Discretization& disc, fmm::Wavenumber k, RowRange rows,
                        const NearFieldOptions& near_options, LayerCoupling coupling = {},
                        DensityModel double_density = DensityModel::constant);

 private:
  void regular_sum(std::span<const cplx> double_density, std::span<const cplx> single_density,
                   std::span<cplx> y) const override;

  fmm::Wavenumber k_;
  std::vector<Vec3> normals_;       // of the quadrature points
  std::vector<std::size_t> order_;  // 0, 1, ...: every quadrature point in element order
};

}  // namespace fmbem

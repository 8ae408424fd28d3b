#pragma once
#include <span>
#include <vector>

#include "fmbem/bem/layer_potentials.hpp"

namespace fmbem {

// A boundary integral operator A = identity I + double_layer D + single_layer S
// (coefficients), e.g. (1/2) I - D for the rigid (Neumann) problem and S for
// the soft (Dirichlet) one. apply() and diagonal() are all the solver needs.
struct OperatorCoefficients {
  cplx identity{}, double_layer{}, single_layer{};
};

class BoundaryOperator {
 public:
  BoundaryOperator(const LayerPotentials& layers, OperatorCoefficients coefficients)
      : layers_(&layers), coefficients_(coefficients) {}

  // y (the rows of this process) = A x, x the density in the layers' columns (LayerPotentials::
  // column_elements: every element, or a part's rows and halo).
  void apply(std::span<const cplx> x, std::span<cplx> y) const;
  std::vector<cplx> diagonal() const;
  RowRange rows() const { return layers_->rows(); }
  std::size_t size() const { return layers_->columns(); }

 private:
  const LayerPotentials* layers_;
  OperatorCoefficients coefficients_;
};

}  // namespace fmbem

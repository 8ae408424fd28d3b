#pragma once
#include <functional>
#include <span>
#include <vector>

#include "fmbem/bem/boundary_operator.hpp"
#include "fmbem/bem/layer_potentials.hpp"

namespace fmbem {

// The regularised Burton-Miller operator (docs/burton-miller.md). The boundary integral equation
// C x = f_C and its normal derivative H x = f_H, per row i
//   C x = c_i x_i + (D a + S b)-part,   H x = d_i x_i + (N a + D' b)-part,
// (the layers' two outputs with the normal derivatives apart, their columns scaled as
// BoundaryOperator's), are combined as
//   (A x)_i = (C x)_i + beta (S~ H x)_i   on the regularised rows (u unknown),
//   (A x)_i = (C x)_i + alpha (H x)_i     on the others (Burton-Miller's, where q is unknown),
// with S~ a single layer (the regulariser: here the Laplace one, positive definite) applied to
// H x as a piecewise-constant density. S~ N is bounded (Calderon: S N = D^2 - 1/4), so the rows
// where u is unknown become a second-kind equation: the iterations stay flat under refinement
// (bench/results/bm_regularised.md), and the exact solution still solves A x = f_C + beta S~ f_H.
struct RegularisedCoefficients {
  // c (the identity) and the layers' column scales, per element or uniform (BoundaryOperator's).
  OperatorCoefficients value;
  // d per element of the mesh (empty: derivative_identity_uniform everywhere).
  std::vector<cplx> derivative_identity;
  cplx derivative_identity_uniform{};
  // Per element of the mesh: whether its row takes beta S~ (empty: every row).
  std::vector<char> regularised;
  cplx alpha{}, beta{};
  bool is_regularised(std::size_t element) const {
    return regularised.empty() || regularised[element] != 0;
  }
  cplx derivative_identity_of(std::size_t element) const {
    return derivative_identity.empty() ? derivative_identity_uniform : derivative_identity[element];
  }
};

class RegularisedOperator final : public SurfaceOperator {
 public:
  // gather(h_rows, h_columns): H x on this process's rows to its values on the regulariser's
  // columns (LayerPotentials::column_elements; a process holding every row: empty gather, a
  // copy). timed(work): runs the regulariser's product (the solver times it apart).
  using Gather = std::function<void(std::span<const cplx> rows, std::span<cplx> columns)>;
  using Timed = std::function<void(const std::function<void()>& work)>;
  // Throws fmbem::Error unless layers give their derivatives apart (LayerCoupling), the
  // regulariser has the layers' rows, or (without a gather) every column is a row.
  RegularisedOperator(const LayerPotentials& layers, const LayerPotentials& regulariser,
                      RegularisedCoefficients coefficients, Gather gather = {}, Timed timed = {});

  void apply(std::span<const cplx> x, std::span<cplx> y) const override;
  // Not formed: S~ H's diagonal is a sum over the whole surface.
  bool has_diagonal() const override { return false; }
  std::vector<cplx> diagonal() const override;
  RowRange rows() const override { return layers_->rows(); }
  std::size_t size() const override { return layers_->columns(); }

  // The right-hand side f_C + beta S~ f_H on the regularised rows, f_C + alpha f_H elsewhere,
  // from the two parts on this process's rows.
  std::vector<cplx> right_hand_side(std::span<const cplx> value,
                                    std::span<const cplx> derivative) const;

 private:
  // y = f_C + beta S~ h (regularised rows) or f_C + alpha h: the combination of both.
  void combine(std::span<const cplx> value, std::span<const cplx> h, std::span<cplx> y) const;
  const LayerPotentials* layers_;
  const LayerPotentials* regulariser_;
  RegularisedCoefficients coefficients_;
  Gather gather_;
  Timed timed_;
  std::vector<cplx> column_double_, column_single_, row_value_identity_, row_derivative_identity_;
  std::vector<char> row_regularised_;
  std::uint64_t scales_id_ = 0;
};

}  // namespace fmbem

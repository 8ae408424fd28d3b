#pragma once
#include <memory>
#include <span>
#include <vector>

#include "fmbem/bem/layer_potentials.hpp"

namespace fmbem {

// Per element of the layers' mesh, the coefficients of a mixed problem: the identity's of the
// element's row, and the double and single layers' of its column (the unknown is u on some
// elements, q on others, and q = beta u on an admittance: each column feeds its own layers).
struct ElementCoefficients {
  std::vector<cplx> identity, double_layer, single_layer;
};

// A boundary integral operator A = identity I + double_layer D + single_layer S
// (coefficients), e.g. (1/2) I - D for the rigid (Neumann) problem and S for
// the soft (Dirichlet) one; or, with per_element, row i's identity and column j's layers those
// of elements i and j (the uniform three are then unused). apply() and diagonal() are all the
// solver needs.
struct OperatorCoefficients {
  cplx identity{}, double_layer{}, single_layer{};
  std::shared_ptr<const ElementCoefficients> per_element;

  cplx identity_of(std::size_t element) const {
    return per_element ? per_element->identity[element] : identity;
  }
  cplx double_layer_of(std::size_t element) const {
    return per_element ? per_element->double_layer[element] : double_layer;
  }
  cplx single_layer_of(std::size_t element) const {
    return per_element ? per_element->single_layer[element] : single_layer;
  }
  // Whether any column feeds the double (single) layer: a layer nobody feeds is not applied.
  bool uses_double_layer() const;
  bool uses_single_layer() const;
  // Throws fmbem::Error unless per_element (if any) holds at least `elements` entries in each
  // array, the same number in all three.
  void check_size(std::size_t elements) const;
};

// An operator on the surface's densities as the solver applies it: y (the rows of this process)
// = A x, x the density in the layers' columns (LayerPotentials::column_elements: every element,
// or a part's rows and halo).
class SurfaceOperator {
 public:
  virtual ~SurfaceOperator() = default;
  virtual void apply(std::span<const cplx> x, std::span<cplx> y) const = 0;
  // Whether diagonal() gives the operator's diagonal (else it throws fmbem::Error).
  virtual bool has_diagonal() const { return true; }
  virtual std::vector<cplx> diagonal() const = 0;
  virtual RowRange rows() const = 0;
  virtual std::size_t size() const = 0;
};

class BoundaryOperator final : public SurfaceOperator {
 public:
  // Throws fmbem::Error when per-element coefficients miss an element the layers read, or when
  // the layers give their normal derivatives apart (RegularisedOperator reads those).
  BoundaryOperator(const LayerPotentials& layers, OperatorCoefficients coefficients);

  void apply(std::span<const cplx> x, std::span<cplx> y) const override;
  std::vector<cplx> diagonal() const override;
  RowRange rows() const override { return layers_->rows(); }
  std::size_t size() const override { return layers_->columns(); }

 private:
  std::size_t column_element(std::size_t j) const {
    const std::span<const std::size_t> elements = layers_->column_elements();
    return elements.empty() ? j : elements[j];
  }
  const LayerPotentials* layers_;
  OperatorCoefficients coefficients_;
  // The layers' coefficients in the columns' order (empty: the layer unused) and the rows'
  // identities (empty: the uniform one).
  std::vector<cplx> column_double_, column_single_, row_identity_;
  std::uint64_t scales_id_ = 0;  // LayerPotentials::apply_columns' id of those scales
};

}  // namespace fmbem

#include "fmbem/bem/boundary_operator.hpp"

#include <algorithm>

#include "fmbem/core/error.hpp"

namespace fmbem {

bool OperatorCoefficients::uses_double_layer() const {
  if (!per_element) return double_layer != cplx(0.0);
  return std::any_of(per_element->double_layer.begin(), per_element->double_layer.end(),
                     [](cplx c) { return c != cplx(0.0); });
}

bool OperatorCoefficients::uses_single_layer() const {
  if (!per_element) return single_layer != cplx(0.0);
  return std::any_of(per_element->single_layer.begin(), per_element->single_layer.end(),
                     [](cplx c) { return c != cplx(0.0); });
}

void OperatorCoefficients::check_size(std::size_t elements) const {
  if (per_element && (per_element->identity.size() < elements ||
                      per_element->double_layer.size() != per_element->identity.size() ||
                      per_element->single_layer.size() != per_element->identity.size()))
    throw Error("operator coefficients: one per element of the mesh expected");
}

BoundaryOperator::BoundaryOperator(const LayerPotentials& layers, OperatorCoefficients coefficients)
    : layers_(&layers), coefficients_(std::move(coefficients)) {
  const std::span<const std::size_t> elements = layers.column_elements();
  std::size_t read = std::max(layers.rows().end, elements.empty() ? layers.columns() : 0);
  if (!elements.empty()) read = std::max(read, elements.back() + 1);
  coefficients_.check_size(read);
}

void BoundaryOperator::apply(std::span<const cplx> x, std::span<cplx> y) const {
  const OperatorCoefficients& c = coefficients_;
  const auto scaled = [&](bool used, auto factor) {
    std::vector<cplx> v;
    if (used) {
      v.resize(x.size());
      for (std::size_t j = 0; j < x.size(); ++j) v[j] = factor(j) * x[j];
    }
    return v;
  };
  const std::vector<cplx> double_density = scaled(
      c.uses_double_layer(), [&](std::size_t j) { return c.double_layer_of(column_element(j)); });
  const std::vector<cplx> single_density = scaled(
      c.uses_single_layer(), [&](std::size_t j) { return c.single_layer_of(column_element(j)); });
  if (double_density.empty() && single_density.empty())
    std::fill(y.begin(), y.end(), cplx(0.0));
  else
    layers_->apply(double_density, single_density, y);
  const RowRange rows = layers_->rows();
  const std::size_t first = layers_->first_row_column();
  for (std::size_t r = 0; r < rows.size(); ++r)
    y[r] += c.identity_of(rows.begin + r) * x[first + r];
}

std::vector<cplx> BoundaryOperator::diagonal() const {
  const auto& s = layers_->single_layer_diagonal();
  const auto& d = layers_->double_layer_diagonal();
  const RowRange rows = layers_->rows();
  std::vector<cplx> diag(s.size());
  for (std::size_t r = 0; r < diag.size(); ++r) {
    const std::size_t e = rows.begin + r;
    diag[r] = coefficients_.identity_of(e) + coefficients_.double_layer_of(e) * d[r] +
              coefficients_.single_layer_of(e) * s[r];
  }
  return diag;
}

}  // namespace fmbem

#include "fmbem/bem/boundary_operator.hpp"

#include <algorithm>
#include <atomic>

#include "fmbem/core/error.hpp"

namespace fmbem {

void LayerPotentials::apply_columns(std::span<const cplx> x, std::span<const cplx> double_scale,
                                    std::span<const cplx> single_scale, std::span<cplx> y,
                                    std::uint64_t) const {
  const auto scaled = [&](std::span<const cplx> scale) {
    std::vector<cplx> v(scale.empty() ? 0 : x.size());
    const std::ptrdiff_t n = std::ptrdiff_t(v.size());
#pragma omp parallel for schedule(static)
    for (std::ptrdiff_t j = 0; j < n; ++j)
      v[std::size_t(j)] = scale[std::size_t(j)] * x[std::size_t(j)];
    return v;
  };
  apply(scaled(double_scale), scaled(single_scale), y);
}

namespace {

bool any_nonzero(const std::vector<cplx>& values) {
  return std::any_of(values.begin(), values.end(), [](cplx c) { return c != cplx(0.0); });
}

}  // namespace

bool OperatorCoefficients::uses_double_layer() const {
  return per_element ? any_nonzero(per_element->double_layer) : double_layer != cplx(0.0);
}

bool OperatorCoefficients::uses_single_layer() const {
  return per_element ? any_nonzero(per_element->single_layer) : single_layer != cplx(0.0);
}

void OperatorCoefficients::check_size(std::size_t elements) const {
  if (per_element && (per_element->identity.size() < elements ||
                      per_element->double_layer.size() != per_element->identity.size() ||
                      per_element->single_layer.size() != per_element->identity.size()))
    throw Error("operator coefficients: one per element of the mesh expected");
}

BoundaryOperator::BoundaryOperator(const LayerPotentials& layers, OperatorCoefficients coefficients)
    : layers_(&layers), coefficients_(std::move(coefficients)) {
  if (layers.outputs() != 1)
    throw Error("boundary operator: the layers give their normal derivatives apart");
  const std::span<const std::size_t> elements = layers.column_elements();
  std::size_t read = std::max(layers.rows().end, elements.empty() ? layers.columns() : 0);
  if (!elements.empty()) read = std::max(read, elements.back() + 1);
  coefficients_.check_size(read);
  static std::atomic<std::uint64_t> operators{0};
  scales_id_ = ++operators;
  // The layers' coefficients laid out in the columns' order once (uniform ones too): a MatMult
  // scales x by one contiguous array per layer, on the GPU where the layers live there.
  const bool uses_double = coefficients_.uses_double_layer(),
             uses_single = coefficients_.uses_single_layer();
  const std::size_t n = layers.columns();
  if (uses_double) column_double_.resize(n);
  if (uses_single) column_single_.resize(n);
  for (std::size_t j = 0; j < n; ++j) {
    const std::size_t e = column_element(j);
    if (uses_double) column_double_[j] = coefficients_.double_layer_of(e);
    if (uses_single) column_single_[j] = coefficients_.single_layer_of(e);
  }
  if (coefficients_.per_element) {
    const RowRange rows = layers.rows();
    row_identity_.resize(rows.size());
    for (std::size_t r = 0; r < rows.size(); ++r)
      row_identity_[r] = coefficients_.identity_of(rows.begin + r);
  }
}

void BoundaryOperator::apply(std::span<const cplx> x, std::span<cplx> y) const {
  if (column_double_.empty() && column_single_.empty())
    std::fill(y.begin(), y.end(), cplx(0.0));
  else
    layers_->apply_columns(x, column_double_, column_single_, y, scales_id_);
  const std::ptrdiff_t rows = std::ptrdiff_t(layers_->rows().size());
  const std::size_t first = layers_->first_row_column();
  const cplx identity = coefficients_.identity;
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t r = 0; r < rows; ++r)
    y[std::size_t(r)] += (row_identity_.empty() ? identity : row_identity_[std::size_t(r)]) *
                         x[first + std::size_t(r)];
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
